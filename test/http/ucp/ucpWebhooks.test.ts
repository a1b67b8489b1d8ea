import { createHash, createPublicKey, verify } from "node:crypto"
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Checkout } from "../../../src/domain/checkout/Checkout.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { FulfillmentSettings } from "../../../src/services/simulators/FulfillmentSimulator.js"
import { signedIn } from "../../support/auth.js"
import { availableVariants, makeCheckoutTestServer, payWith } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { raw, testPublicUrl } from "../../support/http.js"
import { certificate, httpsReceiver, type Received } from "../../support/receiver.js"
import { conforms, londonDestination } from "../../support/ucp.js"

/**
 * UCP order event webhooks (docs/decisions/0088-ucp-order-webhooks.md): a loopback "platform" serves its profile
 * over https, its order capability's `config.webhook_url` pointing back at itself; a purchase made over `/ucp` and
 * paid on the hosted page sends it the order, signed as the REST binding says (RFC 9421 over `@method`,
 * `@authority`, `@path`, `content-digest`, `content-type`), verified here with node:crypto and the public key
 * `/.well-known/ucp` publishes, and validated against the protocol's order schema (when `UCP_SCHEMA_DIR` names it).
 */

const ORDER = "https://ucp.dev/schemas/shopping/order.json"
const profileWith = (webhookUrl: string | undefined) => ({
  ucp: {
    version: "2026-04-08",
    services: {},
    capabilities: {
      "dev.ucp.shopping.checkout": [{ version: "2026-04-08" }],
      "dev.ucp.shopping.order": [
        { version: "2026-04-08", ...(webhookUrl === undefined ? {} : { config: { webhook_url: webhookUrl } }) }
      ]
    },
    payment_handlers: {}
  },
  signing_keys: []
})

/** The platform: `/profile` names `/hooks/orders` as its webhook URL, `/quiet` names none; both take POSTs. */
const platform = Effect.gen(function* () {
  let base = ""
  const site = yield* httpsReceiver((request) => {
    const json = { "content-type": "application/json", "cache-control": "public, max-age=300" }
    if (request.method === "GET" && request.path === "/profile") {
      return { status: 200, headers: json, body: JSON.stringify(profileWith(`${base}/hooks/orders`)) }
    }
    if (request.method === "GET" && request.path === "/quiet") {
      return { status: 200, headers: json, body: JSON.stringify(profileWith(undefined)) }
    }
    return { status: 200, headers: json, body: JSON.stringify({ ucp: { version: "2026-04-08" } }) }
  })
  base = site.url("")
  return site
})

const Server = makeCheckoutTestServer(
  Layer.merge(
    FulfillmentSettings.Default,
    OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] })
  )
).pipe(signedIn({ defaultCountry: "GB" }))

/** A purchase over `/ucp` by the platform `agent`, paid on the hosted page; the checkout's id once completed. */
const purchase = (agent: string) =>
  Effect.gen(function* () {
    const [variantId] = yield* availableVariants("GB", "mug", 1)
    const session = (request: HttpClientRequest.HttpClientRequest) =>
      raw(HttpClientRequest.setHeader(request, "ucp-agent", agent))
    const created = yield* session(
      HttpClientRequest.post("/ucp/checkout-sessions").pipe(
        HttpClientRequest.bodyText(
          JSON.stringify({
            line_items: [{ item: { id: variantId! }, quantity: 1 }],
            buyer: { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" },
            fulfillment: { methods: [{ type: "shipping", destinations: [londonDestination] }] }
          }),
          "application/json"
        )
      )
    )
    expect(created.status, created.text).toBe(201)
    const id: string = created.body.id
    yield* payWith({ paymentUrl: created.body.continue_url } as Checkout)
    const completed = yield* eventually(
      session(HttpClientRequest.get(`/ucp/checkout-sessions/${id}`)),
      (r) => r.body.status === "completed",
      "completed"
    )
    return { id, orderId: completed.body.order.id as string }
  })

/** The `ucp.order_event` jobs and UCP deliveries so far. */
const ucpRows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.all({
    jobs: sql<{ status: string }>`SELECT status FROM jobs WHERE kind = 'ucp.order_event'`,
    deliveries: sql<{ url: string }>`SELECT url FROM webhook_deliveries WHERE signing_scheme = 'ucp_rfc9421'`
  })
)

