import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { UcpPlatformProfiles } from "../../../src/services/checkout/UcpPlatformProfiles.js"
import { OutboundPolicy } from "../../../src/services/platform/OutboundHttp.js"
import { certificate, httpsReceiver } from "../../support/receiver.js"

/**
 * Platform profiles are kept as long as their Cache-Control says, within the protocol's 60-second floor and
 * Ribbon's hour (docs/decisions/0087-ucp-message-signatures.md), on the Clock: the test moves it.
 */

const profile = (kid: string) =>
  JSON.stringify({ ucp: { version: "2026-04-08" }, signing_keys: [{ kid, kty: "EC", crv: "P-256", x: "x", y: "y" }] })

const Profiles = UcpPlatformProfiles.Default.pipe(
  Layer.provide(OutboundPolicy.layer({ allowLoopback: true, trustedCaPems: [certificate.cert] }))
)

describe("UcpPlatformProfiles", () => {
  it.scoped("keeps a profile for its max-age, at least 60 seconds, at most an hour", () =>
    Effect.gen(function* () {
      const site = yield* httpsReceiver((request, index) => ({
        status: 200,
        headers: {
          "content-type": "application/json",
          "cache-control":
            request.path === "/short"
              ? "no-store"
              : request.path === "/long"
                ? "public, max-age=86400"
                : "public, max-age=300"
        },
        body: profile(`key-${index}`)
      }))
      const profiles = yield* UcpPlatformProfiles
      const kidOf = (path: string) => Effect.map(profiles.profile(site.url(path)), (p) => p.signing_keys[0]!.kid)
      const fetches = (path: string) => site.received.filter((r) => r.path === path).length

      expect(yield* kidOf("/profile")).toBe("key-0")
      yield* TestClock.adjust("299 seconds")
      yield* kidOf("/profile")
      expect(fetches("/profile")).toBe(1)
      yield* TestClock.adjust("2 seconds")
      yield* kidOf("/profile")
      expect(fetches("/profile")).toBe(2)

      // `no-store` still keeps it for the protocol's floor.
      yield* kidOf("/short")
      yield* TestClock.adjust("59 seconds")
      yield* kidOf("/short")
      expect(fetches("/short")).toBe(1)
      yield* TestClock.adjust("2 seconds")
      yield* kidOf("/short")
      expect(fetches("/short")).toBe(2)

      // A day's max-age is kept an hour: a rotated key is seen within it.
      yield* kidOf("/long")
      yield* TestClock.adjust("61 minutes")
      yield* kidOf("/long")
      expect(fetches("/long")).toBe(2)
    }).pipe(Effect.provide(Profiles))
  )

  it.scoped("fetches a kept profile again for an unknown key, once it is older than 60 seconds", () =>
    Effect.gen(function* () {
      // Each fetch publishes the next key, as a platform rotating its keys would.
      const site = yield* httpsReceiver((_, index) => ({
        status: 200,
        headers: { "content-type": "application/json", "cache-control": "public, max-age=3600" },
        body: profile(`key-${index}`)
      }))
      const profiles = yield* UcpPlatformProfiles
      const url = site.url("/profile")
      expect(Option.isSome(yield* profiles.signingKey(url, "key-0"))).toBe(true)
      // Fetched just now: an unknown key does not fetch it again.
      expect(Option.isNone(yield* profiles.signingKey(url, "key-1"))).toBe(true)
      expect(site.received).toHaveLength(1)
      yield* TestClock.adjust("61 seconds")
      expect(Option.isSome(yield* profiles.signingKey(url, "key-1"))).toBe(true)
      expect(site.received).toHaveLength(2)
      // The new profile is kept: another unknown key within the minute fetches nothing.
      expect(Option.isNone(yield* profiles.signingKey(url, "key-9"))).toBe(true)
      expect(site.received).toHaveLength(2)
    }).pipe(Effect.provide(Profiles))
  )
})
