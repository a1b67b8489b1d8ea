import { SqlClient, type SqlError, type Statement } from "@effect/sql"
import { Effect, Either, Schema } from "effect"
import { CollectionNotFound } from "../../domain/catalog/Errors.js"
import type { SummaryRecord } from "../../domain/catalog/Records.js"
import type { AppliedBudget, AppliedFilters, SearchResult, SearchSort } from "../../domain/catalog/Search.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { rowsOf } from "../platform/Rows.js"
import { type BudgetRange, parseBudget } from "./Budget.js"
import { Catalog, decodeCursor, encodeCursor } from "./Catalog.js"
import { availableIn, withSummaryColumns } from "./CatalogRepo.js"
import { Pricing, type PricingCountry, type PricingReference, usdRangeFor } from "./Pricing.js"

/**
 * Product search (`GET /v1/search`, docs/search.md): Postgres full-text search weighted title > brand >
 * category/tags > description, ranked from a term index; words that match nothing are respelled by trigram
 * similarity to the catalog's known words, so typos still match; filters on the item price
 * in the country's currency, collection, tags and availability in the country; keyset pagination.
 */

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

const budgetIn = (
  reference: PricingReference,
  budget: BudgetRange,
  country: PricingCountry
): Either.Either<{ min: number | undefined; max: number | undefined }, InvalidRequest> => {
  if (budget.currency === country.currency) return Either.right({ min: budget.min, max: budget.max })
  const source = reference.countries.find((c) => c.currency === budget.currency)
  if (source === undefined) {
    return Either.left(
      InvalidRequest.field(
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

/** The country's bit in `ships_to_mask` (migration 0022). */
const shipsToBit = (country: PricingCountry) => 1 << country.maskBit

/** Rows of the inline statements below, decoded (decoders built once). */
const foundRows = rowsOf(Schema.Struct({ found: Schema.Boolean }))

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
        if (Either.isLeft(parsed)) return yield* InvalidRequest.field("budget", parsed.left.message)
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
        return yield* InvalidRequest.field("minPrice", `minPrice (${min}) is above maxPrice (${max}).`)
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

      // What a product's id and from/to prices alone rule out (collection, tags, price range), wherever the
      // columns come from: `products`, or the term index's copy of them.
      const usd = usdRangeFor({ min, max }, country.fxRate, country.digits)
      const narrow = (columns: ProductColumns) =>
        sql.and([
          params.collectionId === undefined
            ? sql`true`
            : sql`${columns.id} IN (SELECT product_id FROM collection_products WHERE collection_id = ${params.collectionId})`,
          ...tagIds.map((tagId) =>
            columns.tagIds === undefined
              ? sql`${columns.id} IN (SELECT product_id FROM product_tags WHERE tag_id = ${tagId})`
              : sql`${columns.tagIds} @> ARRAY[${tagId}]::text[]`
          ),
          usd.min === undefined ? sql`true` : sql`${columns.maxPriceUsd} >= ${usd.min}`,
          usd.max === undefined ? sql`true` : sql`${columns.minPriceUsd} <= ${usd.max}`
        ])
      const filters = sql.and([
        availableIn(sql, country, { min, max }),
        narrow({
          id: sql`p.id`,
          minPriceUsd: sql`p.min_price_usd`,
          maxPriceUsd: sql`p.max_price_usd`,
          tagIds: sql`p.tag_ids`
        })
      ])
      const keyset = keysetAfter(sql, ordering, after)
      const members = yield* fewMembers(sql, params.collectionId, tagIds)
      const fetchPage = (words: Words | undefined) =>
        pageQuery(sql, {
          ordering,
          words,
          filters,
          narrow,
          shipsTo: shipsToBit(country),
          members,
          inSets: params.collectionId !== undefined || tagIds.length > 0,
          after,
          keyset,
          limit
        }).pipe(Effect.orDie)

      const typed = q === undefined ? undefined : yield* typedWords(sql, q)
      let rows = yield* fetchPage(typed)
      // Words that match nothing (with the filters) are respelled: "binoculers" finds "Binoculars". On a later
      // page, no rows may just mean the end: respell only if the words as typed match nothing at all.
      let spelling: string | null = null
      if (q !== undefined && typed !== undefined && rows.length === 0 && plainWords(q)) {
        if (after === undefined || !(yield* anyMatch(sql, typed, filters))) {
          const groups = yield* spellings(sql, q)
          if (groups !== undefined) {
            const respelled = yield* respelledWords(sql, groups)
            rows = yield* fetchPage(respelled)
            spelling = respelled.exact
          }
        }
      }

      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      const nextCursor =
        rows.length > limit && last !== undefined
          ? encodeCursor({ s: ordering, k: [ordering === "newest" ? String(last.k) : Number(last.k), last.id] })
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
        limit,
        spelling
      }
      yield* Effect.annotateCurrentSpan({ "search.results": page.length, "search.sort": ordering })
      return {
        products: page.map((row) => catalog.summary(row, country)),
        collections: q === undefined || after !== undefined ? [] : yield* catalog.matchingCollections(q, country),
        nextCursor,
        appliedFilters
      } satisfies SearchResult
    })

    return { search } as const
  }),
  dependencies: [Catalog.Default, Pricing.Default]
}) {}