/** Verifies the request's RFC 9421 signature with the JWK `/.well-known/ucp` publishes, as a platform does. */
const verifySigned = (request: Received, host: string) =>
  Effect.gen(function* () {
    const { signing_keys } = (yield* raw(HttpClientRequest.get("/.well-known/ucp"))).body
    const header = (name: string) => String(request.headers[name])
    expect(header("ucp-agent")).toBe(`profile="${testPublicUrl}/.well-known/ucp"`)
    expect(header("content-type")).toBe("application/json")
    expect(header("content-digest")).toBe(`sha-256=:${createHash("sha256").update(request.body).digest("base64")}:`)
    expect(header("webhook-id")).toMatch(/^ucp_evt_/)
    expect(Math.abs(Date.now() / 1000 - Number(header("webhook-timestamp")))).toBeLessThan(300)
    const input =
      /^sig1=(\("@method" "@authority" "@path" "content-digest" "content-type"\);created=(\d+);keyid="([^"]+)")$/.exec(
        header("signature-input")
      )
    expect(input, header("signature-input")).not.toBeNull()
    const key = signing_keys.find((k: { kid: string }) => k.kid === input![3])
    expect(key).toBeDefined()
    const base = [
      '"@method": POST',
      `"@authority": ${host}`,
      `"@path": ${request.path}`,
      `"content-digest": ${header("content-digest")}`,
      `"content-type": ${header("content-type")}`,
      `"@signature-params": ${input![1]}`
    ].join("\n")
    const signature = Buffer.from(/^sig1=:([^:]+):$/.exec(header("signature"))![1]!, "base64")
    expect(
      verify(
        "sha256",
        Buffer.from(base),
        { key: createPublicKey({ key, format: "jwk" }), dsaEncoding: "ieee-p1363" },
        signature
      )
    ).toBe(true)
    return JSON.parse(request.body)
  })

describe("UCP order event webhooks", () => {
  it.layer(Server, { timeout: 180_000 })((it) => {
    it.scoped("a purchase over /ucp sends its order to the profile's webhook_url, signed with the UCP key", () =>
      Effect.gen(function* () {
        const site = yield* platform
        const { id, orderId } = yield* purchase(`profile="${site.url("/profile")}"`)
        const hooks = yield* eventually(
          Effect.sync(() => site.received.filter((r) => r.method === "POST")),
          (posts) => posts.length >= 1,
          "an order event"
        )
        const first = hooks[0]!
        expect(first.path).toBe("/hooks/orders")
        const order = yield* verifySigned(first, new URL(site.url("/")).host)
        expect(order).toMatchObject({ id: orderId, checkout_id: id })
        conforms(ORDER, order)
        // The same builder as GET /ucp/orders/{id}.
        const read = yield* raw(
          HttpClientRequest.get(`/ucp/orders/${orderId}`).pipe(
            HttpClientRequest.setHeader("ucp-agent", `profile="${site.url("/profile")}"`)
          )
        )
        expect(read.status, read.text).toBe(200)
        expect(Object.keys(order).sort()).toEqual(Object.keys(read.body).sort())
      })
    )

    it.scoped("a platform whose profile names no webhook_url gets nothing", () =>
      Effect.gen(function* () {
        const site = yield* platform
        const before = yield* ucpRows
        yield* purchase(`profile="${site.url("/quiet")}"`)
        // Every order event's job has run (read the profile, found no URL) and recorded no delivery.
        const after = yield* eventually(
          ucpRows,
          (rows) => rows.jobs.length > before.jobs.length && rows.jobs.every((job) => job.status === "succeeded"),
          "the order event jobs done"
        )
        expect(after.deliveries).toEqual(before.deliveries)
        expect(site.received.filter((r) => r.method === "POST")).toHaveLength(0)
        expect(site.received.some((r) => r.path === "/quiet")).toBe(true)
      })
    )
  })
})
