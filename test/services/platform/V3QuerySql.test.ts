import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { V3Query, V3QuerySpec } from "../../../src/domain/platform/V3Query.js"
import { parseV3Query } from "../../../src/http/V3Requests.js"
import {
  type CompiledV3Query,
  compileV3Query,
  type V3Columns,
  type V3Page,
  v3Page
} from "../../../src/services/platform/V3QuerySql.js"
import { TestDatabase } from "../../support/database.js"

/**
 * The v3 query compiler on a real database: filters, sorts and both kinds of paging run in SQL, and walking
 * pages visits every row exactly once, in order, however many rows share a sort value.
 */

interface Row {
  readonly id: string
  readonly name: string
  readonly price: number
}

// 25 rows, prices 0..4 (five rows share each price), names alternating.
const rows: ReadonlyArray<Row> = Array.from({ length: 25 }, (_, n) => ({
  id: `r${String(n).padStart(2, "0")}`,
  name: n % 2 === 0 ? "even" : "odd",
  price: n % 5
}))

const spec = (paging: "number" | "cursor"): V3QuerySpec => ({
  filters: ["name"],
  sort: ["price"],
  paging,
  maxPageSize: 50,
  defaultPageSize: 4
})

const columns = (sql: SqlClient.SqlClient, paging: "number" | "cursor"): V3Columns<Row> => ({
  paging,
  filters: { name: (name) => sql`name = ${name}` },
  sort: { price: "price" },
  defaultOrder: [{ column: "id", descending: false }],
  id: "id",
  cursorOf: (row, field) => ({ value: field === "price" ? row.price : row.id, id: row.id })
})

/** Every page of the list, following its own next cursor or page number. */
const walk = (params: Record<string, string>, paging: "number" | "cursor") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const seen: Array<Row> = []
    let next: Record<string, string> | undefined = params
    while (next !== undefined) {
      const query: V3Query = parseV3Query(next, spec(paging)).pipe(Either.getOrThrow)
      const { where, orderBy, limit }: CompiledV3Query = compileV3Query(sql, query, columns(sql, paging))
      const found: ReadonlyArray<Row> =
        yield* sql<Row>`SELECT * FROM v3_rows WHERE ${where} ORDER BY ${orderBy} LIMIT ${limit}`
      const page: V3Page<Row> = v3Page(found, query, columns(sql, paging))
      expect(page.rows.length).toBeLessThanOrEqual(4)
      seen.push(...page.rows)
      next = !page.hasNext
        ? undefined
        : paging === "cursor"
          ? { ...params, "page[cursor]": page.nextCursor! }
          : { ...params, "page[number]": String(query.page.number + 1) }
    }
    return seen
  })

const sorted = (by: (a: Row, b: Row) => number) => [...rows].sort(by).map((row) => row.id)
const ascending = (a: Row, b: Row) => a.price - b.price || a.id.localeCompare(b.id)
const descending = (a: Row, b: Row) => b.price - a.price || b.id.localeCompare(a.id)

describe("v3 queries compiled to SQL", () => {
  layer(TestDatabase)((it) => {
    it.effect("walks every row once over ties, by page number and by cursor, both directions", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE v3_rows (id text PRIMARY KEY, name text NOT NULL, price integer NOT NULL)`
        yield* sql`INSERT INTO v3_rows ${sql.insert(rows.map((row) => ({ ...row })))}`

        for (const paging of ["number", "cursor"] as const) {
          expect((yield* walk({ sort: "price" }, paging)).map((row) => row.id)).toEqual(sorted(ascending))
          const down = (yield* walk({ sort: "-price" }, paging)).map((row) => row.id)
          // Descending pages order ties by id descending on a cursor list (the keyset's order).
          expect(down).toEqual(
            paging === "cursor" ? sorted(descending) : sorted((a, b) => b.price - a.price || a.id.localeCompare(b.id))
          )
          const odd = yield* walk({ sort: "price", "filter[name]": "odd" }, paging)
          expect(odd.map((row) => row.id)).toEqual(sorted(ascending).filter((id) => Number(id.slice(1)) % 2 === 1))
        }
      })
    )
  })
})
