import * as Fs from "node:fs"
import { describe, expect, it } from "vitest"
import { acpToolSpecs } from "../../../src/http/mcp/AcpTools.js"
import { confirmationRule, mcpTools, toolTableMarkdown, waitToolName } from "../../../src/http/mcp/McpTools.js"
import { ucpToolSpecs } from "../../../src/http/mcp/UcpTools.js"
import { agentOperations } from "../../../src/http/Operations.js"

/**
 * docs/mcp.md lists the tools as the code derives them, and the tools follow the operations the manifest
 * publishes: same names, scopes and classes, every one with a title and honest annotations.
 */

const doc = Fs.readFileSync(new URL("../../../docs/mcp.md", import.meta.url), "utf8")

describe("MCP tools", () => {
  it("docs/mcp.md shows the tool table generated from the annotations", () => {
    const table = /<!-- tools:start -->\n([\s\S]*?)\n<!-- tools:end -->/.exec(doc)?.[1]
    expect(table).toBe(toolTableMarkdown())
  })

  it("are the agent operations (the event stream replaced by the waiting tool), with their scope and class, and the protocols' five each", () => {
    const operations = new Map(agentOperations.map((operation) => [operation.name, operation]))
    expect(mcpTools.map((tool) => tool.name)).toEqual([
      ...agentOperations.map((operation) => operation.name).filter((name) => name !== "checkoutEvents"),
      waitToolName,
      ...acpToolSpecs.map((tool) => tool.name),
      ...ucpToolSpecs.map((tool) => tool.name)
    ])
    for (const tool of mcpTools) {
      const operation =
        tool.binding !== undefined
          ? {
              scope: "orders:write",
              toolClass: [...acpToolSpecs, ...ucpToolSpecs].find((spec) => spec.name === tool.name)!.toolClass
            }
          : (operations.get(tool.name) ?? operations.get("getCheckout")!)
      expect([tool.scope, tool.toolClass], tool.name).toEqual([operation.scope, operation.toolClass])
      expect(tool.title.length, tool.name).toBeGreaterThan(3)
      expect(tool.annotations).toMatchObject({
        title: tool.title,
        readOnlyHint: tool.toolClass === "read",
        destructiveHint: tool.toolClass === "sensitive-write",
        openWorldHint: false
      })
      expect(tool.description.includes(confirmationRule), tool.name).toBe(tool.toolClass === "sensitive-write")
      expect(tool.inputSchema.type).toBe("object")
      // Every argument has a place in the request (path, query or body), except the waiting tool's and ACP's.
      if (tool.operation !== undefined && tool.binding === undefined) {
        expect([...tool.places.keys()].sort(), tool.name).toEqual(
          Object.keys(tool.inputSchema.properties as object).sort()
        )
      }
      // Schemas MCP clients can compile: no meta-schema and no ids, and no reference left dangling.
      const text = JSON.stringify([tool.inputSchema, tool.outputSchema])
      expect(text).not.toContain('"$schema"')
      expect(text).not.toContain('"$id"')
      for (const [, name] of text.matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g)) {
        const defs = { ...(tool.inputSchema.$defs as object), ...(tool.outputSchema?.$defs as object) }
        expect(defs, `${tool.name} refers to ${name}`).toHaveProperty([name!])
      }
    }
  })
})