// ---------------------------------------------------------------------------------------------------------
// The page query (docs/search.md). Every ordering is a total order ending with the id, paged by keyset.

/**
 * What `q` asks for, in SQL:
 * - `tsquery`: what a product's document must match;
 * - `groups`: the lexemes the term index ranks by (plain words only; queries with operators have none, and are
 *   ranked from their documents): a product holding a lexeme of every group holds the words. Words as typed
 *   are a group per lexeme; a respelled word is a group of the lexemes of the words spelled like it;
 * - `parts`: the lexemes of `groups` that are parts of a hyphenated word of `q` ("linen" and "bound" of
 *   "linen-bound"), in every document that holds the word;
 * - `exact`: the text whose exact title match ranks first.
 */
interface Words {
  readonly tsquery: Statement.Fragment
  readonly groups?: ReadonlyArray<ReadonlyArray<string>>
  readonly parts?: ReadonlyArray<string>
  readonly exact: string
}

/** Whether a group is one of `parts`: a part of a hyphenated word, in every product that holds the word. */
const isPartOf = (words: Words, lexemes: ReadonlyArray<string>) =>
  lexemes.length === 1 && words.parts?.includes(lexemes[0]!) === true

/** The groups that narrow the candidates: every group but the parts of a hyphenated word. */
const wholeWordsOf = (words: Words, groups: ReadonlyArray<ReadonlyArray<string>>) =>
  groups.filter((lexemes) => !isPartOf(words, lexemes))

/** Plain words (no quoted phrase, `or` or `-word`): every word is required, so the term index can rank. */
const plainWords = (q: string) => !/"|(^|\s)-\S|(^|\s)or(\s|$)/i.test(q)

/** Each group's distinct lexemes, from rows `(grp, lexeme)`; read first, so that the page query can name them. */
const lexemeGroups = (sql: SqlClient.SqlClient, rows: Statement.Fragment) =>
  groupRows(
    sql`SELECT grp::int AS grp, array_agg(DISTINCT lexeme ORDER BY lexeme) AS lexemes FROM (${rows}) r GROUP BY grp ORDER BY grp`
  ).pipe(
    Effect.map((groups) => groups.map((group) => group.lexemes)),
    Effect.orDie
  )

const groupRows = rowsOf(Schema.Struct({ grp: Schema.Number, lexemes: Schema.Array(Schema.String) }))

const typedLexemeRows = rowsOf(Schema.Struct({ lexeme: Schema.String, part: Schema.Boolean }))

/**
 * The words as typed: `websearch_to_tsquery` (phrases, `or`, `-word`); each lexeme of plain words a group, and
 * which of them are parts of a hyphenated word (the tokens `ts_parse` types 9–11, `hword_numpart`, `hword_part`
 * and `hword_asciipart`, each turned into its lexeme as the document's own were).
 */
const typedWords = (sql: SqlClient.SqlClient, q: string) =>
  Effect.gen(function* () {
    const tsquery = sql`websearch_to_tsquery('english', ${q})`
    if (!plainWords(q)) return { tsquery, exact: q } satisfies Words
    const lexemes = yield* typedLexemeRows(sql`
      SELECT u.lexeme, u.lexeme IN (SELECT unnest(tsvector_to_array(to_tsvector('english', t.token)))
                                    FROM ts_parse('default', ${q}) t WHERE t.tokid IN (9, 10, 11)) AS part
      FROM unnest(to_tsvector('english', ${q})) WITH ORDINALITY AS u(lexeme, p, w, n)
      ORDER BY u.n`).pipe(Effect.orDie)
    return {
      tsquery,
      groups: lexemes.map(({ lexeme }) => [lexeme]),
      parts: lexemes.flatMap(({ lexeme, part }) => (part ? [lexeme] : [])),
      exact: q
    } satisfies Words
  })

