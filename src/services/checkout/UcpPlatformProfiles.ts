import { Cache, Clock, Context, Duration, Effect, Exit, Option, Schedule, Schema } from "effect"
import { UcpAgentMissing, UcpProfileMalformed, UcpProfileUnreachable } from "../../domain/checkout/Errors.js"
import { UcpPlatformProfile } from "../../domain/checkout/UcpPlatformProfile.js"
import { formatPath, plainIssues } from "../../domain/platform/IssueMessages.js"
import { lifetimeOf } from "../identity/ClientMetadataDocuments.js"
import { lookupIn } from "../platform/Caches.js"
import { OutboundHttp } from "../platform/OutboundHttp.js"

/**
 * Platforms' UCP profiles, from the profile URL of their `UCP-Agent` header (docs/decisions/0087-ucp-message-signatures.md):
 * fetched through the outbound guard (https, public addresses, no redirect followed), decoded, and kept in memory
 * for as long as their `Cache-Control` says, within the protocol's 60-second floor and an hour's cap. A profile is
 * fetched only when something needs it (a signed request's key), never to serve an unsigned request.
 */

/** The bounds of fetching a profile; tests may change them. */
export class UcpProfileLimits extends Context.Reference<UcpProfileLimits>()("ribbon/UcpProfileLimits", {
  defaultValue: () => ({
    /** One attempt, DNS included. */
    timeout: Duration.seconds(5) as Duration.Duration,
    /** A longer profile is refused: a profile with many capabilities and keys fits well within it. */
    maxBytes: 64 * 1024,
    /** The protocol's floor: a profile is kept at least this long, whatever its headers say. */
    minLifetime: Duration.seconds(60) as Duration.Duration,
    /** Without caching headers, and the longest kept: a rotated key is seen within the hour. */
    defaultLifetime: Duration.minutes(5) as Duration.Duration,
    maxLifetime: Duration.hours(1) as Duration.Duration,
    /** How many profiles one instance keeps. */
    capacity: 1000
  })
}) {}

/** A profile that could not be reached is tried twice more, soon: a platform's brief hiccup is not the buyer's. */
const retryUnanswered = Schedule.exponential("200 millis").pipe(Schedule.intersect(Schedule.recurs(2)))

interface Fetched {
  readonly profile: UcpPlatformProfile
  readonly lifetime: Duration.Duration
  readonly fetchedAt: number
}

export class UcpPlatformProfiles extends Effect.Service<UcpPlatformProfiles>()("UcpPlatformProfiles", {
  dependencies: [OutboundHttp.Default],
  effect: Effect.gen(function* () {
    const outbound = yield* OutboundHttp
    const limits = yield* UcpProfileLimits

    const fetchProfile = (url: string) =>
      Effect.gen(function* () {
        const malformed = (why: string) =>
          new UcpProfileMalformed({ profileUrl: url, message: `The platform profile at ${url} ${why}.` })
        const response = yield* outbound
          .get(url, {
            headers: { accept: "application/json" },
            timeout: limits.timeout,
            maxResponseBytes: limits.maxBytes
          })
          .pipe(
            Effect.retry({ schedule: retryUnanswered, while: (error) => error._tag === "OutboundFailed" }),
            Effect.catchTags({
              OutboundRefused: (refused) =>
                new UcpAgentMissing({ message: `The platform profile ${url} may not be fetched: ${refused.reason}.` }),
              OutboundFailed: (failed) =>
                new UcpProfileUnreachable({
                  profileUrl: url,
                  message: `Unable to fetch the platform profile at ${url}: ${failed.message}.`
                })
            })
          )
        // A redirect is not followed (the protocol forbids it): only a 200 is a profile.
        if (response.status !== 200) {
          return yield* new UcpProfileUnreachable({
            profileUrl: url,
            message: `Unable to fetch the platform profile at ${url}: it answered ${response.status}, not 200.`
          })
        }
        if (response.truncated) return yield* malformed(`is larger than ${limits.maxBytes} bytes`)
        const json = yield* Effect.try({
          try: () => JSON.parse(response.body) as unknown,
          catch: () => malformed("is not JSON")
        })
        const profile = yield* Schema.decodeUnknown(UcpPlatformProfile)(json).pipe(
          Effect.mapError((error) => {
            const first = plainIssues(error.issue)[0]
            return malformed(
              first === undefined
                ? "is not a UCP profile"
                : `is not a UCP profile: ${formatPath(first.path)}: ${first.message}`
            )
          })
        )
        const lifetime = Duration.clamp(lifetimeOf(response.headers, limits), {
          minimum: limits.minLifetime,
          maximum: limits.maxLifetime
        })
        return { profile, lifetime, fetchedAt: yield* Clock.currentTimeMillis } satisfies Fetched
      })

    // A failure is not kept: the next signed request asks again (after the retries above).
    const profiles = yield* Cache.makeWith({
      capacity: limits.capacity,
      lookup: fetchProfile,
      timeToLive: (exit: Exit.Exit<Fetched, UcpAgentMissing | UcpProfileUnreachable | UcpProfileMalformed>) =>
        Exit.isSuccess(exit) ? exit.value.lifetime : Duration.zero
    })

    /** The profile at `url` (a `UCP-Agent` profile URL), fresh from the cache or fetched now. */
    const profile = Effect.fn("UcpPlatformProfiles.profile")(function* (url: string) {
      yield* Effect.annotateCurrentSpan({ "ucp.profile_url": url })
      return (yield* lookupIn(profiles, url)).profile
    })

    /**
     * The signing key `kid` of the profile at `url`, or none. A kept profile without it is fetched again when it
     * is older than the 60-second floor (a platform that just rotated its key), never more often: the protocol's
     * forced refresh on an unknown key.
     */
    const signingKey = Effect.fn("UcpPlatformProfiles.signingKey")(function* (url: string, kid: string) {
      yield* Effect.annotateCurrentSpan({ "ucp.profile_url": url, "ucp.keyid": kid })
      const find = (fetched: Fetched) =>
        Option.fromNullable(fetched.profile.signing_keys.find((key) => key.kid === kid))
      const kept = yield* lookupIn(profiles, url)
      const found = find(kept)
      const now = yield* Clock.currentTimeMillis
      if (Option.isSome(found) || now - kept.fetchedAt < Duration.toMillis(limits.minLifetime)) return found
      yield* profiles.invalidate(url)
      return find(yield* lookupIn(profiles, url))
    })

    return { profile, signingKey } as const
  })
}) {}
