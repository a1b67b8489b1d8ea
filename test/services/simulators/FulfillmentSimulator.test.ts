import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import type { BookingRecord } from "../../../src/domain/fulfillment/Orders.js"
import { FulfillmentPartner } from "../../../src/services/fulfillment/FulfillmentPartner.js"
import {
  FulfillmentSettings,
  FulfillmentSimulator,
  makeFulfillmentSettings,
  trackingFor
} from "../../../src/services/simulators/FulfillmentSimulator.js"

/** The simulator as the fulfillment partner, and itself for its controls. */
const Partner = FulfillmentSimulator.partner.pipe(Layer.provide(FulfillmentSettings.Default))

const order = { idempotencyKey: "k", variantId: "v1", productId: "p1", productTitle: "Mug", variantTitle: "Blue" }
const submission = { ...order, quantity: 2, amount: 2500, currency: "USD", countryCode: "GB" }

const booking = (status: BookingRecord["status"]): BookingRecord => ({
  id: "0123456789abcdef01234567",
  ...order,
  quantity: 1,
  amount: 2500,
  currency: "USD",
  countryCode: "JP",
  status,
  carrier: null,
  trackingNumber: null,
  trackingUrl: null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  shippedAt: null,
  deliveredAt: null,
  cancelledAt: null
})

describe("FulfillmentSettings", () => {
  it("defaults to no latency, no failures and a step a minute; refuses a rate outside 0..1", () => {
    const defaults = makeFulfillmentSettings()
    expect(defaults.failureRate).toBe(0)
    expect(defaults.latency).toEqual(makeFulfillmentSettings({ latency: 0 }).latency)
    expect(defaults.progressEvery).toEqual(makeFulfillmentSettings({ progressEvery: "1 minute" }).progressEvery)
    expect(() => makeFulfillmentSettings({ failureRate: 1.5 })).toThrow(RangeError)
    expect(() => makeFulfillmentSettings({ failureRate: Number.NaN })).toThrow(RangeError)
  })
})

describe("trackingFor", () => {
  it("is deterministic, carrier-shaped and linked to the carrier's https tracking page", () => {
    for (let i = 0; i < 50; i++) {
      const id = (0x10000000 + i).toString(16).padEnd(24, "a")
      for (const country of ["US", "GB", "JP", "CA", "DE", "FR", null]) {
        const tracking = trackingFor(id, country)
        expect(trackingFor(id, country)).toEqual(tracking)
        expect(tracking.trackingUrl.startsWith("https://")).toBe(true)
        expect(tracking.trackingUrl).toContain(tracking.trackingNumber)
        expect(tracking.trackingNumber).toMatch(/^[0-9A-Z]{10,22}$/)
      }
      expect(trackingFor(id, "JP").carrier).toBe("Japan Post")
      expect(trackingFor(id, "JP").trackingNumber).toMatch(/^E[A-Z]\d{9}JP$/)
      expect(["Royal Mail", "DHL"]).toContain(trackingFor(id, "GB").carrier)
      expect(["UPS", "FedEx", "USPS"]).toContain(trackingFor(id, "US").carrier)
    }
  })
})

describe("the simulator as the FulfillmentPartner", () => {
  it.effect("is the same instance as the simulator, and takes a submission while nothing is forced", () =>
    Effect.gen(function* () {
      const partner = yield* FulfillmentPartner
      const simulator = yield* FulfillmentSimulator
      expect(partner.progressEvery).toEqual(simulator.settings.progressEvery)
      yield* partner.submit(submission)
      yield* simulator.forceFailure("v1", "transient", 1)
      expect(yield* Effect.flip(partner.submit(submission))).toMatchObject({ _tag: "FulfillmentUnavailable" })
      yield* partner.submit(submission)
      yield* simulator.forceFailure("v1", "out_of_stock", 1)
      const refused = yield* Effect.flip(partner.submit(submission))
      expect(refused).toMatchObject({ _tag: "FulfillmentRejected", reason: "out_of_stock", variantId: "v1" })
      expect(refused.message).toContain("2 units")
      expect(Exit.isFailure(yield* Effect.exit(simulator.forceFailure("v1", "transient", 0)))).toBe(true)
    }).pipe(Effect.provide(Partner))
  )

  it.effect("moves an order one step each time it is asked, with tracking once shipped; never past delivered", () =>
    Effect.gen(function* () {
      const partner = yield* FulfillmentPartner
      expect(yield* partner.progress(booking("placed"))).toEqual(
        Option.some({ status: "processing", tracking: Option.none() })
      )
      const shipped = yield* partner.progress(booking("processing"))
      expect(shipped).toEqual(
        Option.some({ status: "shipped", tracking: Option.some(trackingFor(booking("processing").id, "JP")) })
      )
      expect(Option.map(yield* partner.progress(booking("shipped")), (p) => p.status)).toEqual(Option.some("delivered"))
      expect(yield* partner.progress(booking("delivered"))).toEqual(Option.none())
      expect(yield* partner.progress(booking("cancelled"))).toEqual(Option.none())
      yield* partner.cancel(booking("processing"))
    }).pipe(Effect.provide(Partner))
  )
})
