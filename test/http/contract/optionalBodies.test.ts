import * as Net from "node:net"
import { type HttpClient, HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Api } from "../../../src/http/Api.js"
import { routeTableOf } from "../../../src/http/Routes.js"
import { issueTestToken } from "../../support/auth.js"
import { londonAddress, makeCheckoutTestServer, recipient } from "../../support/checkout.js"
import { createCompany, keyHeaders, postWith, postWithoutBody, raiseLimits } from "../../support/company.js"
import { get } from "../../support/http.js"

/**
 * Every operation that may be sent without a body (its body has no required field, or it takes none), read
 * off the API's definition, sent as clients send "nothing": no body at all (`curl -X POST`), an empty one
 * (`Content-Length: 0`), and an empty one in the operation's own media type. Each is answered as it would be
 * with an empty object, never with a 400 or 415 about the body; and the OpenAPI document says so.
 */

const operations = routeTableOf(Api).operations
const bodiless = operations.filter(
  (operation) => operation.method !== "GET" && operation.method !== "DELETE" && operation.bodyMediaTypes === undefined
)
const bodyOptional = operations.filter((operation) => operation.bodyOptional)
const keyOf = (operation: { readonly method: string; readonly path: string }) => `${operation.method} ${operation.path}`

/** The ways a client sends no body: the headers that say so. */
const waysOfSendingNothing = (mediaType: string | undefined) =>
  ({
    "no body at all": {},
    "Content-Length: 0": { "content-length": "0" },
    "Content-Length: 0 in its media type": { "content-length": "0", "content-type": mediaType ?? "application/json" }
  }) as const

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
}

const serverPort = Effect.map(HttpServer.HttpServer, (server) => (server.address as HttpServer.TcpAddress).port)

/** The body of a response read to its connection's close, de-chunked when it came in chunks. */
const bodyOf = (payload: string, chunked: boolean) => {
  if (!chunked) return payload
  let body = ""
  let rest = payload
  for (;;) {
    const end = rest.indexOf("\r\n")
    const size = Number.parseInt(rest.slice(0, end), 16)
    if (!(size > 0)) return body
    body += rest.slice(end + 2, end + 2 + size)
    rest = rest.slice(end + 2 + size + 2)
  }
}

/**
 * A request written byte for byte on a socket of its own: Node's client would add `Content-Length: 0` to a
 * POST without a body, where curl sends neither a length nor a body.
 */
const sendRaw = (method: string, path: string, headers: Record<string, string>) =>
  Effect.flatMap(serverPort, (port) =>
    Effect.async<Answer>((resume) => {
      const request = [
        `${method} ${path} HTTP/1.1`,
        "host: ribbon.test",
        "connection: close",
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        "",
        ""
      ].join("\r\n")
      const socket = Net.connect(port, "127.0.0.1", () => socket.write(request))
      let received = ""
      socket.setEncoding("utf8")
      socket.on("data", (chunk: string) => {
        received += chunk
      })
      socket.once("close", () => {
        const split = received.indexOf("\r\n\r\n")
        const [statusLine, ...headerLines] = received.slice(0, split).split("\r\n")
        const answerHeaders = Object.fromEntries(
          headerLines.map((line) => {
            const colon = line.indexOf(":")
            return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]
          })
        )
        const chunked = answerHeaders["transfer-encoding"] === "chunked"
        resume(
          Effect.succeed({
            status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]),
            headers: answerHeaders,
            text: bodyOf(received.slice(split + 4), chunked)
          })
        )
      })
      socket.once("error", (error) => resume(Effect.die(error)))
    })
  )

/** Where a request goes and with which credentials; made anew for each request, so each finds its target fresh. */
interface Target {
  readonly path: string
  readonly headers: Record<string, string>
}

interface Way {
  /** A fresh target for one request. */
  readonly target: Effect.Effect<Target, unknown, HttpClient.HttpClient | SqlClient.SqlClient>
  /** What the operation answers to an empty object. */
  readonly status: number
}

const expectCreated = (response: { readonly status: number; readonly body: unknown }) => {
  expect(response.status, JSON.stringify(response.body)).toBeLessThan(300)
  return response.body as any
}

