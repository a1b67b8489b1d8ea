import { Clock, Effect, Schedule } from "effect"

/**
 * Waiting on the real clock in tests that otherwise run on TestClock: for background workers, which act
 * in real time (database round trips, LISTEN/NOTIFY), to reach a state, or to have had time to act.
 */

const realClock = Clock.make()

/** Every 25 ms, at most 400 runs in all (10 s), until `done` holds; outputs the last result. */
const polling = <A>(done: (a: A) => boolean) =>
  Schedule.recurUntil(done).pipe(
    Schedule.intersect(Schedule.recurs(399)),
    Schedule.addDelay(() => "25 millis"),
    Schedule.passthrough
  )

/** Re-runs `self` on the real clock until `done` holds (at most 10 s). */
export const eventually = <A, E, R>(self: Effect.Effect<A, E, R>, done: (a: A) => boolean, what: string) =>
  Effect.repeat(self, polling(done)).pipe(
    Effect.flatMap((last) =>
      done(last)
        ? Effect.succeed(last)
        : Effect.dieMessage(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`)
    ),
    Effect.withClock(realClock)
  )

/** Real time for the workers to act (or, as asserted afterwards, not to). */
export const settle = Effect.sleep("200 millis").pipe(Effect.withClock(realClock))
