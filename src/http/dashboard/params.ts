import type { Environment } from "../../domain/company/Company.js"
import type { CurrentMember } from "./session.js"

/** The query parameters the dashboard's lists share, read leniently: a bad value is the default, never an error. */

/** A list's `page` parameter: a page number from 1, and 1 for anything else. */
export const pageNumber = (text: string) => {
  const n = Number(text)
  return Number.isInteger(n) && n >= 1 && n <= 10_000 ? n : 1
}

/** A page's `environment` parameter, or the company's own (live once it is live, else test). */
export const environmentParam = (text: string, current: CurrentMember): Environment =>
  text === "live" || text === "test" ? text : current.company.live ? "live" : "test"

const datePattern = /^\d{4}-\d{2}-\d{2}$/

/** A `YYYY-MM-DD` day that exists, as its midnight in UTC, or none. */
export const dayOf = (text: string): Date | undefined => {
  if (!datePattern.test(text)) return undefined
  const day = new Date(`${text}T00:00:00.000Z`)
  return !Number.isNaN(day.getTime()) && day.toISOString().startsWith(text) ? day : undefined
}

/**
 * A list's `from`/`to` date filters: whole days in UTC, `to` included. Gives the filters as the member wrote them
 * (trimmed, for the form and the links), what is wrong with them, and the bounds: `from`'s midnight and the
 * midnight after `to` (exclusive), or null where a filter is empty.
 */
export const dateRangeOf = (params: { readonly from: string; readonly to: string }) => {
  const filters = { from: params.from.trim(), to: params.to.trim() }
  const problems: Array<string> = []
  const from = filters.from === "" ? null : (dayOf(filters.from) ?? null)
  const to = filters.to === "" ? null : (dayOf(filters.to) ?? null)
  if (filters.from !== "" && from === null) problems.push("From: expected a date as YYYY-MM-DD.")
  if (filters.to !== "" && to === null) problems.push("To: expected a date as YYYY-MM-DD.")
  if (problems.length === 0 && from !== null && to !== null && from > to) problems.push("From: must not be after To.")
  return { filters, problems, from, until: to === null ? null : new Date(to.getTime() + 86_400_000) }
}
