import { type Cache, Duration, Effect, Exit, Option } from "effect"

/**
 * What the caches of credentials share (`KeyStore`'s API keys, `Bearers`' access tokens): a lookup by hash
 * that finds a record or none, the record kept for a short while, a miss never kept. `lookupIn` reads
 * every cache whose lookups are shared by concurrent requests.
 */

/** A `timeToLive` that keeps a record found for `millis` (Cache keeps an entry up to and including its last millisecond) and no miss. */
export const foundFor =
  (millis: number) =>
  <A, E>(exit: Exit.Exit<Option.Option<A>, E>): Duration.Duration =>
    Exit.isSuccess(exit) && Option.isSome(exit.value) ? Duration.millis(millis - 1) : Duration.zero

/** Evicts every record `match` picks: it changed here, and the next request must read it again. */
export const forgetWhere = <K, V, E>(cache: Cache.Cache<K, Option.Option<V>, E>, match: (found: V) => boolean) =>
  Effect.flatMap(cache.entries, (entries) =>
    Effect.forEach(
      entries.filter(([, found]) => Option.isSome(found) && match(found.value)),
      ([key]) => cache.invalidate(key),
      { discard: true }
    )
  )

/**
 * The record under `key`, from the cache or its lookup. A lookup that failed (the database unreachable) is
 * dropped at once, so the next request asks again rather than sharing the failure for its millisecond.
 *
 * The lookup runs in the fiber of the first request to ask, and every request asking meanwhile waits for
 * it: so it cannot be interrupted. Were the first request's client to go away, its interruption would
 * otherwise end the lookup for every request waiting, each failing with an interruption of its own.
 */
export const lookupIn = <K, V, E>(cache: Cache.Cache<K, V, E>, key: K) =>
  Effect.onError(Effect.uninterruptible(cache.get(key)), () => cache.invalidate(key))
