import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import SwaggerParser from "@apidevtools/swagger-parser"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestDatabase } from "../../support/database.js"
import { get, serveRibbon } from "../../support/http.js"
import { documentValidator } from "../../support/openapi.js"

/** The document as `npm start` serves it by default (PUBLIC_URL http://localhost:3000). */
const DefaultServer = serveRibbon(TestDatabase, "http://localhost:3000")

/** Redocly's verdict on a document, with the recommended rules and the exceptions in redocly.yaml. */
const redoclyLint = (document: unknown) =>
  Effect.promise(async () => {
    const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-openapi-"))
    const file = Path.join(directory, "openapi.json")
    Fs.writeFileSync(file, JSON.stringify(document))
    const cli = Path.resolve("node_modules/@redocly/cli/bin/cli.js")
    const run = await promisify(execFile)(
      process.execPath,
      [cli, "lint", file, "--format=json", "--config", Path.resolve("redocly.yaml")],
      { maxBuffer: 64 * 1024 * 1024 }
    ).catch((failed: { stdout: string }) => failed)
    Fs.rmSync(directory, { recursive: true, force: true })
    const report = JSON.parse(run.stdout) as {
      readonly problems: ReadonlyArray<{ readonly ruleId: string; readonly severity: string; readonly message: string }>
    }
    return report.problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message}`)
  })

describe("the OpenAPI document", () => {
  it.layer(DefaultServer)((it) => {
    it.effect("is the committed docs/openapi.json, byte for byte", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/openapi.json")
        yield* Effect.promise(() =>
          expect(`${JSON.stringify(body, null, 2)}\n`).toMatchFileSnapshot("../../../docs/openapi.json")
        )
      })
    )

    it.effect("names the public URL as its server and has a license", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/openapi.json")
        expect(body.servers).toEqual([{ url: "http://localhost:3000", description: "This server" }])
        expect(body.info.license.name).toBeTruthy()
      })
    )

    it.effect("passes swagger-parser's validation", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/openapi.json")
        expect(body.openapi).toMatch(/^3\.1\./)
        const validated = yield* Effect.promise(() => SwaggerParser.validate(structuredClone(body)))
        expect(validated.info.title).toBe("Ribbon")
      })
    )

    it.effect("passes Redocly's recommended rules with no error and no warning", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/openapi.json")
        expect(yield* redoclyLint(body)).toEqual([])
      })
    )

    it.effect("has component schemas that Ajv (JSON Schema 2020-12) compiles, every one", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/openapi.json")
        const validator = documentValidator(body)
        const names = Object.keys(body.components.schemas)
        expect(names.length).toBeGreaterThan(100)
        for (const name of names) {
          expect(validator.schema(`#/components/schemas/${name}`), name).toBeTypeOf("function")
        }
      })
    )

    it.effect("declares numeric query parameters as integers, and every header the API lines use", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/openapi.json")
        const parameter = (path: string, name: string) =>
          body.paths[path].get.parameters.find((p: { name: string }) => p.name === name)
        expect(parameter("/v1/search", "limit").schema).toMatchObject({ type: "integer", minimum: 1, maximum: 50 })
        expect(parameter("/v1/orders", "limit").schema.type).toBe("integer")
        expect(parameter("/public-api/v3/authentication/api-keys", "page[size]").schema.type).toBe("integer")

        const keys = body.paths["/public-api/v3/authentication/api-keys"].get
        expect(keys.parameters).toContainEqual({ $ref: "#/components/parameters/RibbonAccountId" })
        expect(keys.parameters).toContainEqual({ $ref: "#/components/parameters/RequestSource" })
        expect(Object.keys(keys.responses["429"].headers)).toEqual(
          expect.arrayContaining(["Retry-After", "RateLimit", "RateLimit-Policy", "X-Request-Id"])
        )
        const me = body.paths["/v1/me"].get
        expect(Object.keys(me.responses["401"].headers)).toContain("WWW-Authenticate")
        const checkout = body.paths["/v1/checkouts"].post
        expect(Object.keys(checkout.responses["201"].headers)).toContain("Idempotent-Replayed")
      })
    )

    it.effect("marks a body with no required field as optional, as the server takes it (absent = {})", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/openapi.json")
        expect(body.paths["/public-api/v3/orders/{orderId}/cancel"].post.requestBody.required).toBe(false)
        expect(body.paths["/public-api/v3/orders"].post.requestBody.required).toBe(true)
        expect(body.paths["/v1/checkouts"].post.requestBody.required).toBe(true)
      })
    )

    it.effect("declares every /v1 error as problem+json, and the errors every operation may meet", () =>
      Effect.gen(function* () {
        const { body, text } = yield* get("/openapi.json")
        expect(text).not.toContain("HttpApiDecodeError")
        for (const [path, operations] of Object.entries<Record<string, any>>(body.paths)) {
          for (const operation of Object.values(operations)) {
            for (const status of ["400", "500", "503"])
              expect(operation.responses[status], `${path} ${status}`).toBeDefined()
            if (operation.requestBody !== undefined) expect(operation.responses["413"]).toBeDefined()
            if (!path.startsWith("/v1")) continue
            for (const [status, response] of Object.entries<any>(operation.responses)) {
              if (Number(status) >= 400)
                expect(Object.keys(response.content), `${path} ${status}`).toEqual(["application/problem+json"])
            }
          }
        }
      })
    )
  })
})
