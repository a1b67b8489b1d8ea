import { HttpServerRequest } from "@effect/platform"
import { Effect, type Schema } from "effect"
import type { BillingMethodRecord } from "../../domain/company/Billing.js"
import { type Account, formatTimestamp } from "../../domain/company/Company.js"
import type { V3Page } from "../../services/platform/V3QuerySql.js"
import { numberedLinks, parseV3Query, type RawParams, type V3QuerySpec } from "../V3Query.js"

/**
 * The company API's version 3 presentation of the company context's records (DESIGN.md §4.9): camelCase
 * fields, `{data}` envelopes, `{data, links}` lists, and the strict request bodies of v3.
 */

/**
 * A v3 request body refuses properties the operation does not define (400 naming each), so that a client
 * still sending a field 3.1 removed learns it at once; v2 bodies ignore them, as they always have.
 */
export const strictBody = <S extends Schema.Schema.Any>(schema: S): S =>
  schema.annotations({ parseOptions: { onExcessProperty: "error" } }) as S

/** The request's query as the v3 parser reads it: a repeated key keeps every value. */
export const searchParams = (url: string): RawParams => {
  const params: Record<string, string | Array<string>> = {}
  for (const [key, value] of new URL(url, "http://ribbon").searchParams) {
    const seen = params[key]
    params[key] = seen === undefined ? value : [...(typeof seen === "string" ? [seen] : seen), value]
  }
  return params
}

/**
 * A page-numbered v3 list: parses the request's query against `spec` (400 on anything it does not accept),
 * reads the page with it, and presents it as `{data, links}`.
 */
export const numberedList = <Row, E, R, Item>(
  spec: V3QuerySpec,
  read: (query: Parameters<typeof numberedLinks>[2]) => Effect.Effect<V3Page<Row>, E, R>,
  present: (row: Row) => Item
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = searchParams(request.url)
    const query = yield* parseV3Query(params, spec)
    const page = yield* read(query)
    const path = new URL(request.url, "http://ribbon").pathname
    return { data: page.rows.map(present), links: numberedLinks(path, params, query, page.hasNext) }
  })

/** Accounts show only `id` and `name` since 3.1. */
export const accountV3 = (account: Account) => ({ id: account.id, name: account.name })

export const billingMethodV3 = (method: BillingMethodRecord) => ({
  id: method.id,
  accountId: method.accountId,
  name: method.name,
  type: method.type,
  status: method.status,
  isDefault: method.isDefault,
  spendingLimit:
    method.spendingLimit === null
      ? null
      : { amount: method.spendingLimit, currency: method.currency, remaining: method.remaining ?? 0 },
  createdAt: formatTimestamp(method.createdAt)
})