/** A test company with a campaign, a variant that ships to GB, and a signed-in user: what every target is made from. */
const fixture = Effect.gen(function* () {
  const company = yield* createCompany()
  yield* raiseLimits(company.companyId)
  const headers = keyHeaders(company.apiKey)
  const sql = yield* SqlClient.SqlClient
  const [product] = yield* sql<{ id: string }>`
    SELECT id FROM products WHERE min_price_usd IS NOT NULL ORDER BY id LIMIT 1`
  const [variant] = yield* sql<{ id: string }>`
    SELECT v.id FROM variants v JOIN variant_locations l ON l.variant_id = v.id
    WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND 'GB' = ANY (l.ships_to) AND l.stock > 100
    ORDER BY l.stock DESC, v.id LIMIT 1`
  const campaign = expectCreated(
    yield* postWith(
      "/public-api/v2/campaigns",
      {
        name: "Thank you",
        customization: {
          giftProperties: {
            selectedGiftType: "product",
            productId: product!.id,
            budget: { min: 10, max: 50 },
            expiration: { daysFromSend: 7 }
          },
          message: "Thanks!"
        }
      },
      headers
    )
  )
  const user = yield* issueTestToken({ defaultCountry: "GB" })
  const bearer = { authorization: `Bearer ${user.accessToken}` }
  let sent = 0
  // Suspended: each run sends a new key, and so makes a new one.
  const gift = Effect.suspend(() =>
    postWith(
      "/public-api/v2/gifts",
      {
        campaignId: campaign.id,
        recipients: [{ firstname: "Ada", lastname: "Lovelace", email: `ada${++sent}@example.com`, key: `ada-${sent}` }],
        sendingMethod: "email"
      },
      headers
    )
  ).pipe(
    Effect.map((response) => {
      const [result] = expectCreated(response).results
      expect(result.success, JSON.stringify(result)).toBe(true)
      return { id: result.id as string, token: new URL(result.link).pathname.split("/")[2]! }
    })
  )
  const order = Effect.suspend(() =>
    postWith(
      "/public-api/v3/orders",
      { variantId: variant!.id, recipient, shippingAddress: londonAddress, idempotencyKey: `bodiless-${++sent}` },
      headers
    )
  ).pipe(Effect.map((response) => expectCreated(response).data.id as string))
  const checkout = Effect.gen(function* () {
    const quote = expectCreated(yield* postWith("/v1/quotes", { variantId: variant!.id, countryCode: "GB" }, bearer))
    const made = yield* postWith(
      "/v1/checkouts",
      {
        items: [{ quoteId: quote.id }],
        recipient,
        shippingAddress: londonAddress,
        idempotencyKey: `bodiless-${++sent}`
      },
      bearer
    )
    return expectCreated(made).id as string
  })
  const recipientId = yield* Effect.map(gift, (made) => made.id).pipe(
    Effect.flatMap((giftId) => get(`/public-api/v2/gifts/${giftId}`, headers)),
    Effect.map((response) => response.body.recipientId as string)
  )
  // Deliveries go to a loopback receiver nobody listens on: the test server allows loopback.
  const webhook = expectCreated(
    yield* postWith(
      "/public-api/v3/webhooks",
      { url: "https://127.0.0.1:9/hooks", eventTypes: ["order-created"] },
      headers
    )
  ).data.id as string
  const delivery = Effect.map(
    postWithoutBody(`/public-api/v3/webhooks/${webhook}/test`, headers),
    (response) => expectCreated(response).data.id as string
  )
  // An Agentic Commerce Protocol POST takes its version and a new idempotency key (src/http/acp/AcpApi.ts).
  const acpHeaders = () => ({ ...bearer, "api-version": "2026-04-17", "idempotency-key": `bodiless-${++sent}` })
  const acpSession = Effect.suspend(() =>
    postWith(
      "/acp/checkout_sessions",
      { line_items: [{ id: variant!.id }], currency: "gbp", capabilities: {} },
      acpHeaders()
    )
  ).pipe(Effect.map((response) => expectCreated(response).id as string))
  // A Universal Commerce Protocol request names the platform's profile (src/http/ucp/UcpApi.ts).
  const ucpHeaders = { ...bearer, "ucp-agent": 'profile="https://platform.example/profile"' }
  const ucpSession = Effect.suspend(() =>
    postWith("/ucp/checkout-sessions", { line_items: [{ item: { id: variant!.id }, quantity: 1 }] }, ucpHeaders)
  ).pipe(Effect.map((response) => expectCreated(response).id as string))
  return {
    headers,
    bearer,
    campaignId: campaign.id as string,
    recipientId,
    gift,
    order,
    checkout,
    webhook,
    delivery,
    acpHeaders,
    acpSession,
    ucpHeaders,
    ucpSession
  }
})

