import * as Fs from "node:fs"
import * as Path from "node:path"
import { HttpClientRequest } from "@effect/platform"
import { expect } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import ajvFormats from "ajv-formats"
import { type RawResponse, raw } from "./http.js"

/**
 * Universal Commerce Protocol test helpers (docs/agent-protocols.md): requests with `UCP-Agent`, and validation
 * against the protocol's 2026-04-08 JSON Schemas, which are the protocol's own (Apache-2.0) and not copied into this
 * repository: they are read from the folder `UCP_SCHEMA_DIR` names (the release's `source/` folder, with its LICENSE
 * beside it). Without it nothing is validated, and each test file's conformance test is reported skipped while every
 * other assertion still runs.
 */

export const schemaDir = process.env.UCP_SCHEMA_DIR ?? ""
const PROFILE_ID = "https://ucp.dev/discovery/profile.json"
export const schemaAvailable = Fs.existsSync(`${schemaDir}/schemas/shopping/checkout.json`)
const ajv = new Ajv2020({ strict: false, allErrors: true })
ajvFormats.default(ajv)
if (schemaAvailable) {
  for (const file of Fs.readdirSync(schemaDir, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".json")) continue
    const schema = JSON.parse(Fs.readFileSync(Path.join(schemaDir, file), "utf8"))
    // The service definitions (OpenAPI, OpenRPC) beside the schemas are no JSON Schemas.
    if (typeof schema.$id !== "string") continue
    // The release's profile schema names its `$id` one folder deeper than its `../schemas/ucp.json` reference
    // assumes (the file sits in `source/discovery/`): it is loaded under the id its references resolve from.
    if (file === Path.join("discovery", "profile_schema.json")) schema.$id = PROFILE_ID
    ajv.addSchema(schema)
  }
}
let validated = 0
/** How many objects were validated against the protocol's schemas, for a conformance test to see. */
export const validatedCount = () => validated

/** Asserts `value` is valid against the schema `ref` (when the schemas are at hand). */
export const conforms = (ref: string, value: unknown) => {
  if (!schemaAvailable) return
  const validate = ajv.getSchema(ref)
  if (validate === undefined) throw new Error(`No schema ${ref}`)
  expect(validate(value), `${ref}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value)}`).toBe(true)
  validated++
}
/** A checkout with the fulfillment extension Ribbon answers with. */
export const CHECKOUT = "https://ucp.dev/schemas/shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout"
export const PROFILE = `${PROFILE_ID}#/$defs/business_profile`

export const VERSION = "2026-04-08"
export const AGENT = 'profile="https://platform.example/.well-known/ucp"'

/** A `/ucp` request with `UCP-Agent` (`agent`: null for none) and any other `headers`. */
export const send = (
  method: "GET" | "POST" | "PUT",
  path: string,
  body?: unknown,
  agent: string | null = AGENT,
  headers: Record<string, string> = {}
) => {
  const base =
    method === "GET"
      ? HttpClientRequest.get(`/ucp${path}`)
      : method === "PUT"
        ? HttpClientRequest.put(`/ucp${path}`)
        : HttpClientRequest.post(`/ucp${path}`)
  const withAgent = HttpClientRequest.setHeaders(base, agent === null ? headers : { ...headers, "ucp-agent": agent })
  return raw(
    body === undefined ? withAgent : HttpClientRequest.bodyText(withAgent, JSON.stringify(body), "application/json")
  )
}

/** Asserts `response` is the protocol's error `{code, content}` with `status`. */
export const expectUcpError = (response: RawResponse, status: number, code: string) => {
  expect(response.status, response.text).toBe(status)
  expect(response.body).toMatchObject({ code, content: expect.any(String) })
}

/** A shipping destination in London, as a UCP fulfillment method names it. */
export const londonDestination = {
  first_name: "Ada",
  last_name: "Lovelace",
  phone_number: "+44 20 7946 0958",
  street_address: "10 Downing Street",
  address_locality: "London",
  address_region: "",
  address_country: "GB",
  postal_code: "SW1A 2AA"
}
export const buyer = { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" }

export { countOf } from "./acp.js"