/** Respelled words: each group is a word and the known words spelled like it, any one of which will do. */
const respelledWords = (sql: SqlClient.SqlClient, groups: ReadonlyArray<ReadonlyArray<string>>) =>
  Effect.gen(function* () {
    const words = groups.flat()
    const grps = groups.flatMap((group, i) => group.map(() => i))
    return {
      tsquery: sql`to_tsquery('english', ${groups.map((group) => `(${group.join(" | ")})`).join(" & ")})`,
      groups: yield* lexemeGroups(
        sql,
        sql`SELECT a.grp, u.lexeme FROM unnest(${words}::text[], ${grps}::int[]) AS a(word, grp),
                 unnest(to_tsvector('english', a.word)) AS u`
      ),
      exact: groups.map((group) => group[0]).join(" ")
    } satisfies Words
  })

/**
 * For each word of `q`: the word alone when it is a known word (of titles, brands and categories); otherwise
 * the known words spelled most like it, best first (up to three, trigram similarity ≥ 0.3), or the word as
 * typed when nothing is spelled like it. `undefined` when every word is known: nothing to respell.
 */
const spellings = (sql: SqlClient.SqlClient, q: string) =>
  Effect.gen(function* () {
    const typed = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
    const rows = yield* rowsOf(
      Schema.Struct({ word: Schema.String, known: Schema.Boolean, alternatives: Schema.Array(Schema.String) })
    )(sql`
      SELECT q.word, EXISTS (SELECT 1 FROM search_words w WHERE w.word = q.word) AS known,
             coalesce(array_agg(s.word ORDER BY s.similarity DESC, s.word)
                      FILTER (WHERE s.word IS NOT NULL), '{}') AS alternatives
      FROM unnest(${typed}::text[]) WITH ORDINALITY AS q(word, n)
      LEFT JOIN LATERAL (SELECT w.word, similarity(w.word, q.word) AS similarity FROM search_words w
                         WHERE w.word % q.word ORDER BY 2 DESC, 1 LIMIT 3) s ON true
      GROUP BY q.n, q.word ORDER BY q.n`).pipe(Effect.orDie)
    if (rows.every((row) => row.known)) return undefined
    return rows.map((row) => (row.known || row.alternatives.length === 0 ? [row.word] : row.alternatives))
  })

/**
 * Relevance scores are integers, so they round-trip exactly through a cursor: an exact title adds 10^8; a
 * word match scores 10^7, plus its tier (where every word matched), plus less than 10^6 within the tier.
 */
const EXACT_TITLE = 100_000_000
const WORD_MATCH = 10_000_000

const sortKey = (sql: SqlClient.SqlClient, ordering: SearchSort, words: Words | undefined) => {
  switch (ordering) {
    case "relevance": {
      // Queries with operators: the tiers from the document itself, and ts_rank within a tier.
      if (words === undefined) return sql`0`
      const tsq = words.tsquery
      return sql`(CASE WHEN lower(p.title) = lower(${words.exact}) THEN ${EXACT_TITLE} ELSE 0 END + ${WORD_MATCH}
        + 1000000 * (3 * (ts_filter(p.search_document, '{a}') @@ ${tsq})::int
                     + 2 * (ts_filter(p.search_document, '{a,b}') @@ ${tsq})::int
                     + (ts_filter(p.search_document, '{a,b,c}') @@ ${tsq})::int)
        + round(800000 * least(ts_rank('{0.1, 0.2, 0.4, 1.0}', p.search_document, ${tsq}), 1))::int
        + 100000 / (1 + length(ts_filter(p.search_document, '{a}'))))`
    }
    case "price_asc":
    case "price_desc":
      // Never null here: every result has a purchasable, hence priced, variant.
      return sql`p.min_price_usd`
    case "newest":
      return sql`p.created_at`
  }
}

const keysetAfter = (
  sql: SqlClient.SqlClient,
  ordering: SearchSort,
  after: ReadonlyArray<string | number> | undefined
) => {
  if (after === undefined) return sql`true`
  const [k, id] = after as [string | number, string]
  switch (ordering) {
    case "relevance":
    case "price_desc":
      return sql`(s.k < ${Number(k)} OR (s.k = ${Number(k)} AND s.id > ${id}))`
    case "price_asc":
      return sql`(s.k > ${Number(k)} OR (s.k = ${Number(k)} AND s.id > ${id}))`
    case "newest":
      return sql`(s.k < ${String(k)}::timestamptz OR (s.k = ${String(k)}::timestamptz AND s.id < ${id}))`
  }
}

