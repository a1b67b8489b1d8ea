import * as Net from "node:net"
import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CheckoutTestServer, londonAddress, recipient } from "../../support/checkout.js"
import { createCompany, getWith, keyHeaders, raiseLimits } from "../../support/company.js"
import { eventually } from "../../support/eventually.js"

/**
 * Clients that stop talking: one that half-closes its connection once its request is sent (`socket.end`,
 * legal HTTP/1.1) still gets its answer, and a write whose client goes away once it is sent still runs to
 * its end, so that its idempotency key returns the result.
 */

const orders = "/public-api/v3/orders"

/** A request written as raw HTTP/1.1 bytes, for a socket of our own. */
const rawRequest = (method: string, path: string, headers: Record<string, string>, body?: string) =>
  [
    `${method} ${path} HTTP/1.1`,
    "host: ribbon.test",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ...(body === undefined ? [] : ["content-type: application/json", `content-length: ${Buffer.byteLength(body)}`]),
    "",
    body ?? ""
  ].join("\r\n")

const serverPort = Effect.map(HttpServer.HttpServer, (server) => (server.address as HttpServer.TcpAddress).port)

/** Sends `request` and half-closes at once (`socket.end(request)`); resolves with everything the server sent back. */
const sendAndHalfClose = (request: string) =>
  Effect.flatMap(serverPort, (port) =>
    Effect.async<string>((resume) => {
      const socket = Net.connect(port, "127.0.0.1", () => socket.end(request))
      let received = ""
      socket.setEncoding("utf8")
      socket.on("data", (chunk: string) => {
        received += chunk
      })
      socket.once("close", () => resume(Effect.succeed(received)))
      socket.once("error", (error) => resume(Effect.die(error)))
    })
  )

/** Sends `request` and destroys the connection as soon as it is written: a client gone before any answer. */
const sendAndVanish = (request: string) =>
  Effect.flatMap(serverPort, (port) =>
    Effect.async<void>((resume) => {
      const socket = Net.connect(port, "127.0.0.1", () =>
        socket.write(request, () => {
          socket.destroy()
          resume(Effect.void)
        })
      )
      socket.once("error", (error) => resume(Effect.die(error)))
    })
  )

const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1])
const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4))

/** A test company with raised limits, and a variant in stock that ships to GB. */
const setup = Effect.gen(function* () {
  const company = yield* createCompany()
  yield* raiseLimits(company.companyId)
  const sql = yield* SqlClient.SqlClient
  const [variant] = yield* sql<{ id: string }>`
    SELECT v.id FROM variants v JOIN variant_locations l ON l.variant_id = v.id
    WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND 'GB' = ANY (l.ships_to) AND l.stock > 100
    ORDER BY l.stock DESC, v.id LIMIT 1`
  return { ...company, variantId: variant!.id }
})

const orderRequest = (apiKey: string, variantId: string, idempotencyKey: string) =>
  rawRequest(
    "POST",
    orders,
    { "x-api-key": apiKey },
    JSON.stringify({ variantId, recipient, shippingAddress: londonAddress, idempotencyKey })
  )

describe("a client that goes quiet", () => {
  it.layer(CheckoutTestServer, { timeout: 120_000 })((it) => {
    it.effect("is answered when it half-closes its connection after sending its request", () =>
      Effect.gen(function* () {
        const health = yield* sendAndHalfClose(rawRequest("GET", "/health", {}))
        expect(statusOf(health)).toBe(200)

        const company = yield* setup
        const placed = yield* sendAndHalfClose(orderRequest(company.apiKey, company.variantId, "half-closed"))
        expect(statusOf(placed)).toBe(201)
        expect(bodyOf(placed).data).toMatchObject({ idempotencyKey: "half-closed", status: "active" })
      })
    )

    it.effect("places an order whose client went away once it was sent, and replays it on the same key", () =>
      Effect.gen(function* () {
        const company = yield* setup
        yield* sendAndVanish(orderRequest(company.apiKey, company.variantId, "abandoned"))

        const byKey = `${orders}?filter[idempotencyKey]=abandoned`
        const listed = yield* eventually(
          getWith(byKey, keyHeaders(company.apiKey)),
          (response) => response.body.data.length === 1,
          "the abandoned order to be placed"
        )
        const order = listed.body.data[0]

        const replayed = yield* sendAndHalfClose(orderRequest(company.apiKey, company.variantId, "abandoned"))
        expect(statusOf(replayed)).toBe(201)
        expect(replayed.toLowerCase()).toContain("idempotent-replayed: true")
        expect(bodyOf(replayed).data.id).toBe(order.id)
      })
    )
  })
})
