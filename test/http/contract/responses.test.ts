import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { issueTestToken } from "../../support/auth.js"
import { CheckoutTestServer, londonAddress, recipient } from "../../support/checkout.js"
import { createCompany, raiseLimits } from "../../support/company.js"
import { get, type RawResponse, raw } from "../../support/http.js"
import { documentValidator } from "../../support/openapi.js"

const pointerEscape = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1")

/**
 * Checks a response against what the document declares for its operation: the status, the media type,
 * the body's schema, and the headers (every required one present, every declared one valid).
 */
const conformance = (document: Record<string, any>) => {
  const validator = documentValidator(document)
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`)
  }))
  return (method: string, url: string, response: RawResponse): Array<string> => {
    const path = url.split("?")[0]!
    const template = templates.find(({ pattern }) => pattern.test(path))?.template
    const where = `${method} ${path} ${response.status}`
    if (template === undefined) return [`${where}: no operation`]
    const declared = document.paths[template][method.toLowerCase()]?.responses?.[String(response.status)]
    if (declared === undefined) return [`${where}: status not declared`]
    const problems: Array<string> = []
    const base = `#/paths/${pointerEscape(template)}/${method.toLowerCase()}/responses/${response.status}`
    for (const [name, header] of Object.entries<Record<string, any>>(declared.headers ?? {})) {
      const resolved = header.$ref === undefined ? header : document.components.headers[header.$ref.split("/").at(-1)]
      const value = response.headers[name.toLowerCase()]
      if (value === undefined) {
        if (resolved.required === true) problems.push(`${where}: header ${name} missing`)
        continue
      }
      const typed = resolved.schema.type === "integer" ? Number(value) : value
      const validate = validator.ajv.compile(resolved.schema)
      if (!validate(typed))
        problems.push(`${where}: header ${name}: ${value} ${validator.ajv.errorsText(validate.errors)}`)
    }
    if (declared.content === undefined) return problems
    const mediaType = (response.headers["content-type"] ?? "").split(";")[0]!
    if (declared.content[mediaType] === undefined) return [...problems, `${where}: sent as ${mediaType}`]
    if (!mediaType.endsWith("json")) return problems
    const validate = validator.schema(`${base}/content/${pointerEscape(mediaType)}/schema`)
    if (!validate(response.body)) {
      problems.push(`${where}: body ${validator.ajv.errorsText(validate.errors)} ${response.text.slice(0, 300)}`)
    }
    return problems
  }
}

const request = (method: "GET" | "POST" | "DELETE", url: string, headers: Record<string, string>, body?: unknown) => {
  let built = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeaders(headers))
  if (body !== undefined) built = HttpClientRequest.bodyText(built, JSON.stringify(body), "application/json")
  return raw(built)
}

describe("responses of a happy-path run", () => {
  it.layer(CheckoutTestServer)((it) => {
    it.effect("are what the document declares for them: status, media type, body and headers", () =>
      Effect.gen(function* () {
        const { body: document } = yield* get("/openapi.json")
        const conforms = conformance(document)
        const problems: Array<string> = []
        let checked = 0
        const call = (
          method: "GET" | "POST" | "DELETE",
          url: string,
          headers: Record<string, string>,
          body?: unknown
        ) =>
          Effect.tap(request(method, url, headers, body), (response) => {
            checked++
            problems.push(...conforms(method, url, response))
          })

        for (const url of ["/health", "/ready", "/.well-known/oauth-authorization-server"]) yield* call("GET", url, {})
        yield* call("GET", "/.well-known/oauth-protected-resource", {})
        yield* call("GET", "/.well-known/jwks.json", {})
        yield* call("GET", "/.well-known/ribbon-agents.json", {})
        yield* call("GET", "/v1/me", {}) // 401 with its challenge

        const { accessToken } = yield* issueTestToken({ defaultCountry: "GB" })
        const bearer = { authorization: `Bearer ${accessToken}` }
        yield* call("GET", "/v1/me", bearer)
        yield* call("GET", "/v1/countries", bearer)
        yield* call("GET", "/v1/tags", bearer)
        yield* call("GET", "/v1/collections?country=GB&limit=3", bearer)
        const search = yield* call("GET", "/v1/search?q=mug&country=GB&limit=5", bearer)
        const productId = search.body.products[0].id
        const product = yield* call("GET", `/v1/products/${productId}?country=GB`, bearer)
        const variantId = product.body.variants.find((v: { shippingRequired: boolean }) => v.shippingRequired).id
        yield* call("GET", `/v1/variants/${variantId}?country=GB`, bearer)
        yield* call("GET", `/v1/variants/${variantId}/availability?countries=GB,US`, bearer)
        yield* call("GET", "/v1/products/0123456789abcdef01234567", bearer) // 404
        const quote = yield* call("POST", "/v1/quotes", bearer, { variantId, countryCode: "GB" })
        yield* call("GET", `/v1/quotes/${quote.body.id}`, bearer)
        const order = {
          items: [{ quoteId: quote.body.id }],
          recipient,
          shippingAddress: londonAddress,
          idempotencyKey: "conformance-1"
        }
        const checkout = yield* call("POST", "/v1/checkouts", bearer, order)
        const replay = yield* call("POST", "/v1/checkouts", bearer, order)
        expect(replay.headers["idempotent-replayed"]).toBe("true")
        yield* call("GET", `/v1/checkouts/${checkout.body.id}`, bearer)
        yield* call("POST", `/v1/checkouts/${checkout.body.id}/cancel`, bearer)
        yield* call("POST", `/v1/checkouts/${checkout.body.id}/cancel`, bearer) // 409
        yield* call("GET", "/v1/orders?limit=5", bearer)
        yield* call("POST", "/v1/quotes", bearer, { variantId: "nope" }) // 400

        const company = yield* createCompany()
        yield* raiseLimits(company.companyId)
        const key = { "x-api-key": company.apiKey }
        const v2 = yield* call("POST", "/public-api/v2/authentication/apiKeys", key, {
          name: "conformance",
          permissions: ["products:read"]
        })
        yield* call("GET", "/public-api/v2/authentication/apiKeys", key)
        yield* call("DELETE", `/public-api/v2/authentication/apiKeys/${v2.body.id}`, key)
        const v3 = yield* call("POST", "/public-api/v3/authentication/api-keys", key, {
          name: "conformance",
          permissions: ["products:read"]
        })
        yield* call("GET", "/public-api/v3/authentication/api-keys?page[size]=2", key)
        yield* call("DELETE", `/public-api/v3/authentication/api-keys/${v3.body.data.id}`, key)
        yield* call("GET", "/public-api/v3/authentication/api-keys", { "x-api-key": "0123456789abcdef01234567" }) // 401
        yield* call("GET", "/public-api/v3/authentication/api-keys?page[size]=0", key) // 400

        expect(checked).toBeGreaterThan(30)
        expect(problems).toEqual([])
      })
    )
  })
})