const orderBy = (sql: SqlClient.SqlClient, ordering: SearchSort) =>
  ({
    relevance: sql`s.k DESC, s.id`,
    price_asc: sql`s.k, s.id`,
    price_desc: sql`s.k DESC, s.id`,
    newest: sql`s.k DESC, s.id DESC`
  })[ordering]

interface ProductColumns {
  readonly id: Statement.Fragment
  readonly minPriceUsd: Statement.Fragment
  readonly maxPriceUsd: Statement.Fragment
  /** The product's own copy of its tag ids, where there is one (`products.tag_ids`): no lookup per tag. */
  readonly tagIds?: Statement.Fragment
}

interface PageQuery {
  readonly ordering: SearchSort
  /** The words products must match; `undefined` for every product. */
  readonly words: Words | undefined
  /** Conditions on `p` (availability, price, collection, tags). */
  readonly filters: Statement.Fragment
  /** The conditions of `filters` that need only a product's id and from/to prices, on given columns. */
  readonly narrow: (columns: ProductColumns) => Statement.Fragment
  /** The country's bit in `ships_to_mask`: products without it cannot be available there. */
  readonly shipsTo: number
  /** The ids of the few products the collection or a tag allows, as a query; `undefined` when not few. */
  readonly members: Statement.Fragment | undefined
  /**
   * A collection or tags narrow the products: a word's rows walked in rank order may mostly be outside them
   * (95,000 products of a tag, and the first 105 of them among "thank"'s best 26,754), so a word is then ranked
   * by a sort.
   */
  readonly inSets: boolean
  /** The cursor's key (`[k, id]`), when the page comes after one. */
  readonly after: ReadonlyArray<string | number> | undefined
  /** Conditions on `s.k`, `s.id`: after the cursor. */
  readonly keyset: Statement.Fragment
  readonly limit: number
}

/** The sort key `s.k` as the cursor carries it: `newest` timestamps as text, to the microsecond. */
const cursorKey = (sql: SqlClient.SqlClient, ordering: SearchSort) =>
  ordering === "newest" ? sql`to_char(s.k AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` : sql`s.k`

/**
 * A row of a page: the product's summary, and `k`, the sort key the cursor carries (an integer, or a timestamp
 * for `newest`).
 */
interface PageRow extends SummaryRecord {
  readonly k: number | string
}

/**
 * The rows of `page` (`id`, `k`, in order) with their products' summaries: read with the page, so that a search
 * takes one round trip fewer. A read that finds too few rows and is followed by another wastes its summaries.
 */
const withSummaries = (sql: SqlClient.SqlClient, ordering: SearchSort, page: Statement.Fragment) =>
  withSummaryColumns(sql, page, orderBy(sql, ordering))

