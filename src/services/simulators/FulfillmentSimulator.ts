import { createHash } from "node:crypto"
import { Context, Duration, Effect, Layer, Option, Random, Ref } from "effect"
import { type BookingRecord, nextOrderStatus, type Tracking } from "../../domain/fulfillment/Orders.js"
import {
  FulfillmentPartner,
  type FulfillmentPartnerShape,
  FulfillmentRejected,
  FulfillmentUnavailable,
  type PartnerOrder,
  type Progress
} from "../fulfillment/FulfillmentPartner.js"

/**
 * The fulfillment simulator: the shipped `FulfillmentPartner` (`FULFILLMENT_PARTNER=simulator`;
 * docs/decisions/0027-placement-and-orders.md, docs/checkout.md, docs/operations.md "Payment and fulfillment
 * providers"). It keeps no orders and runs no SQL: the Fulfillment service records every order and takes the stock
 * from the catalog; this answers as a supplier would.
 *
 * - `submit` waits the simulated latency (`Effect.sleep`, so TestClock drives it) and fails as a forced
 *   failure or the failure rate says (drawn from `Random`): `FulfillmentUnavailable` is transient,
 *   `FulfillmentRejected` (`out_of_stock`) permanent. Otherwise it takes the order.
 * - `progress` moves every order one step each time it is asked (`placed → processing → shipped →
 *   delivered`), and Ribbon asks every `progressEvery`; `shipped` comes with a carrier, tracking number and
 *   URL, deterministic from the order id and the country it ships to.
 * - `cancel` always succeeds: Ribbon asks only while an order is placed or processing.
 * - `forceFailure` and `clearForcedFailures` are the tests' controls.
 */

// ---------------------------------------------------------------------------------------------------------
// Settings

export interface FulfillmentSettingsShape {
  /** Simulated supplier latency of every submission (Effect.sleep, so TestClock drives it). */
  readonly latency: Duration.Duration
  /** Probability (0..1) that a submission fails transiently, drawn from Effect's `Random`. */
  readonly failureRate: number
  /** How long an order stays in each of placed, processing and shipped before the next step. */
  readonly progressEvery: Duration.Duration
}

export interface FulfillmentSettingsInput {
  readonly latency?: Duration.DurationInput
  readonly failureRate?: number
  readonly progressEvery?: Duration.DurationInput
}

/** Settings with defaults: no latency, no random failures, one step a minute. Dies on an out-of-range rate. */
export const makeFulfillmentSettings = (input: FulfillmentSettingsInput = {}): FulfillmentSettingsShape => {
  const failureRate = input.failureRate ?? 0
  if (!(failureRate >= 0 && failureRate <= 1)) {
    throw new RangeError(`FulfillmentSettings: failureRate must be within 0..1, got ${failureRate}`)
  }
  return {
    latency: Duration.decode(input.latency ?? Duration.zero),
    failureRate,
    progressEvery: Duration.decode(input.progressEvery ?? Duration.minutes(1))
  }
}

export class FulfillmentSettings extends Context.Tag("FulfillmentSettings")<
  FulfillmentSettings,
  FulfillmentSettingsShape
>() {
  /** These settings (the rest default). */
  static readonly layer = (input: FulfillmentSettingsInput = {}): Layer.Layer<FulfillmentSettings> =>
    Layer.sync(FulfillmentSettings, () => makeFulfillmentSettings(input))

  /** latency 0, failureRate 0, progressEvery 1 minute. */
  static readonly Default: Layer.Layer<FulfillmentSettings> = Layer.sync(FulfillmentSettings, () =>
    makeFulfillmentSettings()
  )
}

export type ForcedFailureKind = "transient" | "out_of_stock"

// ---------------------------------------------------------------------------------------------------------
// Carriers and tracking (pure, deterministic)

interface Carrier {
  readonly name: string
  readonly number: (bytes: Uint8Array) => string
  readonly url: (trackingNumber: string) => string
}

