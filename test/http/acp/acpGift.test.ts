import * as Fs from "node:fs"
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  AcpGift,
  GIFT_EXTENDS,
  GIFT_EXTENSION,
  GIFT_EXTENSION_NAME,
  GIFT_SCHEMA_PATH
} from "../../../src/domain/checkout/Acp.js"
import type { Checkout } from "../../../src/domain/checkout/Checkout.js"
import {
  acpPost,
  address,
  conforms,
  conformsWithGift,
  details,
  expectError,
  extensionSchemaAvailable,
  giftSchema,
  giftValid,
  readSession,
  schemaDir,
  validatedCount,
  writtenRows
} from "../../support/acp.js"
import { signedIn } from "../../support/auth.js"
import { availableVariants, makeCheckoutTestServer, payWith } from "../../support/checkout.js"
import { eventually } from "../../support/eventually.js"
import { raw, testPublicUrl } from "../../support/http.js"

/**
 * Ribbon's gift extension of the Agentic Commerce Protocol (docs/agent-protocols.md "Ribbon's gift extension",
 * docs/decisions/0085-acp-gift-extension.md): a recipient distinct from the buyer and a gift message, in the
 * `gift` field of a session that declares `dev.ribbon.gift`. Requests and responses are validated against the
 * protocol's schema (their `gift` against the extension's own, docs/extensions/gift.schema.json) when
 * `ACP_SCHEMA_DIR` names its folder (test/support/acp.ts).
 */

const post = (path: string, body: unknown, options?: Parameters<typeof acpPost>[2]) =>
  acpPost(`/acp${path}`, body, options)

const grace = { first_name: "Grace", last_name: "Hopper", email: "grace@example.com", phone_number: "+44 20 7946 0123" }
const buyer = { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" }
const declared = {
  name: GIFT_EXTENSION_NAME,
  extends: [...GIFT_EXTENDS],
  schema: `${testPublicUrl}${GIFT_SCHEMA_PATH}`
}

/** A create request for one of `variantId` to the address, the gift extension named, with `fields`. */
const giftSession = <A extends object>(variantId: string, fields: A) => ({
  line_items: [{ id: variantId }],
  currency: "gbp",
  capabilities: { extensions: [GIFT_EXTENSION] },
  fulfillment_details: { address },
  ...fields
})

/** Whom the Ribbon checkout is for, and whom it notifies, as stored. */
const checkoutParties = (checkoutId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ recipient: any; notifyEmail: string | null }>`
        SELECT recipient, notify_email FROM checkouts WHERE id = ${checkoutId}`,
      ([row]) => ({
        recipient: typeof row!.recipient === "string" ? JSON.parse(row!.recipient) : row!.recipient,
        notifyEmail: row!.notifyEmail
      })
    )
  )

/** The Ribbon checkout behind a session awaiting payment: the one its `continue_url` pays. */
const checkoutIdOf = (session: { continue_url: string }) => new URL(session.continue_url).pathname.split("/")[2]!