/** One page (plus one row, to know whether there is a next): the products, their sort keys and summaries. */
const pageQuery = (sql: SqlClient.SqlClient, page: PageQuery) => {
  const { ordering, words, filters, members, keyset, limit } = page
  // Plain words of no lexeme (only stop words) are in no document.
  if (words?.groups?.length === 0) return Effect.succeed([])
  if (words?.groups !== undefined) {
    const groups = words.groups
    const window = CANDIDATE_WINDOW * (limit + 1)
    // The first candidates in order: one word by relevance read in rank order, several words' titles first,
    // anything else by a bounded sort; all of them sorted only when the window was full and held less than a page.
    const [group] = groups
    const inOrder = () => fromTermIndex(sql, page, words, groups, window)
    const first = (() => {
      if (ordering !== "relevance") return inOrder()
      if (groups.length === 1 && (group!.length === 1 || page.after === undefined) && !page.inSets) {
        return fromRankIndex(sql, page, words, group!, window)
      }
      // The products with every word in the title outrank all others (docs/search.md): a page found among them,
      // or a full window of them, is the page; fewer, and it is looked for among all. Several words only (a
      // hyphenated word's parts not counted): one word, within a collection or tags or beside its own parts
      // ("self-care" is mostly a tag), has few titles, and the second read would follow the first.
      const inTitleTier = page.after === undefined || Number(page.after[0]) >= WORD_MATCH + TITLE_TIER
      if (wholeWordsOf(words, groups).length < 2 || !inTitleTier) return inOrder()
      return Effect.flatMap(fromTermIndex(sql, page, words, groups, window, true), (titles) =>
        titles.rows.length > limit || !titles.complete ? Effect.succeed(titles) : inOrder()
      )
    })()
    return first.pipe(
      Effect.flatMap(({ rows, complete }) =>
        rows.length > limit || complete
          ? Effect.succeed(rows)
          : Effect.map(fromTermIndex(sql, page, words, groups), (all) => all.rows)
      )
    )
  }
  // A small collection or tag: start from its products rather than walk an order index hoping to meet them.
  // The country's bit, on the row the walk reads anyway, rules out most products a small country cannot get
  // before `filters` looks for a variant that ships there.
  const source = members === undefined ? sql`products p` : sql`(${members}) m JOIN products p ON p.id = m.id`
  return sql<PageRow>`${withSummaries(
    sql,
    ordering,
    sql`
    SELECT s.id, ${cursorKey(sql, ordering)} AS k FROM (
      SELECT p.id, ${sortKey(sql, ordering, words)} AS k FROM ${source}
      WHERE (p.ships_to_mask & ${page.shipsTo}) <> 0
        AND ${words === undefined ? sql`true` : sql`p.search_document @@ ${words.tsquery}`} AND ${filters}
      ${members === undefined ? sql`` : sql`OFFSET 0`}
    ) s
    WHERE ${keyset}
    ORDER BY ${orderBy(sql, ordering)}
    LIMIT ${limit + 1}`
  )}`
}

/**
 * The tier of a product with every word in its title (`(ARRAY[0, 1000000, 3000000, 6000000])[…]` below), and the
 * least `search_term_rank` of a term row in a title (weight 3: 6,800,000 plus the title's brevity; a brand row,
 * weight 2, ranks at most 3,420,000), so that the rank index (migration 0023) reads a word's title rows as a range.
 */
const TITLE_TIER = 6_000_000
const TITLE_RANK = 6_800_000

/**
 * A page is first looked for among this many candidates per row it needs, taken in order by a bounded
 * (top-N) sort: a word in 200,000 products is then not sorted whole, spilling to disk, for a page of 20.
 * Most candidates pass the checks that follow (the country's bit is checked in the index already), so the
 * window nearly always holds the page; when it does not, the page is looked for among all of them. In order,
 * the first rows that pass among the first candidates are the first that pass among all: the page is the same.
 */
const CANDIDATE_WINDOW = 5

/**
 * A page of the products holding the words, from the term index alone, in any order. Candidates are the
 * products holding a lexeme of every group: one term table per group, joined on the product (the planner
 * merges their runs, which the index keeps in product order, or probes from the rarest; a hyphenated word's
 * parts are looked up last), narrowed by collection, tags, price and the country's bit on the index's copy of
 * them. A group of several lexemes (a respelled word) is the product's best row among them. Relevance scores a
 * candidate by the weakest place a group matched (the tier: title 6, brand 3, category or tags 1, description
 * 0, times 10^6), the average weight of the groups (title 1.0, brand 0.4, category/tags 0.2, description 0.1,
 * times 8·10^5) and the title's brevity; the other orders read the from-price or creation time the index
 * carries. Only then, in order, is each candidate checked against the document (phrases in hyphenated words)
 * and the rest of the filters (availability in the country, the exact variant prices), until the page is full:
 * a word in 10,000 products costs index-only scans and a sort, not 10,000 row visits.
 */
