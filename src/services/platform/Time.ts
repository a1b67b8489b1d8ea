import { Clock, Effect } from "effect"

/** The current time as a `Date` (what node-pg binds and returns), read from `Clock` so tests can move it. */
export const nowDate: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

const dayMs = 86_400_000

/**
 * The last `days` whole UTC days up to today (from `Clock`): `from` the first day's midnight, `to` the midnight
 * after today (exclusive), and each day as `YYYY-MM-DD`, oldest first.
 */
export const lastUtcDays = (days: number) =>
  Effect.map(nowDate, (now) => {
    const to = (Math.floor(now.getTime() / dayMs) + 1) * dayMs
    const from = to - days * dayMs
    return {
      from: new Date(from),
      to: new Date(to),
      days: Array.from({ length: days }, (_, n) => new Date(from + n * dayMs).toISOString().slice(0, 10))
    }
  })