type Fixture = Effect.Effect.Success<typeof fixture>

/**
 * How to reach each such operation. An operation missing here fails the test: a new optional body needs a
 * line saying where it is sent and what an empty object gets.
 */
const waysTo = (f: Fixture): Record<string, Way> => {
  const company = (path: string): Target => ({ path, headers: f.headers })
  const fixed = (target: Target) => Effect.succeed(target)
  return {
    "PATCH /v1/me": { target: fixed({ path: "/v1/me", headers: f.bearer }), status: 200 },
    "POST /v1/checkouts/:checkoutId/cancel": {
      target: Effect.map(f.checkout, (id) => ({ path: `/v1/checkouts/${id}/cancel`, headers: f.bearer })),
      status: 200
    },
    // Placing a v1 order takes a payment; an unknown one is enough to show the empty request reaches the handler.
    "POST /v1/orders/:orderId/cancel": {
      target: fixed({ path: "/v1/orders/ord_unknown/cancel", headers: f.bearer }),
      status: 404
    },
    "POST /acp/checkout_sessions/:checkout_session_id": {
      target: Effect.map(f.acpSession, (id) => ({ path: `/acp/checkout_sessions/${id}`, headers: f.acpHeaders() })),
      status: 200
    },
    "POST /acp/checkout_sessions/:checkout_session_id/cancel": {
      target: Effect.map(f.acpSession, (id) => ({
        path: `/acp/checkout_sessions/${id}/cancel`,
        headers: f.acpHeaders()
      })),
      status: 200
    },
    // Complete before the person paid: the empty request reaches the handler, which says where they pay.
    "POST /ucp/checkout-sessions/:id/complete": {
      target: Effect.map(f.ucpSession, (id) => ({
        path: `/ucp/checkout-sessions/${id}/complete`,
        headers: f.ucpHeaders
      })),
      status: 409
    },
    "POST /ucp/checkout-sessions/:id/cancel": {
      target: Effect.map(f.ucpSession, (id) => ({
        path: `/ucp/checkout-sessions/${id}/cancel`,
        headers: f.ucpHeaders
      })),
      status: 200
    },
    // Delegated payment decodes its body itself, so that every bad field is the protocol's 400 `invalid_card`: an
    // empty body is one, at `$.payment_method` (the body is required; the router alone does not know it).
    "POST /agentic_commerce/delegate_payment": {
      target: Effect.sync(() => ({ path: "/agentic_commerce/delegate_payment", headers: f.acpHeaders() })),
      status: 400
    },
    "PATCH /public-api/v2/campaigns/:campaignId": {
      target: fixed(company(`/public-api/v2/campaigns/${f.campaignId}`)),
      status: 200
    },
    "PATCH /public-api/v2/gifts/:giftId": {
      target: Effect.map(f.gift, (gift) => company(`/public-api/v2/gifts/${gift.id}`)),
      status: 200
    },
    "POST /public-api/v2/gifts/:giftId/cancel": {
      target: Effect.map(f.gift, (gift) => company(`/public-api/v2/gifts/${gift.id}/cancel`)),
      status: 200
    },
    "POST /public-api/v2/gifts/:giftId/expire": {
      target: Effect.map(f.gift, (gift) => company(`/public-api/v2/gifts/${gift.id}/expire`)),
      status: 200
    },
    "PATCH /public-api/v2/recipients/:recipientId": {
      target: fixed(company(`/public-api/v2/recipients/${f.recipientId}`)),
      status: 200
    },
    "POST /public-api/v3/orders/:orderId/cancel": {
      target: Effect.map(f.order, (id) => company(`/public-api/v3/orders/${id}/cancel`)),
      status: 200
    },
    "POST /public-api/v3/webhooks/:webhookId/test": {
      target: fixed(company(`/public-api/v3/webhooks/${f.webhook}/test`)),
      status: 202
    },
    "POST /public-api/v3/webhooks/:webhookId/deliveries/:deliveryId/resend": {
      target: Effect.map(f.delivery, (id) => company(`/public-api/v3/webhooks/${f.webhook}/deliveries/${id}/resend`)),
      status: 202
    },
    // One export runs at a time per company: each starts at a company of its own.
    "POST /public-api/v3/products/exports": {
      target: Effect.map(createCompany(), (other) => ({
        path: "/public-api/v3/products/exports",
        headers: keyHeaders(other.apiKey)
      })),
      status: 202
    },
    // Every dashboard form carries its CSRF token (and, signed in, a session cookie): an empty one is refused
    // for want of them, with the dashboard's 403 page ("form expired", "signed out"), not a 400 about its body.
    // Every form under /dashboard is walked; the token is checked first, so a placeholder fills its path ids.
    ...Object.fromEntries(
      [...bodyOptional, ...bodiless]
        .filter((operation) => operation.path.startsWith("/dashboard/"))
        .map((operation) => [
          keyOf(operation),
          { target: fixed({ path: operation.path.replace(/:\w+/g, "0"), headers: {} }), status: 403 }
        ])
    ),
    // The allowance pages: an empty set-up form names no client (the link is not valid), an empty sign-in form is a
    // wrong password, and a revoke without the allowances page's session asks to sign in.
    "POST /allowances/new": { target: fixed({ path: "/allowances/new", headers: {} }), status: 404 },
    "POST /allowances/sign-in": { target: fixed({ path: "/allowances/sign-in", headers: {} }), status: 401 },
    "POST /allowances/:allowanceId/revoke": {
      target: fixed({ path: "/allowances/0/revoke", headers: {} }),
      status: 401
    },
    // The gift page answers an empty claim form with the form again, saying what is missing.
    "POST /g/:token/claim": {
      target: Effect.map(f.gift, (gift) => ({ path: `/g/${gift.token}/claim`, headers: {} })),
      status: 422
    },
    // An empty language form changes nothing: back to the gift's link.
    "POST /g/:token/language": {
      target: Effect.map(f.gift, (gift) => ({ path: `/g/${gift.token}/language`, headers: {} })),
      status: 303
    },
    // An empty thank-you form, for a gift not claimed yet: a page saying the note was not sent.
    "POST /g/:token/thank-you": {
      target: Effect.map(f.gift, (gift) => ({ path: `/g/${gift.token}/thank-you`, headers: {} })),
      status: 422
    }
  }
}

