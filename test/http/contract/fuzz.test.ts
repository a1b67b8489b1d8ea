import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { issueTestToken } from "../../support/auth.js"
import { createCompany, raiseLimits } from "../../support/company.js"
import { get, RibbonTestServer, raw } from "../../support/http.js"
import { documentValidator } from "../../support/openapi.js"

/**
 * Malformed requests generated from the served OpenAPI document, for every operation, with a valid bearer
 * token and a valid API key: hostile path and query values, bodies of the wrong shape, type or size, NUL
 * bytes, deep JSON, malformed JSON and the wrong media types. Whatever comes back must be a declared
 * response in its line's documented format, never a 5xx, and nothing may be written to the database.
 */

const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000)
const runsPerOperation = Number(process.env.FUZZ_RUNS ?? 60)

interface Operation {
  readonly method: string
  readonly path: string
  readonly spec: Record<string, any>
}

interface FuzzRequest {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body?: { readonly text: string; readonly contentType: string }
}

/** Percent-encodes a string's UTF-8 bytes (lone surrogates become U+FFFD, as a client would send them). */
const encode = (value: string) =>
  [...Buffer.from(value, "utf8")]
    .map((byte) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).padStart(2, "0")}`
    )
    .join("")

/** Path and query values, already percent-encoded: random text, NUL bytes, invalid UTF-8, the huge and the empty. */
const hostileEncoded: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }).map(encode),
  fc.string({ minLength: 200, maxLength: 3000 }).map(encode),
  fc.constantFrom(
    "%00",
    "a%00b",
    "%FF",
    "%C3%28",
    "%E0%80%80",
    "%ED%A0%80",
    "%",
    "%zz",
    "-1",
    "1e309",
    "0",
    "99999999999999999999",
    "true",
    "null",
    "%20",
    "..%2F..%2Fetc%2Fpasswd"
  )
)

/** JSON values of the wrong type, size or content for any field. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ minLength: 300, maxLength: 5000 }),
  fc.constantFrom("a\u0000b", "\u0000", "", " ", "\ud800", "-1", "1e309"),
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, 0, 1.5, Number.MAX_SAFE_INTEGER, 1e300, true, false, null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
)

/** A schema with its `$ref` followed into the document. */
const resolve = (document: Record<string, any>, schema: Record<string, any> | undefined): Record<string, any> => {
  if (schema?.$ref === undefined) return schema ?? {}
  const pointer = (schema.$ref as string).replace(/^#\//, "").split("/")
  return resolve(
    document,
    pointer.reduce((node: any, key) => node?.[key], document)
  )
}

/** The property names a body schema declares (through `anyOf` alternatives too). */
const propertiesOf = (document: Record<string, any>, schema: Record<string, any> | undefined): Array<string> => {
  const resolved = resolve(document, schema)
  const own = Object.keys(resolved.properties ?? {})
  const alternatives = [...(resolved.anyOf ?? []), ...(resolved.oneOf ?? [])].flatMap((s: any) =>
    propertiesOf(document, s)
  )
  return [...new Set([...own, ...alternatives])]
}

const jsonBody = (value: unknown) => ({ text: JSON.stringify(value), contentType: "application/json" })

/** Every malformed request this suite sends to one operation. */
const requestsFor = (document: Record<string, any>, operation: Operation, auth: Record<string, string>) => {
  const parameters: Array<Record<string, any>> = (operation.spec.parameters ?? []).map((p: any) => resolve(document, p))
  const pathNames = parameters.filter((p) => p.in === "path").map((p) => p.name as string)
  const queryNames = parameters.filter((p) => p.in === "query").map((p) => p.name as string)
  const headerNames = parameters.filter((p) => p.in === "header").map((p) => p.name as string)
  const content: Record<string, any> = operation.spec.requestBody?.content ?? {}
  const mediaTypes = Object.keys(content)
  const bodyFields = mediaTypes.flatMap((mediaType) => propertiesOf(document, content[mediaType].schema))

  // An empty id is another path (`/v1/products/`), which no operation has.
  const pathValue = hostileEncoded.filter((value) => value !== "")
  const path = fc
    .record(Object.fromEntries(pathNames.map((name) => [name, pathValue])))
    .map((values) => operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? "x"))
  const query = fc
    .array(fc.tuple(fc.constantFrom(...queryNames, "unknown", "page[size]"), hostileEncoded), { maxLength: 4 })
    .map((pairs) => (pairs.length === 0 ? "" : `?${pairs.map(([k, v]) => `${encode(k)}=${v}`).join("&")}`))
  const headers = fc
    .array(
      fc.tuple(
        fc.constantFrom(...headerNames, "x-request-id"),
        fc.string({ unit: "grapheme-ascii", maxLength: 300 }).map((v) => v.replace(/[^\x20-\x7e]/g, ""))
      ),
      { maxLength: 2 }
    )
    .map((pairs) => Object.fromEntries(pairs))

  const wellFormedShape = fc
    .record(Object.fromEntries(bodyFields.map((field) => [field, hostileValue])), { requiredKeys: [] })
    .map(jsonBody)
  const body: fc.Arbitrary<FuzzRequest["body"]> =
    mediaTypes.length === 0
      ? fc.constant(undefined)
      : fc.oneof(
          wellFormedShape,
          fc.jsonValue({ maxDepth: 3 }).map(jsonBody),
          fc.constant(jsonBody({})),
          fc.constant({ text: `${"[".repeat(5000)}${"]".repeat(5000)}`, contentType: "application/json" }),
          fc.constantFrom('{"a":', "{'a':1}", "\u0000", "", "null", "[]").map((text) => ({
            text,
            contentType: "application/json"
          })),
          fc
            .record(Object.fromEntries(bodyFields.map((field) => [field, hostileEncoded])), { requiredKeys: [] })
            .map((fields) => ({
              text: Object.entries(fields)
                .map(([k, v]) => `${encode(k)}=${v}`)
                .join("&"),
              contentType: "application/x-www-form-urlencoded"
            })),
          fc.constantFrom(
            {
              text: "--x\r\nContent-Disposition: form-data\r\n\r\ngarbage",
              contentType: "multipart/form-data; boundary=x"
            },
            { text: "<a/>", contentType: "application/xml" },
            { text: "hello", contentType: "text/plain" }
          )
        )

  return fc.record({ path, query, headers, body }).map(
    ({ path, query, headers, body }): FuzzRequest => ({
      method: operation.method.toUpperCase(),
      url: `${path}${query}`,
      headers: { ...auth, ...headers },
      ...(body === undefined ? {} : { body })
    })
  )
}

const send = (request: FuzzRequest) => {
  let built = HttpClientRequest.make(request.method as "GET")(request.url).pipe(
    HttpClientRequest.setHeaders(request.headers)
  )
  if (request.body !== undefined) built = HttpClientRequest.bodyText(built, request.body.text, request.body.contentType)
  return raw(built)
}

const tableCounts = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ readonly tableName: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
    ORDER BY table_name`
  const counts: Record<string, number> = {}
  for (const { tableName } of tables) {
    const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(tableName)}`
    counts[tableName] = row!.n
  }
  return counts
}).pipe(Effect.orDie)

describe(`malformed requests to every operation (seed ${seed}, FUZZ_SEED to replay)`, () => {
  it.layer(RibbonTestServer)((it) => {
    it.effect(
      "are never a 5xx, always a declared response in the line's format, and write nothing",
      () =>
        Effect.gen(function* () {
          console.log(`fuzz seed: ${seed}`)
          const { body: document } = yield* get("/openapi.json")
          const validator = documentValidator(document)
          const { accessToken } = yield* issueTestToken()
          const company = yield* createCompany()
          yield* raiseLimits(company.companyId)
          const auth = { authorization: `Bearer ${accessToken}`, "x-api-key": company.apiKey }
          // The signing key is made at start in a real server, on first use here: make it before counting.
          yield* get("/.well-known/jwks.json")
          let before = yield* tableCounts

          const operations: Array<Operation> = Object.entries<Record<string, any>>(document.paths).flatMap(
            ([path, methods]) => Object.entries(methods).map(([method, spec]) => ({ method, path, spec }))
          )
          let sent = 0
          const failures: Array<string> = []
          for (const operation of operations) {
            // A random body can happen to be a valid one (`{"name": "x"}` makes an account): what such a request
            // writes is its right, so the operation's writes are checked only when it refused every request.
            let accepted = false
            const samples = fc.sample(requestsFor(document, operation, auth), {
              seed: seed + sent,
              numRuns: runsPerOperation
            })
            for (const request of samples) {
              sent++
              const response = yield* send(request)
              const where = `${request.method} ${request.url.slice(0, 120)} ${request.body?.contentType ?? ""} ${request.body?.text.slice(0, 80) ?? ""}`
              if (response.status < 300) accepted = true
              const declared = operation.spec.responses[String(response.status)]
              if (response.status >= 500 || declared === undefined) {
                failures.push(`${response.status} undeclared or 5xx: ${where} → ${response.text.slice(0, 200)}`)
                continue
              }
              if (response.status < 400 || declared.content === undefined) continue
              const mediaType = (response.headers["content-type"] ?? "").split(";")[0]!
              const schema = declared.content[mediaType]?.schema
              if (schema === undefined) {
                failures.push(
                  `${response.status} sent as ${mediaType}, declared ${Object.keys(declared.content)}: ${where}`
                )
                continue
              }
              if (mediaType.endsWith("json")) {
                const validate = validator.schema(
                  `#/paths/${pointerEscape(operation.path)}/${operation.method}/responses/${response.status}/content/${pointerEscape(mediaType)}/schema`
                )
                if (!validate(response.body)) {
                  failures.push(
                    `${response.status} body off its schema: ${where} → ${response.text.slice(0, 200)} ${validator.ajv.errorsText(validate.errors)}`
                  )
                }
              }
            }
            const after = yield* tableCounts
            if (!accepted) expect(after, `${operation.method} ${operation.path} wrote`).toEqual(before)
            before = after
          }
          console.log(`fuzz: ${sent} requests over ${operations.length} operations`)
          expect(sent).toBeGreaterThan(2000)
          expect(failures.slice(0, 20)).toEqual([])
        }),
      { timeout: 120_000 }
    )
  })
})

const pointerEscape = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1")
