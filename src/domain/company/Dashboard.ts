import { Schema } from "effect"

/**
 * The company dashboard's sessions (docs/decisions/0056-dashboard-sessions-and-sign-up.md): a person signed in to
 * one company at a time, in a browser. A session lives at most `absoluteHours` from sign-in and ends after
 * `idleHours` without a request; its last use is written at most once per `touchSeconds`, so reading pages does
 * not write on every request.
 */
export const dashboardSessionLifetimes = { idleHours: 12, absoluteHours: 7 * 24, touchSeconds: 60 } as const

/** A live dashboard session: whose, in which company, and until when at the latest. */
export const DashboardSession = Schema.Struct({
  idHash: Schema.String,
  userId: Schema.String,
  companyId: Schema.String,
  createdAt: Schema.DateFromSelf,
  lastSeenAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf,
  sourceAddress: Schema.String
})
export type DashboardSession = typeof DashboardSession.Type

/** A company's name in the dashboard's sign-up: what `companies.name` holds. */
export const companyNameLength = { min: 1, max: 200 } as const
