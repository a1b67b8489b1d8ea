import * as Fs from "node:fs"
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import ajvFormats from "ajv-formats"
import { Effect } from "effect"
import { get, type RawResponse, raw } from "./http.js"

/**
 * Agentic Commerce Protocol test helpers (docs/agent-protocols.md): requests with the protocol's headers, and
 * validation against its official 2026-04-17 JSON Schema. The schema files are the protocol's own (Apache-2.0, with
 * their LICENSE and NOTICE) and are not copied into this repository: they are read from the folder `ACP_SCHEMA_DIR`
 * names (the protocol repository's `spec/2026-04-17/json-schema`). Without it nothing is validated, and each test
 * file's conformance test is reported skipped while every other assertion still runs.
 */

export const schemaDir = process.env.ACP_SCHEMA_DIR ?? ""
export const schemaFile = `${schemaDir}/schema.agentic_checkout.json`
export const schemaAvailable = Fs.existsSync(schemaFile) && Fs.existsSync(`${schemaDir}/LICENSE`)
const ajv = new Ajv2020({ strict: false, allErrors: true })
ajvFormats.default(ajv)
/**
 * The protocol's bundles at hand, by file: the checkout one, and delegate_payment's and the extensions framework's
 * when the folder has them.
 */
const bundles = new Map<string, { $id: string }>()
for (const name of ["agentic_checkout", "delegate_payment", "extension"]) {
  const file = `${schemaDir}/schema.${name}.json`
  if (!schemaAvailable || !Fs.existsSync(file)) continue
  const bundle = JSON.parse(Fs.readFileSync(file, "utf8"))
  ajv.addSchema(bundle)
  bundles.set(name, bundle)
}
/** Whether the folder has the delegate_payment schema too (the checkout schema alone validates sessions). */
export const delegateSchemaAvailable = bundles.has("delegate_payment")
/** Whether the folder has the extensions framework's schema too. */
export const extensionSchemaAvailable = bundles.has("extension")

/** Ribbon's gift extension schema: the repository's own, so always at hand. */
export const giftSchema = JSON.parse(Fs.readFileSync("docs/extensions/gift.schema.json", "utf8"))
const giftAjv = new Ajv2020({ strict: false, allErrors: true })
ajvFormats.default(giftAjv)
giftAjv.addSchema(giftSchema)
/** Whether `value` is valid against `$defs/<name>` of the gift extension's schema, and why not. */
export const giftValid = (name: "gift" | "recipient", value: unknown) => {
  const validate = giftAjv.getSchema(`${giftSchema.$id}#/$defs/${name}`)!
  return { valid: validate(value) as boolean, errors: validate.errors }
}

let validated = 0
/** How many objects were validated against the protocol's schema, for a conformance test to see. */
export const validatedCount = () => validated

/** Asserts `value` is valid against `$defs/<name>` of the protocol's bundle `file` (when that is at hand). */
export const conforms = (
  name: string,
  value: unknown,
  file: "agentic_checkout" | "delegate_payment" | "extension" = "agentic_checkout"
) => {
  const bundle = bundles.get(file)
  if (bundle === undefined) return
  const validate = ajv.getSchema(`${bundle.$id}#/$defs/${name}`)
  if (validate === undefined) throw new Error(`No $defs/${name} in the ACP schema ${file}`)
  const valid = validate(value)
  expect(valid, `${name}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value)}`).toBe(true)
  validated++
}

/**
 * Asserts an object of `$defs/<name>` with the gift extension's `gift` field conforms: the protocol's schema admits
 * no field it does not define, so the object without `gift` is checked against it, and `gift` against the extension's.
 */
export const conformsWithGift = (name: string, value: unknown) => {
  const { gift, ...base } = value as { gift?: unknown }
  conforms(name, base)
  if (gift === undefined) return
  const { valid, errors } = giftValid("gift", gift)
  expect(valid, `gift: ${JSON.stringify(errors)}\n${JSON.stringify(gift)}`).toBe(true)
}

/** How many rows `table` has. */
export const rowCount = (table: "acp_checkout_sessions" | "quotes" | "acp_idempotency_keys") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`, ([row]) => row!.n)
  )
/** The rows a refused request must not leave: sessions, and quotes pricing them. */
export const writtenRows = Effect.all([rowCount("acp_checkout_sessions"), rowCount("quotes")])

export const VERSION = "2026-04-17"
let keys = 0
export const newKey = () => `key-${Date.now()}-${++keys}`

/** A POST to `path` with the protocol's headers, its body checked against `requestSchema` first (none: a bad body on purpose). */
export const acpPost = (
  path: string,
  body: unknown,
  options: { readonly requestSchema?: string; readonly key?: string | null; readonly version?: string | null } = {}
) =>
  Effect.gen(function* () {
    if (options.requestSchema !== undefined) conforms(options.requestSchema, body)
    const headers: Record<string, string> = {}
    const version = options.version === undefined ? VERSION : options.version
    if (version !== null) headers["api-version"] = version
    const key = options.key === undefined ? newKey() : options.key
    if (key !== null) headers["idempotency-key"] = key
    return yield* raw(
      HttpClientRequest.post(path).pipe(
        HttpClientRequest.setHeaders(headers),
        HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
      )
    )
  })

/** A checkout session as it now is. */
export const readSession = (id: string) => get(`/acp/checkout_sessions/${id}`, { "api-version": VERSION })

/** An error response: the protocol's Error object, with its type and code. */
export const expectError = (response: RawResponse, status: number, code: string) => {
  expect(response.status, response.text).toBe(status)
  conforms("Error", response.body)
  expect(response.body).toMatchObject({ type: "invalid_request", code })
}

export const address = {
  name: "Ada Lovelace",
  line_one: "10 Downing Street",
  city: "London",
  state: "",
  country: "GB",
  postal_code: "SW1A 2AA"
}
export const details = { name: "Ada Lovelace", phone_number: "+44 20 7946 0958", email: "ada@example.com", address }

/** The simulator's test card that delegated payment tokenizes. */
export const CARD = "4242424242424242"
/** A `delegate_payment` body for the simulator's test card, its allowance bound by `allowance`. */
export const delegation = (allowance: { max_amount: number; checkout_session_id: string; expires_at?: string }) => ({
  payment_method: {
    type: "card",
    card_number_type: "fpan",
    number: CARD,
    exp_month: "12",
    exp_year: "2034",
    name: "Ada Lovelace",
    cvc: "123",
    checks_performed: ["cvv"],
    display_card_funding_type: "credit",
    display_brand: "visa",
    display_last4: "4242",
    metadata: {}
  },
  allowance: {
    reason: "one_time",
    currency: "gbp",
    merchant_id: "ribbon",
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    ...allowance
  },
  risk_signals: [{ type: "card_testing", score: 5, action: "authorized" }],
  metadata: { campaign: "q4" }
})
/** How many rows `table` holds. */
export const countOf = (table: "acp_checkout_sessions" | "quotes" | "acp_idempotency_keys" | "checkouts") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`, ([row]) => row!.n)
  )

/** How many sessions and quotes there are: a refused request (ACP or UCP) must leave both as they were. */
export const sessionRows = Effect.all([countOf("acp_checkout_sessions"), countOf("quotes")])
