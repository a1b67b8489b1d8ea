import { describe, expect, it } from "@effect/vitest"
import { Cache, Deferred, Effect, Exit, Fiber, FiberStatus } from "effect"
import { lookupIn } from "../../../src/services/platform/Caches.js"

/** Polls until `fiber` is suspended (waiting on something), yielding between looks. */
const suspended = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
  Fiber.status(fiber).pipe(
    Effect.tap(() => Effect.yieldNow()),
    Effect.repeat({ until: FiberStatus.isSuspended })
  )

describe("lookupIn", () => {
  it.effect("a lookup shared by two requests completes for the second when the first is interrupted", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const answer = yield* Deferred.make<string>()
      const cache = yield* Cache.make({
        capacity: 10,
        timeToLive: "1 minute",
        lookup: (key: string) =>
          Effect.zipRight(
            Deferred.succeed(started, undefined),
            Effect.map(Deferred.await(answer), (a) => `${key}:${a}`)
          )
      })
      // The first request runs the lookup; the second waits for it. Then the first one's client goes away.
      const first = yield* Effect.fork(lookupIn(cache, "k"))
      yield* Deferred.await(started)
      const second = yield* Effect.fork(lookupIn(cache, "k"))
      yield* suspended(second)
      const interrupted = yield* Effect.fork(Fiber.interrupt(first))
      yield* Deferred.succeed(answer, "found")

      expect(yield* Fiber.join(second)).toBe("k:found")
      expect(Exit.isInterrupted(yield* Fiber.join(interrupted))).toBe(true)
    })
  )
})