const fromTermIndex = (
  sql: SqlClient.SqlClient,
  page: PageQuery,
  words: Words,
  groups: ReadonlyArray<ReadonlyArray<string>>,
  /** Look only among the first this many candidates in order; all of them when `undefined`. */
  window?: number,
  /** Only the products with every word in the title (relevance's top tier). */
  titlesOnly = false
) => {
  const { ordering, narrow, shipsTo } = page
  /** A term row in a title, as a range of the rank index (the partial index's `weight >= 0` with it). */
  const inTitle = (t?: Statement.Fragment) => {
    if (!titlesOnly) return sql`true`
    const field = (name: string) => (t === undefined ? sql(name) : sql`${t}.${sql(name)}`)
    return sql`${field("weight")} >= 0 AND search_term_rank(${field("weight")}, ${field("title_words")}) >= ${TITLE_RANK}`
  }
  // A hyphenated word's parts are in every product that holds the word, so they narrow nothing: each is looked up
  // for the candidates of the other groups (a probe of the primary key, fenced by OFFSET 0 so that it stays one)
  // rather than joined, where the planner would merge two common parts' whole runs before meeting the rare word.
  // Only when another group narrows the word's products first: a word alone with its parts ("pour-over") is
  // cheaper merged with them, their runs about as long as its own.
  const probes = wholeWordsOf(words, groups).length >= 2 ? groups.filter((lexemes) => isPartOf(words, lexemes)) : []
  const isProbe = (lexemes: ReadonlyArray<string>) => probes.includes(lexemes)
  const ordered = [...groups.filter((lexemes) => !isProbe(lexemes)), ...probes]
  const tables = ordered.map((_, i) => sql`${sql(`t${i + 1}`)}`)
  const column = (name: string) => tables.map((t) => sql`${t}.${sql(name)}`)
  const weightScore = (weight: Statement.Fragment) => sql`(ARRAY[80000, 160000, 320000, 800000])[${weight} + 1]`
  const key = {
    // For one group, all but the first two terms are `search_term_rank` (migration 0023), which `fromRankIndex` reads.
    relevance: sql`${EXACT_TITLE} * (e.id IS NOT NULL)::int + ${WORD_MATCH}
                   + (ARRAY[0, 1000000, 3000000, 6000000])[least(${sql.csv(column("weight"))}) + 1]
                   + (${sql.join(" + ", false)(column("weight").map(weightScore))}) / ${ordered.length}
                   + 100000 / (1 + t1.title_words)`,
    price_asc: sql`t1.min_price_usd`,
    price_desc: sql`t1.min_price_usd`,
    newest: sql`t1.created_at`
  }[ordering]
  /** A group's term rows: a lexeme's own, or the product's best among several lexemes'. */
  const termsOf = (lexemes: ReadonlyArray<string>) =>
    lexemes.length === 1
      ? sql`search_terms`
      : sql`(SELECT product_id, max(weight) AS weight, max(title_words) AS title_words,
                    max(min_price_usd) AS min_price_usd, max(max_price_usd) AS max_price_usd,
                    max(created_at) AS created_at, max(ships_to_mask) AS ships_to_mask
             FROM (${sql.join(
               " UNION ALL ",
               false
             )(
               lexemes.map((lexeme) => sql`SELECT * FROM search_terms WHERE lexeme = ${lexeme} AND ${inTitle()}`)
             )}) u GROUP BY product_id)`
  const holds = (lexemes: ReadonlyArray<string>, t: Statement.Fragment) =>
    lexemes.length === 1 ? sql`${t}.lexeme = ${lexemes[0]!} AND ${inTitle(t)}` : sql`true`
  const joinOf = (lexemes: ReadonlyArray<string>, t: Statement.Fragment) =>
    isProbe(lexemes)
      ? sql`JOIN LATERAL (SELECT weight FROM search_terms
                          WHERE lexeme = ${lexemes[0]!} AND product_id = t1.product_id AND ${inTitle()} OFFSET 0) ${t}
              ON true`
      : sql`JOIN ${termsOf(lexemes)} ${t} ON ${t}.product_id = t1.product_id AND ${holds(lexemes, t)}`
  const [first, ...rest] = ordered
  const ranked = sql`${exactTitles(sql, words)}, ranked AS (
      SELECT t1.product_id AS id, ${key} AS k
      FROM ${termsOf(first!)} t1
      ${sql.join(" ", false)(rest.map((lexemes, i) => joinOf(lexemes, tables[i + 1]!)))}
      LEFT JOIN exact e ON e.id = t1.product_id
      WHERE ${holds(first!, sql`t1`)} AND (t1.ships_to_mask & ${shipsTo}) <> 0
        AND ${narrow({ id: sql`t1.product_id`, minPriceUsd: sql`t1.min_price_usd`, maxPriceUsd: sql`t1.max_price_usd` })}
      -- OFFSET 0: a collection or tag narrows the candidates here, before they are ordered; left to itself,
      -- the planner may move it after the window's LIMIT and probe the tag once per candidate of the words.
      OFFSET 0
    )`
  return checkedInOrder(sql, page, words, ranked, window)
}

