import { RateLimiter } from "@effect/experimental"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { Redis } from "ioredis"
import { AppConfig } from "./Config.js"

/**
 * The rate-limit store: in memory by default; with REDIS_URL, Redis shared by every instance.
 *
 * Ours rather than `@effect/experimental`'s Redis store, which takes the time from each instance's clock
 * and never expires its keys: here the Lua script reads the time from Redis `TIME` (instances with skewed
 * clocks agree) and sets `PEXPIRE` to when the bucket would be full again (an idle company leaves nothing
 * behind). A failed call is a `RateLimitStoreError`; src/services/platform/RateLimits.ts decides what that means.
 */

interface RedisWithBuckets extends Redis {
  ribbonTokenBucket(key: string, tokens: number, refillMillis: number, limit: number, overflow: 0 | 1): Promise<number>
  ribbonFixedWindow(key: string, tokens: number, refillMillis: number, limit: number): Promise<[number, number]>
}

const tokenBucketLua = `
local key = KEYS[1]
local tokens = tonumber(ARGV[1])
local refill_ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local overflow = ARGV[4] == "1"
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call("HMGET", key, "tokens", "last")
local current = tonumber(state[1])
local last = tonumber(state[2])
if not current then
  current = limit
  last = now
end
local refill = math.floor((now - last) / refill_ms)
if refill > 0 then
  current = math.min(current + refill, limit)
  last = last + refill * refill_ms
end
if current >= limit then
  last = now
end
local next = current - tokens
if next >= 0 or overflow then
  current = next
end
redis.call("HSET", key, "tokens", current, "last", last)
redis.call("PEXPIRE", key, math.ceil((limit - current) * refill_ms) + 1000)
return next
`

const fixedWindowLua = `
local key = KEYS[1]
local tokens = tonumber(ARGV[1])
local refill_ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local current = tonumber(redis.call("GET", key))
if not current then
  redis.call("SET", key, tokens, "PX", refill_ms * tokens)
  return { tokens, refill_ms * tokens }
end
local ttl = tonumber(redis.call("PTTL", key))
if ttl < 0 then ttl = 0 end
local next = current + tokens
if limit > 0 and next > limit then
  return { next, ttl }
end
redis.call("SET", key, next, "PX", ttl + refill_ms * tokens)
return { next, ttl + refill_ms * tokens }
`

const storeError = (cause: unknown) =>
  new RateLimiter.RateLimitStoreError({ message: "The rate-limit store is unavailable", cause })

/** A RateLimiterStore on Redis at `url`, its keys under `prefix`. */
export const redisRateLimiterStore = (options: { readonly url: string; readonly prefix: string }) =>
  Layer.scoped(
    RateLimiter.RateLimiterStore,
    Effect.gen(function* () {
      const redis = yield* Effect.acquireRelease(
        Effect.sync(() => {
          // No offline queue and few retries: while Redis is down, calls fail at once (fail open) instead of piling up.
          const client = new Redis(options.url, {
            enableOfflineQueue: false,
            maxRetriesPerRequest: 1,
            lazyConnect: false
          }) as RedisWithBuckets
          client.on("error", () => {}) // reported per call as a RateLimitStoreError
          client.defineCommand("ribbonTokenBucket", { lua: tokenBucketLua, numberOfKeys: 1 })
          client.defineCommand("ribbonFixedWindow", { lua: fixedWindowLua, numberOfKeys: 1 })
          return client
        }),
        (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
      )
      // Commands fail while not connected, so give the first connection a moment; if Redis is down at
      // start, requests go through (fail open) until it comes up.
      yield* Effect.async<void>((resume) => {
        if (redis.status === "ready") return resume(Effect.void)
        redis.once("ready", () => resume(Effect.void))
      }).pipe(Effect.timeout("5 seconds"), Effect.ignore)
      return RateLimiter.RateLimiterStore.of({
        tokenBucket: (o) =>
          Effect.tryPromise({
            try: () =>
              redis.ribbonTokenBucket(
                `${options.prefix}${o.key}`,
                o.tokens,
                Duration.toMillis(o.refillRate),
                o.limit,
                o.allowOverflow ? 1 : 0
              ),
            catch: storeError
          }),
        fixedWindow: (o) =>
          Effect.tryPromise({
            try: () =>
              redis.ribbonFixedWindow(
                `${options.prefix}${o.key}`,
                o.tokens,
                Duration.toMillis(o.refillRate),
                o.limit ?? 0
              ),
            catch: storeError
          })
      })
    })
  )

/** The store the server uses: Redis with REDIS_URL, memory otherwise. */
export const RateLimiterStoreLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.redisUrl, {
      onNone: () => RateLimiter.layerStoreMemory,
      onSome: (url) => redisRateLimiterStore({ url: Redacted.value(url), prefix: "ribbon:ratelimit:" })
    })
  )
)

/** The RateLimiter on the configured store. */
export const RateLimiterLive = RateLimiter.layer.pipe(Layer.provide(RateLimiterStoreLive))

/** The RateLimiter on the memory store (tests, and one instance without Redis). */
export const RateLimiterMemoryLive = RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory))