describe("an operation whose body may be left out", () => {
  it.layer(makeCheckoutTestServer(), { timeout: 180_000 })((it) => {
    it.effect(
      "is answered as with an empty object when sent with no body, or an empty one (Content-Length: 0), on every such operation",
      () =>
        Effect.gen(function* () {
          expect(bodyOptional.map(keyOf)).toContain("POST /public-api/v3/products/exports")
          expect(bodiless.map(keyOf)).toContain("POST /public-api/v2/gifts/:giftId/cancel")
          const f = yield* fixture
          const ways = waysTo(f)
          const reached = [...bodyOptional, ...bodiless]
          expect(Object.keys(ways).sort()).toEqual(reached.map(keyOf).sort())
          for (const operation of reached) {
            const way = ways[keyOf(operation)]!
            for (const [how, headers] of Object.entries(waysOfSendingNothing(operation.bodyMediaTypes?.[0]))) {
              const target = yield* way.target
              const answer = yield* sendRaw(operation.method, target.path, { ...target.headers, ...headers })
              expect({ operation: keyOf(operation), how, status: answer.status }, answer.text.slice(0, 300)).toEqual({
                operation: keyOf(operation),
                how,
                status: way.status
              })
            }
          }
        })
    )

    it.effect("the OpenAPI document marks exactly those bodies optional (requestBody.required: false)", () =>
      Effect.gen(function* () {
        const { body } = yield* get("/openapi.json")
        expect(body.paths["/public-api/v3/products/exports"].post.requestBody.required).toBe(false)
        expect(body.paths["/g/{token}/claim"].post.requestBody.required).toBe(false)
        const documented = (path: string) => path.replace(/:(\w+)/g, "{$1}")
        for (const operation of operations) {
          const documentedOperation = body.paths[documented(operation.path)]?.[operation.method.toLowerCase()]
          // Pages left out of the document (the dashboard's) have nothing to say.
          if (operation.bodyMediaTypes === undefined || documentedOperation === undefined) continue
          const requestBody = documentedOperation.requestBody
          expect({ operation: keyOf(operation), required: requestBody?.required }).toEqual({
            operation: keyOf(operation),
            required: !operation.bodyOptional
          })
        }
      })
    )
  })
})
