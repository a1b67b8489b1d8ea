import type { SqlClient, Statement } from "@effect/sql"
import { decodeCursor, encodeCursor, type V3Query } from "../../domain/platform/V3Query.js"

/**
 * Compiles a parsed v3 list query (src/domain/platform/V3Query.ts) into SQL fragments, so every v3 list
 * filters, sorts and pages in the database. Each operation maps its query names to columns:
 *
 *   const { where, orderBy, limit } = compileV3Query(sql, query, columns)
 *   sql`SELECT … FROM t WHERE ${scope} AND ${where} ORDER BY ${orderBy} LIMIT ${limit}`
 *
 * - filters are ANDed, each through the operation's own condition;
 * - the sort fields come first, then the operation's default order, then the id, so the order is total and
 *   a page never repeats or skips a row among ties;
 * - page numbers are `LIMIT size + 1 OFFSET …` (the extra row tells whether a next page exists, without a
 *   count); a cursor list orders by one column and the id, and its cursor is a keyset: `(column, id)` past
 *   the last row's. A cursor that does not decode reads from the start.
 */

export interface V3Columns<Row> {
  /** As the operation's V3QuerySpec pages: by number, or by keyset cursor. */
  readonly paging: "number" | "cursor"
  /** The condition of each accepted filter, given its value. */
  readonly filters: Readonly<Record<string, (value: string) => Statement.Fragment>>
  /** The column of each sortable field. */
  readonly sort: Readonly<Record<string, string>>
  /** The order when the query gives none, before the id (e.g. newest first). */
  readonly defaultOrder: ReadonlyArray<{ readonly column: string; readonly descending: boolean }>
  readonly id: string
  /** A row's id and sort value, for the next cursor. */
  readonly cursorOf?: (
    row: Row,
    sortField: string | undefined
  ) => { readonly value: string | number | boolean | null; readonly id: string }
}

export interface CompiledV3Query {
  readonly where: Statement.Fragment
  readonly orderBy: Statement.Fragment
  readonly limit: Statement.Fragment
}

/** A page of rows, with whether another follows and the cursor of that page (cursor lists). */
export interface V3Page<Row> {
  readonly rows: ReadonlyArray<Row>
  readonly hasNext: boolean
  readonly nextCursor: string | null
}

export const compileV3Query = <Row>(
  sql: SqlClient.SqlClient,
  query: V3Query,
  columns: V3Columns<Row>
): CompiledV3Query => {
  const conditions = Object.entries(query.filters).map(([name, value]) => columns.filters[name]!(value))
  const sorted = query.sort.map(({ field, descending }) => ({ column: columns.sort[field]!, descending }))
  // A keyset pages on one column and the id; page numbers can order by any number of columns.
  const order =
    columns.paging === "cursor"
      ? [sorted[0] ?? columns.defaultOrder[0]].filter((o) => o !== undefined)
      : [...sorted, ...columns.defaultOrder]
  const idDescending = order[order.length - 1]?.descending ?? false
  const direction = (descending: boolean) => (descending ? sql.literal("DESC") : sql.literal("ASC"))
  const cursor = query.page.cursor === undefined ? undefined : decodeCursor(query.page.cursor)
  if (cursor !== undefined) {
    const after = idDescending ? sql.literal("<") : sql.literal(">")
    const first = order[0]
    conditions.push(
      first === undefined
        ? sql`${sql(columns.id)} ${after} ${cursor.id}`
        : sql`(${sql(first.column)}, ${sql(columns.id)}) ${after} (${cursor.value}, ${cursor.id})`
    )
  }
  const orderBy = sql.join(
    ", ",
    false
  )([
    ...order.map(({ column, descending }) => sql`${sql(column)} ${direction(descending)}`),
    sql`${sql(columns.id)} ${direction(idDescending)}`
  ])
  const offset = query.page.cursor === undefined ? (query.page.number - 1) * query.page.size : 0
  return {
    where: conditions.length === 0 ? sql`TRUE` : sql.and(conditions),
    orderBy,
    limit: sql`${query.page.size + 1} OFFSET ${offset}`
  }
}

/** The page the query asked for, out of the `size + 1` rows the compiled query read. */
export const v3Page = <Row>(rows: ReadonlyArray<Row>, query: V3Query, columns: V3Columns<Row>): V3Page<Row> => {
  const hasNext = rows.length > query.page.size
  const page = hasNext ? rows.slice(0, query.page.size) : rows
  const last = page[page.length - 1]
  const nextCursor =
    hasNext && last !== undefined && columns.cursorOf !== undefined
      ? encodeCursor(columns.cursorOf(last, query.sort[0]?.field))
      : null
  return { rows: page, hasNext, nextCursor }
}

/** A value matched literally inside a LIKE pattern (`filter[name]` substrings): `%`, `_` and `\` escaped. */
export const likeEscape = (value: string): string => value.replace(/[\\%_]/g, "\\$&")