/**
 * The first `window` candidates of one word by relevance, read in rank order (migration 0023) instead of all of
 * the word's rows sorted: a term row's own score (`search_term_rank`: its tier, weight and the title's brevity) is
 * the whole of a one-word relevance but for the exact-title bonus, so each lexeme's rows are walked best first,
 * checked on the index's copies (the country's bit, the price range), and only `window` are taken; the
 * exact titles, above every other match, are looked up apart. A respelled word is a group of several lexemes,
 * and a product scores its best among them: the window's products by that score are among each lexeme's first
 * `window` rows, so the union of those, each product at its best, holds them. After a cursor a lexeme's first
 * rows may belong to products already shown, so a group of several lexemes takes this path on a first page only.
 * The rest is `fromTermIndex`'s: the window in order, each candidate checked against its product.
 */
const fromRankIndex = (
  sql: SqlClient.SqlClient,
  page: PageQuery,
  words: Words,
  lexemes: ReadonlyArray<string>,
  window: number
) => {
  const { narrow, shipsTo, after } = page
  const rank = sql`search_term_rank(t.weight, t.title_words)`
  const checks = sql`(t.ships_to_mask & ${shipsTo}) <> 0
    AND ${narrow({ id: sql`t.product_id`, minPriceUsd: sql`t.min_price_usd`, maxPriceUsd: sql`t.max_price_usd` })}`
  // After a cursor (one lexeme: a row's score is its product's), in a form the index can start from.
  const rankedAfter = (() => {
    if (after === undefined) return sql`true`
    const [k, id] = after as [number, string]
    return sql`${rank} <= ${k - WORD_MATCH} AND (${rank} < ${k - WORD_MATCH} OR t.product_id > ${id})`
  })()
  const ranked = sql`${exactTitles(sql, words)}, ranked AS (
      SELECT id, max(k) AS k FROM (
        SELECT t.product_id AS id, ${EXACT_TITLE + WORD_MATCH} + ${rank} AS k
        FROM exact e JOIN search_terms t ON t.product_id = e.id AND t.lexeme IN ${sql.in(lexemes)}
        WHERE ${checks}
        ${sql.join(
          " ",
          false
        )(
          lexemes.map(
            (lexeme) => sql`UNION ALL (
              SELECT t.product_id AS id, ${WORD_MATCH} + ${rank} AS k FROM search_terms t
              -- weight >= 0: true of every row, and the condition of the rank index (migration 0023)
              WHERE t.lexeme = ${lexeme} AND t.weight >= 0 AND ${checks} AND ${rankedAfter}
                AND t.product_id NOT IN (SELECT id FROM exact)
              ORDER BY ${rank} DESC, t.product_id
              LIMIT ${window})`
          )
        )}
      ) c GROUP BY id
    )`
  return checkedInOrder(sql, page, words, ranked, window)
}

/** The `WITH` item `exact`: the products whose title is the words exactly (ranked above every other match). */
const exactTitles = (sql: SqlClient.SqlClient, words: Words) =>
  sql`exact AS (SELECT id FROM products WHERE lower(title) = lower(${words.exact}))`

/** Candidates checked in order: the page (plus one row), and whether the candidates were all there were. */
interface Checked {
  readonly rows: ReadonlyArray<PageRow>
  /** Every candidate after the cursor was looked at: fewer than the window were found, or there was none. */
  readonly complete: boolean
}

/**
 * The end both term-index queries share: the candidates `ranked` (id, sort key `k`) after the cursor, in order
 * (the first `window` of them, or all), each checked against its product (the document, for phrases inside
 * hyphenated words, and the filters) until the page is full. With a window, how many candidates it held comes
 * back with the rows: fewer than the window are all there are, and looking among all of them would find the
 * same page (for a rare word or a narrow phrase, the page query is not run twice).
 */
