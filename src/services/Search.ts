import { SqlClient } from "@effect/sql"
import { Effect, Either, Schema } from "effect"
import { Collection, ProductSummary } from "../domain/Catalog.js"
import { CollectionNotFound, FieldIssue, InvalidRequest } from "../domain/Errors.js"
import { type BudgetRange, parseBudget } from "./Budget.js"
import { availableIn, Catalog, decodeCursor, encodeCursor } from "./Catalog.js"
import { Pricing, type PricingCountry, type PricingReference } from "./Pricing.js"

/**
 * Product search (`GET /v1/search`, docs/search.md): Postgres full-text search weighted title > brand >
 * category/tags > description, with `pg_trgm` on the title so typos still match; filters on the item price
 * in the country's currency, collection, tags and availability in the country; keyset pagination.
 */

export const SearchSort = Schema.Literal("relevance", "price_asc", "price_desc", "newest")
export type SearchSort = typeof SearchSort.Type

export const DEFAULT_SEARCH_LIMIT = 20

export interface SearchParams {
  readonly q?: string | undefined
  readonly budget?: string | undefined
  /** Minor units of the country's currency. */
  readonly minPrice?: number | undefined
  /** Minor units of the country's currency. */
  readonly maxPrice?: number | undefined
  readonly country?: string | undefined
  readonly collectionId?: string | undefined
  readonly tagIds?: ReadonlyArray<string> | undefined
  readonly sort?: SearchSort | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** What the search applied, echoed to the caller (amounts in minor units). */
export const AppliedBudget = Schema.Struct({
  input: Schema.String,
  kind: Schema.Literal("max", "min", "between", "around", "exact"),
  currency: Schema.String.annotations({ description: "The currency the budget was written in" }),
  currencyNamed: Schema.Boolean,
  min: Schema.NullOr(Schema.Int).annotations({ description: "Minor units of `currency`" }),
  max: Schema.NullOr(Schema.Int).annotations({ description: "Minor units of `currency`" }),
  converted: Schema.Struct({
    currency: Schema.String,
    min: Schema.NullOr(Schema.Int),
    max: Schema.NullOr(Schema.Int)
  }).annotations({ description: "The budget in the country's currency (FX-converted when it was written in another)" }),
  overriddenBy: Schema.Array(Schema.Literal("minPrice", "maxPrice"))
}).annotations({ identifier: "AppliedBudget" })

export const AppliedFilters = Schema.Struct({
  q: Schema.NullOr(Schema.String),
  country: Schema.String,
  currency: Schema.String,
  minPrice: Schema.NullOr(Schema.Int).annotations({ description: "Item price floor, minor units of `currency`" }),
  maxPrice: Schema.NullOr(Schema.Int).annotations({ description: "Item price ceiling, minor units of `currency`" }),
  budget: Schema.NullOr(AppliedBudget),
  collectionId: Schema.NullOr(Schema.String),
  tagIds: Schema.Array(Schema.String),
  availableIn: Schema.String.annotations({ description: "Only products with a variant purchasable in this country" }),
  sort: SearchSort,
  limit: Schema.Int
}).annotations({ identifier: "AppliedFilters" })
export type AppliedFilters = typeof AppliedFilters.Type

export const SearchResult = Schema.Struct({
  products: Schema.Array(ProductSummary),
  collections: Schema.Array(Collection),
  nextCursor: Schema.NullOr(Schema.String),
  appliedFilters: AppliedFilters
}).annotations({ identifier: "SearchResult" })
export type SearchResult = typeof SearchResult.Type

// ---------------------------------------------------------------------------------------------------------
// Budget conversion between currencies, exactly (BigInt), half-up.

const decimal = (text: string) => {
  const [whole = "0", fraction = ""] = text.trim().split(".")
  return { numerator: BigInt(whole + fraction), scale: BigInt(fraction.length) }
}

/** `amount` minor units of a currency at `fromFx` per USD to minor units of one at `toFx` per USD. */
export const convertBetween = (
  amount: number,
  from: { readonly fxRate: string; readonly digits: number },
  to: { readonly fxRate: string; readonly digits: number }
): number => {
  const f = decimal(from.fxRate)
  const t = decimal(to.fxRate)
  const n = BigInt(amount) * t.numerator * 10n ** BigInt(to.digits) * 10n ** f.scale
  const d = f.numerator * 10n ** BigInt(from.digits) * 10n ** t.scale
  return Number((2n * n + d) / (2n * d))
}

const invalid = (path: string, message: string) =>
  new InvalidRequest({ message: `${path}: ${message}`, errors: [FieldIssue.make({ path, message })] })

const budgetIn = (
  reference: PricingReference,
  budget: BudgetRange,
  country: PricingCountry
): Either.Either<{ min: number | undefined; max: number | undefined }, InvalidRequest> => {
  if (budget.currency === country.currency) return Either.right({ min: budget.min, max: budget.max })
  const source = reference.countries.find((c) => c.currency === budget.currency)
  if (source === undefined) {
    return Either.left(
      invalid(
        "budget",
        `Amounts in ${budget.currency} cannot be converted; use ${country.currency} or a currency of a supported country.`
      )
    )
  }
  const convert = (amount: number | undefined) =>
    amount === undefined ? undefined : convertBetween(amount, source, country)
  return Either.right({ min: convert(budget.min), max: convert(budget.max) })
}

// ---------------------------------------------------------------------------------------------------------

export class Search extends Effect.Service<Search>()("Search", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* Catalog
    const pricing = yield* Pricing

    const search = Effect.fn("Search.search")(function* (params: SearchParams) {
      const reference = yield* pricing.reference()
      const country = yield* catalog.country(params.country, "country", reference)
      const q = params.q?.trim() || undefined
      const limit = params.limit ?? DEFAULT_SEARCH_LIMIT
      // Without words there is nothing to rank: relevance falls back to newest first.
      const sort: SearchSort = params.sort ?? "relevance"
      const ordering: SearchSort = sort === "relevance" && q === undefined ? "newest" : sort

      // Price range: budget prose first, then minPrice/maxPrice override each bound they give.
      let budget: typeof AppliedBudget.Type | null = null
      let min = params.minPrice
      let max = params.maxPrice
      if (params.budget !== undefined && params.budget.trim() !== "") {
        const parsed = parseBudget(params.budget, { currency: country.currency })
        if (Either.isLeft(parsed)) return yield* invalid("budget", parsed.left.message)
        const converted = yield* budgetIn(reference, parsed.right, country)
        const overriddenBy: Array<"minPrice" | "maxPrice"> = []
        if (params.minPrice !== undefined) overriddenBy.push("minPrice")
        else min = converted.min
        if (params.maxPrice !== undefined) overriddenBy.push("maxPrice")
        else max = converted.max
        budget = {
          input: params.budget,
          kind: parsed.right.kind,
          currency: parsed.right.currency,
          currencyNamed: parsed.right.currencyNamed,
          min: parsed.right.min ?? null,
          max: parsed.right.max ?? null,
          converted: { currency: country.currency, min: converted.min ?? null, max: converted.max ?? null },
          overriddenBy
        }
      }
      if (min !== undefined && max !== undefined && min > max) {
        return yield* invalid("minPrice", `minPrice (${min}) is above maxPrice (${max}).`)
      }
      if (params.collectionId !== undefined && !(yield* catalog.collectionExists(params.collectionId))) {
        return yield* new CollectionNotFound({
          message: `No collection ${params.collectionId}.`,
          collectionId: params.collectionId
        })
      }
      const tagIds = params.tagIds ?? []
      const after = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor, ordering, 2)
      if (after !== undefined) yield* checkCursorKey(ordering, after)

      const filters = sql.and([
        availableIn(sql, country, { min, max }),
        q === undefined
          ? sql`true`
          : sql`(p.search_document @@ websearch_to_tsquery('english', ${q}) OR lower(${q}) <% lower(p.title)
                OR lower(${q}) % lower(p.title))`,
        params.collectionId === undefined
          ? sql`true`
          : sql`EXISTS (SELECT 1 FROM collection_products cp
                        WHERE cp.collection_id = ${params.collectionId} AND cp.product_id = p.id)`,
        ...tagIds.map(
          (tagId) => sql`EXISTS (SELECT 1 FROM product_tags pt WHERE pt.product_id = p.id AND pt.tag_id = ${tagId})`
        )
      ])

      const key = (() => {
        switch (ordering) {
          case "relevance": {
            const query = q ?? ""
            const tsq = sql`websearch_to_tsquery('english', ${query})`
            // 1. An exact title match (case-insensitive) first: +100.
            // 2. Full-text matches (10+) in tiers by where every word matched: title (+6), else title or brand
            //    (+3), else title, brand, category or tags (+1), else description only (+0); within a tier the
            //    weighted ts_rank (A 1.0, B 0.4, C 0.2, D 0.1; at most 0.9) and a little title similarity.
            // 3. Trigram-only (typo) matches after every full-text match, by word similarity to the title (< 1).
            return sql`round((
              CASE WHEN lower(p.title) = lower(${query}) THEN 100 ELSE 0 END
              + CASE WHEN p.search_document @@ ${tsq}
                  THEN 10
                    + 3 * (ts_filter(p.search_document, '{a}') @@ ${tsq})::int
                    + 2 * (ts_filter(p.search_document, '{a,b}') @@ ${tsq})::int
                    + (ts_filter(p.search_document, '{a,b,c}') @@ ${tsq})::int
                    + 0.9 * ts_rank('{0.1, 0.2, 0.4, 1.0}', p.search_document, ${tsq})
                    + 0.05 * similarity(lower(p.title), lower(${query}))
                  ELSE greatest(word_similarity(lower(${query}), lower(p.title)),
                                similarity(lower(p.title), lower(${query})))
                END
            )::numeric, 6)`
          }
          case "price_asc":
            return sql`coalesce(p.min_price_usd, 2147483647)`
          case "price_desc":
            return sql`coalesce(p.min_price_usd, -1)`
          case "newest":
            return sql`p.created_at`
        }
      })()

      const keyset = (() => {
        if (after === undefined) return sql`true`
        const [k, id] = after as [string | number, string]
        switch (ordering) {
          case "relevance":
            return sql`(s.k < ${String(k)}::numeric OR (s.k = ${String(k)}::numeric AND s.id > ${id}))`
          case "price_asc":
            return sql`(s.k > ${Number(k)} OR (s.k = ${Number(k)} AND s.id > ${id}))`
          case "price_desc":
            return sql`(s.k < ${Number(k)} OR (s.k = ${Number(k)} AND s.id > ${id}))`
          case "newest":
            return sql`(s.k < ${String(k)}::timestamptz OR (s.k = ${String(k)}::timestamptz AND s.id < ${id}))`
        }
      })()

      const order = {
        relevance: sql`s.k DESC, s.id`,
        price_asc: sql`s.k, s.id`,
        price_desc: sql`s.k DESC, s.id`,
        newest: sql`s.k DESC, s.id DESC`
      }[ordering]

      const rows = yield* sql<{ id: string; k: string | number; kText: string }>`
        SELECT s.id, s.k, s.k_text FROM (
          SELECT p.id, ${key} AS k,
                 ${ordering === "newest" ? sql`to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` : sql`(${key})::text`} AS k_text
          FROM products p
          WHERE ${filters}
        ) s
        WHERE ${keyset}
        ORDER BY ${order}
        LIMIT ${limit + 1}`.pipe(Effect.orDie)

      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      const nextCursor =
        rows.length > limit && last !== undefined
          ? encodeCursor({
              s: ordering,
              k: [ordering === "price_asc" || ordering === "price_desc" ? Number(last.kText) : last.kText, last.id]
            })
          : null

      const appliedFilters: AppliedFilters = {
        q: q ?? null,
        country: country.code,
        currency: country.currency,
        minPrice: min ?? null,
        maxPrice: max ?? null,
        budget,
        collectionId: params.collectionId ?? null,
        tagIds,
        availableIn: country.code,
        sort: ordering,
        limit
      }
      yield* Effect.annotateCurrentSpan({ "search.results": page.length, "search.sort": ordering })
      return {
        products: yield* catalog.summaries(
          page.map((row) => row.id),
          country
        ),
        collections: q === undefined || after !== undefined ? [] : yield* catalog.matchingCollections(q, country),
        nextCursor,
        appliedFilters
      } satisfies SearchResult
    })

    return { search } as const
  }),
  dependencies: [Catalog.Default, Pricing.Default]
}) {}

/** The key of a decoded cursor must have the ordering's type, and an id. */
const checkCursorKey = (ordering: SearchSort, key: ReadonlyArray<string | number>) => {
  const [k, id] = key
  const ok =
    typeof id === "string" &&
    /^[0-9a-f]{24}$/.test(id) &&
    (ordering === "relevance"
      ? typeof k === "string" && /^-?\d+(\.\d+)?$/.test(k)
      : ordering === "newest"
        ? typeof k === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(k)
        : typeof k === "number" && Number.isSafeInteger(k))
  return ok ? Effect.void : Effect.fail(invalid("cursor", "Malformed cursor."))
}
