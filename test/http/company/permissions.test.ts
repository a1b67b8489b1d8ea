import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Tracer } from "effect"
import { Api } from "../../../src/http/Api.js"
import { operationsOf, permissionsDoc } from "../../../src/http/company/ApiKeyAuth.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import { TokenBuckets } from "../../../src/services/platform/RateLimits.js"
import { CompanyServicesLive, createCompany, getWith, keyHeaders, postWith } from "../../support/company.js"
import { serveFixture } from "../../support/companyFixture.js"
import { TestDatabase } from "../../support/database.js"
import { get } from "../../support/http.js"

/**
 * Permissions are declared once, as an annotation on each endpoint: the middleware checks them and
 * docs/permissions.md is generated from them. The key itself never reaches a log line or a span.
 */

const logs: Array<string> = []
const spans: Array<Tracer.Span> = []

/** Every log line, at every level, as text. */
const CaptureLogs = Layer.merge(
  Logger.replace(
    Logger.defaultLogger,
    Logger.make((options) => logs.push(JSON.stringify(Logger.stringLogger.log(options))))
  ),
  Logger.minimumLogLevel(LogLevel.All)
)

/** The native tracer, keeping every span it makes. */
const RecordSpans = Layer.unwrapEffect(
  Effect.map(Effect.tracer, (native) =>
    Layer.setTracer(
      Tracer.make({
        span: (...args) => {
          const span = native.span(...args)
          spans.push(span)
          return span
        },
        context: (f, fiber) => native.context(f, fiber)
      })
    )
  )
)

/** What an exporter sends of the server's spans: names and attributes (the test client's own spans left out). */
const spanText = () =>
  JSON.stringify(
    spans
      .filter((span) => !span.name.startsWith("http.client"))
      .map((span) => ({ name: span.name, attributes: [...span.attributes].map(([k, v]) => [k, String(v)]) }))
  )

describe("permissions", () => {
  it("docs/permissions.md is generated from the endpoints' annotations", () => {
    const doc = Fs.readFileSync(new URL("../../../docs/permissions.md", import.meta.url), "utf8")
    expect(doc).toBe(permissionsDoc(Api))
  })

  it("every company-API endpoint is behind the API-key middleware and declares its operation", () => {
    const guarded = new Set(operationsOf(Api).map((row) => `${row.method} ${row.path}`))
    const companyEndpoints = new Set<string>()
    for (const group of Object.values(Api.groups) as Array<any>) {
      for (const endpoint of Object.values(group.endpoints) as Array<any>) {
        if (endpoint.path.startsWith("/public-api/")) companyEndpoints.add(`${endpoint.method} ${endpoint.path}`)
      }
    }
    // The middleware guards exactly the company API: every one of its endpoints, and nothing else.
    expect(companyEndpoints.size).toBeGreaterThan(0)
    expect(guarded).toEqual(companyEndpoints)
  })

  it.layer(
    serveFixture(TokenBuckets.layerMemory).pipe(
      Layer.provideMerge(TestDatabase),
      Layer.provide([CaptureLogs, RecordSpans])
    ),
    { timeout: 120_000 }
  )((it) => {
    it.effect(
      "a key without the operation's permission is a 403 on both lines; with it the handler gets the caller",
      () =>
        Effect.gen(function* () {
          const company = yield* createCompany()
          // A key holding only accounts:create, made by the service the CLI uses.
          const readOnly = yield* Effect.flatMap(KeyStore, (keys) =>
            keys.create({
              companyId: company.companyId,
              environment: "test",
              name: "accounts only",
              expirationInDays: 30,
              enforceMtls: false,
              permissions: ["accounts:create"],
              accountsAccess: { scope: "all-accounts", ids: [] },
              requestSource: null
            })
          ).pipe(Effect.provide(CompanyServicesLive))
          const headers = keyHeaders(readOnly.apiKey)
          const v2 = yield* getWith("/public-api/v2/fixture/products", headers)
          expect(v2.status).toBe(403)
          expect(v2.body).toEqual({
            status: 403,
            errorCode: "FORBIDDEN",
            message: expect.stringContaining("products:read")
          })
          const v3 = yield* getWith("/public-api/v3/fixture/products", headers)
          expect(v3.body).toEqual({
            status: 403,
            errorCode: "403_KEYS_001",
            message: expect.stringContaining("products:read")
          })

          const allowed = yield* postWith(
            "/public-api/v3/fixture/accounts",
            {},
            { ...headers, "request-source": "api_make", "ribbon-account-id": company.accountId }
          )
          expect(allowed.status).toBe(200)
          expect(allowed.body).toEqual({
            companyId: company.companyId,
            environment: "test",
            accountId: company.accountId,
            requestSource: "api_make"
          })
        })
    )

    it.effect("the key never appears in logs or spans, whatever the outcome", () =>
      Effect.gen(function* () {
        const company = yield* createCompany()
        const unknown = "abcdefabcdefabcdefabcdef"
        yield* getWith("/public-api/v3/fixture/products", keyHeaders(company.apiKey))
        yield* getWith("/public-api/v3/fixture/products", keyHeaders(unknown))
        yield* getWith(`/public-api/v3/fixture/products?companyId=zz`, keyHeaders(company.apiKey))
        yield* get("/public-api/v3/fixture/nothing", keyHeaders(company.apiKey))
        expect(spans.length).toBeGreaterThan(0)
        expect(logs.length).toBeGreaterThan(0)
        const everything = `${logs.join("\n")}\n${spanText()}`
        for (const secret of [company.apiKey, unknown]) expect(everything.includes(secret)).toBe(false)
        // The key's id is what logs carry instead.
        expect(logs.join("\n")).toContain(company.apiKeyId)
      })
    )
  })
})
