import { Clock, Effect } from "effect"

/** The current time as a `Date` (what node-pg binds and returns), read from `Clock` so tests can move it. */
export const nowDate: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