const digits = (bytes: Uint8Array, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => String(bytes[(from + i) % bytes.length]! % 10)).join("")
const letters = (bytes: Uint8Array, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => String.fromCharCode(65 + (bytes[(from + i) % bytes.length]! % 26))).join("")
const alphanumerics = (bytes: Uint8Array, from: number, count: number) =>
  Array.from(
    { length: count },
    (_, i) => "0123456789ABCDEFGHJKLMNPRSTVWXYZ"[bytes[(from + i) % bytes.length]! % 32]
  ).join("")

const UPS: Carrier = {
  name: "UPS",
  number: (b) => `1Z${alphanumerics(b, 1, 6)}03${digits(b, 7, 8)}`,
  url: (n) => `https://www.ups.com/track?tracknum=${n}`
}
const FEDEX: Carrier = {
  name: "FedEx",
  number: (b) => `7${digits(b, 1, 11)}`,
  url: (n) => `https://www.fedex.com/fedextrack/?trknbr=${n}`
}
const USPS: Carrier = {
  name: "USPS",
  number: (b) => `9400${digits(b, 1, 18)}`,
  url: (n) => `https://tools.usps.com/go/TrackConfirmAction?tLabels=${n}`
}
const DHL: Carrier = {
  name: "DHL",
  number: (b) => `${1 + (b[1]! % 9)}${digits(b, 2, 9)}`,
  url: (n) => `https://www.dhl.com/global-en/home/tracking/tracking-express.html?submit=1&tracking-id=${n}`
}
const ROYAL_MAIL: Carrier = {
  name: "Royal Mail",
  number: (b) => `${letters(b, 1, 2)}${digits(b, 3, 9)}GB`,
  url: (n) => `https://www.royalmail.com/track-your-item#/tracking-results/${n}`
}
const JAPAN_POST: Carrier = {
  name: "Japan Post",
  number: (b) => `E${letters(b, 1, 1)}${digits(b, 2, 9)}JP`,
  url: (n) => `https://trackings.post.japanpost.jp/services/srv/search/direct?reqCodeNo1=${n}&locale=en`
}
const CANADA_POST: Carrier = {
  name: "Canada Post",
  number: (b) => digits(b, 1, 16),
  url: (n) => `https://www.canadapost-postescanada.ca/track-reperer/en#/search?searchFor=${n}`
}

/** Carriers per destination country; elsewhere one of the international express carriers. */
const carriersByCountry: Readonly<Record<string, ReadonlyArray<Carrier>>> = {
  US: [UPS, FEDEX, USPS],
  CA: [CANADA_POST, UPS],
  GB: [ROYAL_MAIL, DHL],
  JP: [JAPAN_POST],
  DE: [DHL]
}
const internationalCarriers: ReadonlyArray<Carrier> = [DHL, UPS, FEDEX]

/** The carrier, tracking number and tracking URL of an order: the same for the same order id, always. */
export const trackingFor = (orderId: string, countryCode: string | null): Tracking => {
  const bytes = createHash("sha256").update(`ribbon-tracking:${orderId}`).digest()
  const carriers = carriersByCountry[countryCode ?? ""] ?? internationalCarriers
  const carrier = carriers[bytes[0]! % carriers.length]!
  const trackingNumber = carrier.number(bytes)
  return { carrier: carrier.name, trackingNumber, trackingUrl: carrier.url(encodeURIComponent(trackingNumber)) }
}

// ---------------------------------------------------------------------------------------------------------
// Service

interface ForcedFailure {
  readonly kind: ForcedFailureKind
  /** null: until cleared. */
  readonly remaining: number | null
}