describe("Ribbon's gift extension of ACP", () => {
  it.layer(makeCheckoutTestServer().pipe(signedIn({ defaultCountry: "GB" })), { timeout: 120_000 })((it) => {
    it.effect("is named in the discovery document, with its schema served without a token", () =>
      Effect.gen(function* () {
        const discovery = yield* raw(
          HttpClientRequest.get("/.well-known/acp.json").pipe(HttpClientRequest.setHeader("authorization", ""))
        )
        expect(discovery.status).toBe(200)
        conforms("DiscoveryResponse", discovery.body)
        expect(discovery.body.capabilities.extensions).toEqual([{ name: declared.name, schema: declared.schema }])
        const served = yield* raw(
          HttpClientRequest.get(new URL(declared.schema).pathname).pipe(
            HttpClientRequest.setHeader("authorization", "")
          )
        )
        expect(served.status, served.text).toBe(200)
        expect(served.body).toEqual(giftSchema)
        // The schema's declaration is the one sessions make.
        expect(giftSchema["x-acp-extension"]).toMatchObject({ id: GIFT_EXTENSION_NAME, extends: declared.extends })
      })
    )

    it.effect(
      "create with the extension → the checkout is for the gift's recipient, the buyer notified → paid → completed",
      () =>
        Effect.gen(function* () {
          const [variantId] = yield* availableVariants("GB", "mug", 1)
          // The recipient is the gift's: the fulfillment details need only the address.
          const body = giftSession(variantId!, { buyer, gift: { recipient: grace, message: "Happy birthday, Grace!" } })
          conformsWithGift("CheckoutSessionCreateRequest", body)
          const created = yield* post("/checkout_sessions", body)
          expect(created.status, created.text).toBe(201)
          conformsWithGift("CheckoutSession", created.body)
          expect(created.body).toMatchObject({
            status: "requires_escalation",
            buyer,
            capabilities: { extensions: [declared] },
            gift: body.gift
          })
          const checkoutId = checkoutIdOf(created.body)
          expect(yield* checkoutParties(checkoutId)).toEqual({
            recipient: { firstName: "Grace", lastName: "Hopper", email: "grace@example.com", phone: "+442079460123" },
            notifyEmail: "ada@example.com"
          })

          // Another message keeps the checkout (the message is not part of what it covers); null clears the gift.
          const reworded = { gift: { recipient: grace, message: "Many happy returns!" } }
          conformsWithGift("CheckoutSessionUpdateRequest", reworded)
          const updated = yield* post(`/checkout_sessions/${created.body.id}`, reworded)
          expect(updated.status, updated.text).toBe(200)
          conformsWithGift("CheckoutSession", updated.body)
          expect(updated.body.gift).toEqual(reworded.gift)
          expect(checkoutIdOf(updated.body)).toBe(checkoutId)
          expect((yield* readSession(created.body.id)).body.gift).toEqual(reworded.gift)

          // Paid on the hosted page, the session completes with its order, the gift as it was.
          const paid = yield* payWith({ paymentUrl: updated.body.continue_url } as Checkout)
          expect(paid.status).toBe(200)
          yield* eventually(readSession(created.body.id), (r) => r.body.status === "completed", "completed")
          const completed = yield* post(`/checkout_sessions/${created.body.id}/complete`, {
            payment_data: { purchase_order_number: "po-gift" }
          })
          expect(completed.status, completed.text).toBe(200)
          conformsWithGift("CheckoutSessionWithOrder", completed.body)
          expect(completed.body).toMatchObject({ gift: reworded.gift, order: { id: checkoutId } })
          expect((yield* checkoutParties(checkoutId)).recipient.email).toBe("grace@example.com")
        })
    )

    it.effect("clears the gift with null: the fulfillment contact is the recipient again, in a new checkout", () =>
      Effect.gen(function* () {
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const created = yield* post(
          "/checkout_sessions",
          giftSession(variantId!, {
            capabilities: { extensions: [GIFT_EXTENSION_NAME] },
            buyer,
            gift: { recipient: grace }
          })
        )
        expect(created.status, created.text).toBe(201)
        expect(created.body.status).toBe("requires_escalation")
        const cleared = yield* post(`/checkout_sessions/${created.body.id}`, { gift: null })
        expect(cleared.status, cleared.text).toBe(200)
        conforms("CheckoutSession", cleared.body)
        expect(cleared.body.gift).toBeUndefined()
        expect(cleared.body.capabilities.extensions).toEqual([declared])
        expect(cleared.body.status).toBe("not_ready_for_payment")
        expect(cleared.body.messages.map((m: any) => m.param)).toEqual([
          "$.fulfillment_details.name",
          "$.fulfillment_details.phone_number",
          "$.fulfillment_details.email"
        ])
        const contact = yield* post(`/checkout_sessions/${created.body.id}`, { fulfillment_details: details })
        expect(contact.body.status).toBe("requires_escalation")
        expect(checkoutIdOf(contact.body)).not.toBe(checkoutIdOf(created.body))
        expect((yield* checkoutParties(checkoutIdOf(contact.body))).recipient.firstName).toBe("Ada")
      })
    )

    it.effect("without the extension declared, gift is ignored: the fulfillment contact is the recipient", () =>
      Effect.gen(function* () {
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const created = yield* post("/checkout_sessions", {
          line_items: [{ id: variantId! }],
          currency: "gbp",
          capabilities: { extensions: ["discount", `${GIFT_EXTENSION}@2020-01-01`] },
          buyer,
          fulfillment_details: details,
          gift: { recipient: grace, message: "Not read" }
        })
        expect(created.status, created.text).toBe(201)
        conforms("CheckoutSession", created.body)
        expect(created.body.gift).toBeUndefined()
        expect(created.body.capabilities.extensions).toBeUndefined()
        const updated = yield* post(`/checkout_sessions/${created.body.id}`, { gift: { message: "Still not read" } })
        expect(updated.status, updated.text).toBe(200)
        expect(updated.body.gift).toBeUndefined()
        expect((yield* checkoutParties(checkoutIdOf(updated.body))).recipient).toMatchObject({
          firstName: "Ada",
          email: "ada@example.com"
        })
      })
    )

    it.effect("refuses a bad gift with the protocol's error and its param, storing nothing", () =>
      Effect.gen(function* () {
        const [variantId] = yield* availableVariants("GB", "mug", 1)
        const body = giftSession(variantId!, {})
        const before = yield* writtenRows
        const cases: Array<[unknown, string]> = [
          [{ recipient: grace, message: "x".repeat(1001) }, "$.gift.message"],
          [{ message: "" }, "$.gift.message"],
          [{ recipient: { ...grace, email: "grace-at-example.com" } }, "$.gift.recipient.email"],
          [{ recipient: { ...grace, first_name: "G".repeat(61) } }, "$.gift.recipient.first_name"],
          [{ recipient: { ...grace, phone_number: undefined } }, "$.gift.recipient.phone_number"]
        ]
        for (const [gift, param] of cases) {
          expect(giftValid("gift", gift).valid, param).toBe(false)
          const refused = yield* post("/checkout_sessions", { ...body, gift })
          expectError(refused, 400, "invalid")
          expect(refused.body.param).toBe(param)
        }
        expect(yield* writtenRows).toEqual(before)

        // On an update too: the session is left as it was.
        const created = yield* post("/checkout_sessions", { ...body, gift: { recipient: grace, message: "Hi" } })
        expect(created.status, created.text).toBe(201)
        const refused = yield* post(`/checkout_sessions/${created.body.id}`, {
          gift: { recipient: grace, message: "x".repeat(1001) }
        })
        expectError(refused, 400, "invalid")
        expect(refused.body.param).toBe("$.gift.message")
        expect((yield* readSession(created.body.id)).body.gift).toEqual({ recipient: grace, message: "Hi" })

        // A phone number of the right length but not one the checkout takes is the session's message, at its field.
        const misdialled = yield* post(`/checkout_sessions/${created.body.id}`, {
          gift: { recipient: { ...grace, phone_number: "12345678" } }
        })
        expect(misdialled.status, misdialled.text).toBe(200)
        conformsWithGift("CheckoutSession", misdialled.body)
        expect(misdialled.body.status).toBe("not_ready_for_payment")
        expect(misdialled.body.messages.map((m: any) => [m.code, m.param])).toEqual([
          ["invalid", "$.gift.recipient.phone_number"]
        ])
      })
    )

    it.effect("the extension's schema and the bounds Ribbon enforces agree", () =>
      Effect.sync(() => {
        const is = Schema.is(AcpGift)
        const samples: Array<unknown> = [
          {},
          { message: "x" },
          { message: "x".repeat(1000) },
          { message: "x".repeat(1001) },
          { message: "" },
          { recipient: grace },
          { recipient: { ...grace, first_name: "" } },
          { recipient: { ...grace, last_name: "L".repeat(60) } },
          { recipient: { ...grace, last_name: "L".repeat(61) } },
          { recipient: { ...grace, email: "a@b" } },
          { recipient: { ...grace, email: `${"a".repeat(250)}@b.co` } },
          { recipient: { ...grace, phone_number: "+123456" } },
          { recipient: { ...grace, phone_number: "+12345" } },
          { recipient: { ...grace, phone_number: `+${"1".repeat(19)}` } },
          { recipient: { ...grace, phone_number: `+${"1".repeat(20)}` } }
        ]
        for (const sample of samples) expect(giftValid("gift", sample).valid, JSON.stringify(sample)).toBe(is(sample))
      })
    )

    it.effect.skipIf(!extensionSchemaAvailable)(
      `the extension's declaration conforms to the extensions framework (${schemaDir}/schema.extension.json)`,
      () =>
        Effect.sync(() => {
          conforms("extension_metadata", giftSchema["x-acp-extension"], "extension")
          conforms("extension_declaration", declared, "extension")
          conforms("request_extensions", [GIFT_EXTENSION, GIFT_EXTENSION_NAME], "extension")
          expect(validatedCount()).toBeGreaterThan(15)
          expect(Fs.readFileSync(`${schemaDir}/LICENSE`, "utf8")).toMatch(/Apache License/)
        })
    )
  })
})
