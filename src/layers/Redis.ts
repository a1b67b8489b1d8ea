import { RateLimiter } from "@effect/experimental"
import { Context, Duration, Effect, Layer, Option, Redacted, Runtime } from "effect"
import { Redis } from "ioredis"
import { rateLimitStoreAvailable, rateLimitStoreUnavailable, TokenBuckets } from "../services/platform/RateLimits.js"
import { AppConfig } from "./Config.js"

/**
 * The rate-limit stores: in memory by default; with REDIS_URL, Redis shared by every instance. Two of them
 * on one connection: the company API's token buckets (`TokenBuckets`, several buckets decided in one
 * atomic step) and the `@effect/experimental` RateLimiterStore, whose fixed windows the OAuth limits use.
 *
 * Ours rather than `@effect/experimental`'s Redis store, which takes the time from each instance's clock
 * and never expires its keys: here the Lua scripts read the time from Redis `TIME` (instances with skewed
 * clocks agree) and set `PEXPIRE` to when the bucket would be full again (an idle company leaves nothing
 * behind). A failed call is a `RateLimitStoreError`; src/services/platform/RateLimits.ts decides what that
 * means, and hears from here when the connection is lost and when it is back.
 */

interface RedisWithBuckets extends Redis {
  ribbonTakeTokens(...keysThenArgs: Array<string | number>): Promise<Array<number>>
  ribbonFixedWindow(key: string, tokens: number, refillMillis: number, limit: number): Promise<[number, number]>
}

/**
 * KEYS are the buckets; ARGV holds each one's size and milliseconds per token, in pairs. Refills every
 * bucket, then takes one token from each if every one has a token, and none otherwise. Returns each
 * bucket's tokens before the take. The memory store (TokenBuckets.layerMemory) does the same.
 */
const takeTokensLua = `
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local tokens, last = {}, {}
local take = 1
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i - 1])
  local refill_ms = tonumber(ARGV[2 * i])
  local state = redis.call("HMGET", key, "tokens", "last")
  local current = tonumber(state[1])
  local since = tonumber(state[2])
  if not current then
    current = limit
    since = now
  end
  local added = math.floor((now - since) / refill_ms)
  if added > 0 then
    current = current + added
    since = since + added * refill_ms
  end
  if current >= limit then
    current = limit
    since = now
  end
  if current < 1 then take = 0 end
  tokens[i] = current
  last[i] = since
end
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i - 1])
  local refill_ms = tonumber(ARGV[2 * i])
  local left = tokens[i] - take
  redis.call("HSET", key, "tokens", left, "last", last[i])
  redis.call("PEXPIRE", key, math.ceil((limit - left) * refill_ms) + 1000)
end
return tokens
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

/** How long the first connection may take; then the start goes on, failing open, and says so. */
const connectTimeout = Duration.seconds(2)
/** How long a call may wait for Redis's answer before the request goes through without it. */
const commandTimeout = Duration.seconds(1)

/** Where the client connects, for log lines (never the URL, which may hold a password). */
const addressOf = (client: Redis) => client.options.path ?? `${client.options.host}:${client.options.port}`

/** The rate-limit stores (TokenBuckets and the RateLimiterStore) on Redis at `url`, their keys under `prefix`. */
export const redisRateLimiterStore = (options: { readonly url: string; readonly prefix: string }) =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<never>()
      let closing = false
      const redis = yield* Effect.acquireRelease(
        Effect.sync(() => {
          // No offline queue and few retries: while Redis is down, calls fail at once (fail open) instead of
          // piling up; and a Redis that stops answering on an open connection fails them after commandTimeout.
          const client = new Redis(options.url, {
            enableOfflineQueue: false,
            maxRetriesPerRequest: 1,
            connectTimeout: Duration.toMillis(connectTimeout),
            commandTimeout: Duration.toMillis(commandTimeout),
            lazyConnect: false
          }) as RedisWithBuckets
          const where = addressOf(client)
          // The connection's state is the outage's: one line when it is lost (or never made), one when it is back.
          client.on("error", (error) => {
            if (closing) return
            Runtime.runFork(runtime)(
              rateLimitStoreUnavailable(`Redis unreachable at ${where}; rate limits fail open`, error)
            )
          })
          client.on("ready", () => {
            Runtime.runFork(runtime)(
              rateLimitStoreAvailable(`Redis reachable again at ${where}; rate limits apply again`)
            )
          })
          client.defineCommand("ribbonTakeTokens", { lua: takeTokensLua })
          client.defineCommand("ribbonFixedWindow", { lua: fixedWindowLua, numberOfKeys: 1 })
          return client
        }),
        (client) =>
          Effect.promise(() => {
            closing = true
            return client.quit().catch(() => client.disconnect())
          })
      )
      // Commands fail while not connected, so wait for the first connection, or its first error (logged
      // above): a Redis that refuses connections is reported at once, one that does not answer after
      // connectTimeout. Either way requests go through (fail open) until it comes up.
      yield* Effect.async<void>((resume) => {
        if (redis.status === "ready") return resume(Effect.void)
        const done = () => {
          redis.off("ready", done)
          redis.off("error", done)
          resume(Effect.void)
        }
        redis.once("ready", done)
        redis.once("error", done)
        return Effect.sync(() => {
          redis.off("ready", done)
          redis.off("error", done)
        })
      }).pipe(
        Effect.timeout(Duration.sum(connectTimeout, Duration.seconds(1))),
        Effect.catchTag("TimeoutException", (timeout) =>
          rateLimitStoreUnavailable(`Redis not answering at ${addressOf(redis)}; rate limits fail open`, timeout)
        )
      )
      const buckets = TokenBuckets.of({
        take: (specs) =>
          Effect.tryPromise({
            try: () =>
              redis.ribbonTakeTokens(
                specs.length,
                ...specs.map((spec) => `${options.prefix}${spec.key}`),
                ...specs.flatMap((spec) => [spec.limit, spec.refillMillis])
              ),
            catch: storeError
          })
      })
      const store = RateLimiter.RateLimiterStore.of({
        // Ribbon's token buckets go through TokenBuckets, which decides several buckets at once.
        tokenBucket: () => Effect.dieMessage("Token buckets on Redis go through TokenBuckets.take"),
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
      return Context.make(TokenBuckets, buckets).pipe(Context.add(RateLimiter.RateLimiterStore, store))
    })
  )

/** Both stores in this process's memory (tests, and one instance without Redis). */
export const RateLimitStoresMemory = Layer.merge(RateLimiter.layerStoreMemory, TokenBuckets.layerMemory)

/** The stores the server uses: Redis with REDIS_URL, memory otherwise. */
export const RateLimiterStoreLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.redisUrl, {
      onNone: () => RateLimitStoresMemory,
      onSome: (url) => redisRateLimiterStore({ url: Redacted.value(url), prefix: "ribbon:ratelimit:" })
    })
  )
)

/** The RateLimiter (the OAuth windows) and TokenBuckets (the company API's buckets) on the configured stores. */
export const RateLimiterLive = RateLimiter.layer.pipe(Layer.provideMerge(RateLimiterStoreLive))

/** The same on the memory stores (tests, and one instance without Redis). */
export const RateLimiterMemoryLive = RateLimiter.layer.pipe(Layer.provideMerge(RateLimitStoresMemory))