const checkedInOrder = (
  sql: SqlClient.SqlClient,
  { ordering, filters, keyset, limit }: PageQuery,
  words: Words,
  /** The `WITH` items, ending with `ranked`. */
  ranked: Statement.Fragment,
  window: number | undefined
): Effect.Effect<Checked, SqlError.SqlError> => {
  // From an ordered subquery (the window's LIMIT, or OFFSET 0), the check stays a per-row filter on the ordered
  // stream (not a join), so the page's LIMIT stops it early.
  const checked = (candidates: Statement.Fragment) =>
    withSummaries(
      sql,
      ordering,
      sql`
    SELECT s.id, ${cursorKey(sql, ordering)} AS k FROM ${candidates} s
    WHERE EXISTS (SELECT 1 FROM products p
                  WHERE p.id = s.id AND p.search_document @@ ${words.tsquery} AND ${filters} OFFSET 0)
    ORDER BY ${orderBy(sql, ordering)}
    LIMIT ${limit + 1}`
    )
  const inOrder = sql`SELECT s.id, s.k FROM ranked s WHERE ${keyset} ORDER BY ${orderBy(sql, ordering)}`
  if (window === undefined) {
    return sql<PageRow>`WITH ${ranked} ${checked(sql`(${inOrder} OFFSET 0)`)}`.pipe(
      Effect.map((rows) => ({ rows, complete: true }))
    )
  }
  // The candidates' count comes on every row, and on a row of nulls when none passes.
  return sql<{ readonly candidates: number } & (PageRow | { readonly [K in keyof PageRow]: null })>`
    WITH ${ranked}, firsts AS (${inOrder} LIMIT ${window})
    SELECT f.candidates, s.*
    FROM (SELECT count(*)::int AS candidates FROM firsts) f LEFT JOIN LATERAL (${checked(sql`firsts`)}) s ON true
    ORDER BY ${orderBy(sql, ordering)}`.pipe(
    Effect.map((found) => ({
      rows: found.flatMap(({ candidates: _, ...row }) => (row.id === null ? [] : [row])),
      complete: (found[0]?.candidates ?? 0) < window
    }))
  )
}

/** Below this many products, a collection or tag is the cheapest place to start a listing. */
const FEW_MEMBERS = 2000

/**
 * The smallest of the collection's and the tags' product sets, as a query of `id`s, when it holds fewer than
 * `FEW_MEMBERS` products. An order index walked in order meets a small set's products rarely (and, when they
 * are the oldest or dearest, last); a large set's products it meets at once.
 */
const fewMembers = (sql: SqlClient.SqlClient, collectionId: string | undefined, tagIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    if (collectionId === undefined && tagIds.length === 0) return undefined
    // Each set is counted only as far as FEW_MEMBERS: a tag of 150,000 products need not be counted whole.
    const sets = [
      ...(collectionId === undefined
        ? []
        : [
            sql`SELECT 'collection' AS kind, ${collectionId}::text AS id, (SELECT count(*)::int FROM (
                 SELECT FROM collection_products WHERE collection_id = ${collectionId} LIMIT ${FEW_MEMBERS}) x) AS members`
          ]),
      ...tagIds.map(
        (tagId) => sql`SELECT 'tag' AS kind, ${tagId}::text AS id, (SELECT count(*)::int FROM (
                         SELECT FROM product_tags WHERE tag_id = ${tagId} LIMIT ${FEW_MEMBERS}) x) AS members`
      )
    ]
    const [smallest] = yield* rowsOf(Schema.Struct({ kind: Schema.String, id: Schema.String, members: Schema.Number }))(
      sql`SELECT kind, id, members FROM (${sql.join(" UNION ALL ", false)(sets)}) sets ORDER BY members LIMIT 1`
    ).pipe(Effect.orDie)
    if (smallest === undefined) return sql`SELECT NULL::text AS id WHERE false`
    if (smallest.members >= FEW_MEMBERS) return undefined
    return smallest.kind === "collection"
      ? sql`SELECT product_id AS id FROM collection_products WHERE collection_id = ${smallest.id}`
      : sql`SELECT product_id AS id FROM product_tags WHERE tag_id = ${smallest.id}`
  })

/** Whether any product matches the words (with the filters). */
const anyMatch = (sql: SqlClient.SqlClient, words: Words, filters: Statement.Fragment) =>
  foundRows(sql`
    SELECT EXISTS (SELECT 1 FROM products p WHERE p.search_document @@ ${words.tsquery} AND ${filters}) AS found`).pipe(
    Effect.map((rows) => rows[0]?.found === true),
    Effect.orDie
  )

/** The key of a decoded cursor must have the ordering's type, and an id. */
const checkCursorKey = (ordering: SearchSort, key: ReadonlyArray<string | number>) => {
  const [k, id] = key
  const ok =
    typeof id === "string" &&
    /^[0-9a-f]{24}$/.test(id) &&
    (ordering === "newest"
      ? typeof k === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(k)
      : typeof k === "number" && Number.isSafeInteger(k))
  return ok ? Effect.void : Effect.fail(InvalidRequest.field("cursor", "Malformed cursor."))
}
