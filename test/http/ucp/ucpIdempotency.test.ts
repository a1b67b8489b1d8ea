import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { signedIn } from "../../support/auth.js"
import { availableVariants, makeCheckoutTestServer } from "../../support/checkout.js"
import {
  buyer,
  CHECKOUT,
  conforms,
  countOf,
  expectUcpError,
  londonDestination,
  schemaAvailable,
  send,
  validatedCount
} from "../../support/ucp.js"

/**
 * `Idempotency-Key` on the UCP REST binding's writes (docs/decisions/0086-ucp-idempotency-payment-and-mcp.md): the
 * same key and body get the first answer again, another body a 409, and concurrent requests with one key make one
 * checkout. The keys live in the store `/acp` uses, by method and path.
 */

let keys = 0
const newKey = () => `ucp-key-${Date.now()}-${++keys}`
const keyed = (key: string) => ({ "idempotency-key": key })

describe("UCP Idempotency-Key", () => {
  it.layer(makeCheckoutTestServer().pipe(signedIn({ defaultCountry: "GB" })), { timeout: 120_000 })((it) => {
    it.effect("replays the first answer for the same key and body, refuses another body with a 409", () =>
      Effect.gen(function* () {
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const body = { line_items: [{ item: { id: variantId! }, quantity: 1 }] }
        const key = newKey()
        const sessions = yield* countOf("acp_checkout_sessions")
        const first = yield* send("POST", "/checkout-sessions", body, undefined, keyed(key))
        expect(first.status, first.text).toBe(201)
        conforms(CHECKOUT, first.body)
        expect(first.headers["idempotent-replayed"]).toBeUndefined()

        const again = yield* send("POST", "/checkout-sessions", body, undefined, keyed(key))
        expect(again.status, again.text).toBe(201)
        expect(again.body).toEqual(first.body)
        expect(again.headers["idempotent-replayed"]).toBe("true")
        expect(yield* countOf("acp_checkout_sessions")).toBe(sessions + 1)

        // Another body under the key: the protocol's 409, and nothing made.
        const keysBefore = yield* countOf("acp_idempotency_keys")
        const other = yield* send(
          "POST",
          "/checkout-sessions",
          { line_items: [{ item: { id: variantId! }, quantity: 2 }] },
          undefined,
          keyed(key)
        )
        expectUcpError(other, 409, "idempotency_conflict")
        expect(yield* countOf("acp_checkout_sessions")).toBe(sessions + 1)
        expect(yield* countOf("acp_idempotency_keys")).toBe(keysBefore)

        // The key is per method and path: the same key on the checkout's PUT is a new request.
        const id = first.body.id
        const update = {
          line_items: body.line_items,
          buyer,
          fulfillment: { methods: [{ type: "shipping", destinations: [londonDestination] }] }
        }
        const updated = yield* send("PUT", `/checkout-sessions/${id}`, update, undefined, keyed(key))
        expect(updated.status, updated.text).toBe(200)
        expect(updated.body.id).toBe(id)
        const checkouts = yield* countOf("checkouts")
        const replayedUpdate = yield* send("PUT", `/checkout-sessions/${id}`, update, undefined, keyed(key))
        expect(replayedUpdate.body).toEqual(updated.body)
        expect(yield* countOf("checkouts")).toBe(checkouts)

        // A refusal is an answer too: replayed as it was, even once the checkout has changed.
        const cancelKey = newKey()
        const canceled = yield* send("POST", `/checkout-sessions/${id}/cancel`, undefined, undefined, keyed(cancelKey))
        expect(canceled.body.status, canceled.text).toBe("canceled")
        const completeKey = newKey()
        const closed = yield* send(
          "POST",
          `/checkout-sessions/${id}/complete`,
          { payment: {} },
          undefined,
          keyed(completeKey)
        )
        expectUcpError(closed, 405, "checkout_session_closed")
        const closedAgain = yield* send(
          "POST",
          `/checkout-sessions/${id}/complete`,
          { payment: {} },
          undefined,
          keyed(completeKey)
        )
        expect([closedAgain.status, closedAgain.body]).toEqual([405, closed.body])
        expect(closedAgain.headers["idempotent-replayed"]).toBe("true")
        const cancelAgain = yield* send(
          "POST",
          `/checkout-sessions/${id}/cancel`,
          undefined,
          undefined,
          keyed(cancelKey)
        )
        expect([cancelAgain.status, cancelAgain.body]).toEqual([200, canceled.body])
      })
    )

    it.effect("makes one checkout for concurrent requests with one key", () =>
      Effect.gen(function* () {
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const body = {
          line_items: [{ item: { id: variantId! }, quantity: 1 }],
          buyer,
          fulfillment: { methods: [{ type: "shipping", destinations: [londonDestination] }] }
        }
        const key = newKey()
        const [sessions, checkouts] = [yield* countOf("acp_checkout_sessions"), yield* countOf("checkouts")]
        const answers = yield* Effect.all(
          Array.from({ length: 5 }, () => send("POST", "/checkout-sessions", body, undefined, keyed(key))),
          { concurrency: "unbounded" }
        )
        // Each is the first answer, or the protocol's 409 while the first still runs.
        const made = answers.filter((answer) => answer.status === 201)
        expect(made.length).toBeGreaterThanOrEqual(1)
        for (const answer of answers) {
          if (answer.status === 201) expect(answer.body).toEqual(made[0]!.body)
          else {
            expectUcpError(answer, 409, "idempotency_in_flight")
            expect(answer.headers["retry-after"]).toBe("1")
          }
        }
        expect(yield* countOf("acp_checkout_sessions")).toBe(sessions + 1)
        expect(yield* countOf("checkouts")).toBe(checkouts + 1)
        const replay = yield* send("POST", "/checkout-sessions", body, undefined, keyed(key))
        expect(replay.body).toEqual(made[0]!.body)
      })
    )

    it.effect("refuses an empty key as the protocol's 400, leaving nothing", () =>
      Effect.gen(function* () {
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const before = yield* Effect.all([countOf("acp_checkout_sessions"), countOf("acp_idempotency_keys")])
        const empty = yield* send(
          "POST",
          "/checkout-sessions",
          { line_items: [{ item: { id: variantId! }, quantity: 1 }] },
          undefined,
          keyed("")
        )
        expectUcpError(empty, 400, "invalid")
        expect(yield* Effect.all([countOf("acp_checkout_sessions"), countOf("acp_idempotency_keys")])).toEqual(before)
      })
    )

    it.effect.skipIf(!schemaAvailable)("validated the checkouts above against the protocol's schemas", () =>
      Effect.sync(() => expect(validatedCount()).toBeGreaterThanOrEqual(1))
    )
  })
})