export class FulfillmentSimulator extends Effect.Service<FulfillmentSimulator>()("FulfillmentSimulator", {
  effect: Effect.gen(function* () {
    const settings = yield* FulfillmentSettings
    /** Test controls: variant id → forced failure. */
    const forced = yield* Ref.make<ReadonlyMap<string, ForcedFailure>>(new Map())

    /** Takes one use of the variant's forced failure, if any. */
    const takeForced = (variantId: string) =>
      Ref.modify(forced, (all): [Option.Option<ForcedFailureKind>, ReadonlyMap<string, ForcedFailure>] => {
        const failure = all.get(variantId)
        if (failure === undefined) return [Option.none(), all]
        const next = new Map(all)
        if (failure.remaining === null) return [Option.some(failure.kind), all]
        if (failure.remaining <= 1) next.delete(variantId)
        else next.set(variantId, { kind: failure.kind, remaining: failure.remaining - 1 })
        return [Option.some(failure.kind), next]
      })

    /**
     * Takes an order: waits the simulated latency, then fails as a forced failure or the failure rate says
     * (`FulfillmentUnavailable`, or `out_of_stock`). The stock itself is Ribbon's catalog's.
     */
    const submit = Effect.fn("FulfillmentSimulator.submit")(function* (order: PartnerOrder) {
      if (Duration.toMillis(settings.latency) > 0) yield* Effect.sleep(settings.latency)
      const forcedKind = yield* takeForced(order.variantId)
      if (Option.isSome(forcedKind)) {
        if (forcedKind.value === "transient") {
          return yield* new FulfillmentUnavailable({
            variantId: order.variantId,
            message: "The supplier is temporarily unavailable (forced failure); try again shortly."
          })
        }
        const { quantity, variantId } = order
        return yield* new FulfillmentRejected({
          reason: "out_of_stock",
          variantId,
          message: `Variant ${variantId} does not have ${quantity} unit${quantity === 1 ? "" : "s"} in stock.`
        })
      }
      if (settings.failureRate > 0 && (yield* Random.next) < settings.failureRate) {
        return yield* new FulfillmentUnavailable({
          variantId: order.variantId,
          message: "The supplier is temporarily unavailable; try again shortly."
        })
      }
    })

    /** Every order moves one step each time it is asked: the next status, with its tracking once shipped. */
    const progress = Effect.fn("FulfillmentSimulator.progress")((order: BookingRecord) => {
      const next = nextOrderStatus[order.status]
      return Effect.succeed(
        next === undefined
          ? Option.none<Progress>()
          : Option.some<Progress>({
              status: next,
              tracking: next === "shipped" ? Option.some(trackingFor(order.id, order.countryCode)) : Option.none()
            })
      )
    })

    /** The simulated supplier cancels whatever Ribbon still may. */
    const cancel = Effect.fn("FulfillmentSimulator.cancel")((_order: BookingRecord) => Effect.void)

    /**
     * TEST-ONLY control (tests and the e2e flow): the next `times` submissions for the variant (every one
     * until cleared when `times` is omitted) fail: `transient` → FulfillmentUnavailable, `out_of_stock` →
     * FulfillmentRejected. A placement that finds its idempotency key already placed is not affected.
     */
    const forceFailure = Effect.fn("FulfillmentSimulator.forceFailure")(function* (
      variantId: string,
      kind: ForcedFailureKind,
      times?: number
    ) {
      if (times !== undefined && !(Number.isSafeInteger(times) && times > 0)) {
        return yield* Effect.dieMessage(
          `FulfillmentSimulator.forceFailure: times must be a positive integer, got ${times}`
        )
      }
      yield* Ref.update(forced, (all) => new Map(all).set(variantId, { kind, remaining: times ?? null }))
    })

    /** TEST-ONLY control: removes every forced failure. */
    const clearForcedFailures = Effect.fn("FulfillmentSimulator.clearForcedFailures")(function* () {
      yield* Ref.set(forced, new Map())
    })

    return {
      settings,
      progressEvery: settings.progressEvery,
      submit,
      progress,
      cancel,
      forceFailure,
      clearForcedFailures
    } as const
  })
}) {
  /** The simulator as the fulfillment partner, and itself (for its test controls); needs its settings. */
  static readonly partner: Layer.Layer<FulfillmentPartner | FulfillmentSimulator, never, FulfillmentSettings> =
    Layer.effect(
      FulfillmentPartner,
      Effect.map(FulfillmentSimulator, (simulator): FulfillmentPartnerShape => simulator)
    ).pipe(Layer.provideMerge(FulfillmentSimulator.Default))
}
