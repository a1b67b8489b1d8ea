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
