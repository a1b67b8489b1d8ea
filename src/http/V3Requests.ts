import { Either, Schema } from "effect"
import { FieldIssue, InvalidRequest } from "../domain/platform/Errors.js"
import type { V3Query, V3QuerySpec } from "../domain/platform/V3Query.js"

/**
 * How the v3 line reads requests: the v3 query syntax (spec "Versioning" 3): `filter[field]` (several are ANDed), `include`, `fields`,
 * `sort`, `page[number]`, `page[size]` and `page[cursor]`. Each list operation describes what it accepts;
 * anything else under `filter[...]` (or an unknown key) is a 400 naming it. `links.next` is built here by
 * the server from the request's own query, so clients follow it verbatim and never build a cursor.
 */

export type { V3Query, V3QuerySpec } from "../domain/platform/V3Query.js"

export type RawParams = Readonly<Record<string, string | ReadonlyArray<string>>>

/** The highest `page[number]` taken. */
const maxPageNumber = 1_000_000

const issue = (path: string, message: string) => FieldIssue.make({ path, message })

const list = (value: string) =>
  value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")

/** Parses and checks a v3 query; every problem is listed in one 400. */
export const parseV3Query = (params: RawParams, spec: V3QuerySpec): Either.Either<V3Query, InvalidRequest> => {
  const errors: Array<FieldIssue> = []
  const filters: Record<string, string> = {}
  let include: ReadonlyArray<string> = []
  let fields: ReadonlyArray<string> = []
  let sort: Array<{ field: string; descending: boolean }> = []
  let number = 1
  let size = spec.defaultPageSize
  let cursor: string | undefined
  const checkList = (key: string, values: ReadonlyArray<string>, allowed: ReadonlyArray<string> | undefined) => {
    for (const value of values) {
      if (!(allowed ?? []).includes(value)) errors.push(issue(key, `Unknown value "${value}" in ${key}.`))
    }
    return values
  }
  const int = (key: string, value: string, min: number, max: number) => {
    if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
      errors.push(issue(key, `Expected an integer from ${min} to ${max}.`))
      return undefined
    }
    return Number(value)
  }
  for (const [key, raw] of Object.entries(params)) {
    if (typeof raw !== "string") {
      errors.push(issue(key, `${key} may be given once.`))
      continue
    }
    const filter = /^filter\[(.+)\]$/.exec(key)
    if (filter !== null) {
      if (spec.filters.includes(filter[1]!)) filters[filter[1]!] = raw
      else
        errors.push(
          issue(key, `Unknown filter "${filter[1]}"; this operation accepts ${describe(spec.filters, "filter")}.`)
        )
      continue
    }
    switch (key) {
      case "include":
        include = checkList(key, list(raw), spec.include)
        break
      case "fields":
        fields = checkList(key, list(raw), spec.fields)
        break
      case "sort":
        sort = list(raw).map((part) => ({ field: part.replace(/^-/, ""), descending: part.startsWith("-") }))
        checkList(
          key,
          sort.map((s) => s.field),
          spec.sort
        )
        // A keyset cursor holds one sort value: a cursor list sorts on one field (then the id).
        if (spec.paging === "cursor" && sort.length > 1) errors.push(issue(key, "This list sorts on one field."))
        break
      case "page[size]":
        size = int(key, raw, 1, spec.maxPageSize) ?? size
        break
      case "page[number]":
        if (spec.paging !== "number") errors.push(issue(key, "This list pages with page[cursor]."))
        else number = int(key, raw, 1, maxPageNumber) ?? number
        break
      case "page[cursor]":
        if (spec.paging !== "cursor") errors.push(issue(key, "This list pages with page[number]."))
        else if (!/^[A-Za-z0-9_-]{1,512}$/.test(raw)) errors.push(issue(key, "Malformed cursor."))
        else cursor = raw
        break
      default:
        if (!(spec.extra ?? []).includes(key)) errors.push(issue(key, `Unknown query parameter "${key}".`))
    }
  }
  if (errors.length > 0) {
    return Either.left(new InvalidRequest({ message: `${errors[0]!.path}: ${errors[0]!.message}`, errors }))
  }
  return Either.right({ filters, include, fields, sort, page: { number, size, cursor } })
}

const describe = (names: ReadonlyArray<string>, kind: string) =>
  names.length === 0 ? `no ${kind}s` : names.map((n) => `${kind}[${n}]`).join(", ")

/** The link to another page of the same list: the request's path and query with the page changed. */
export const pageLink = (path: string, params: RawParams, page: Readonly<Record<string, string>>): string => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    if (key in page) continue
    for (const v of typeof value === "string" ? [value] : value) search.append(key, v)
  }
  for (const [key, value] of Object.entries(page)) search.append(key, value)
  return `${path}?${search.toString()}`
}

/** `{self, next, prev}` for a page-numbered list. */
export const numberedLinks = (path: string, params: RawParams, query: V3Query, hasNext: boolean) => ({
  self: pageLink(path, params, { "page[number]": String(query.page.number), "page[size]": String(query.page.size) }),
  next: hasNext
    ? pageLink(path, params, { "page[number]": String(query.page.number + 1), "page[size]": String(query.page.size) })
    : null,
  prev:
    query.page.number > 1
      ? pageLink(path, params, { "page[number]": String(query.page.number - 1), "page[size]": String(query.page.size) })
      : null
})

/**
 * `{self, next, prev}` for a cursor list: `next` carries the cursor of the page after this one (null on the
 * last), and `prev` is always null (spec "Versioning" 3).
 */
export const cursorLinks = (path: string, params: RawParams, query: V3Query, nextCursor: string | null) => {
  const size = String(query.page.size)
  const here = query.page.cursor === undefined ? {} : { "page[cursor]": query.page.cursor }
  return {
    self: pageLink(path, { ...params, "page[cursor]": [] }, { ...here, "page[size]": size }),
    next: nextCursor === null ? null : pageLink(path, params, { "page[cursor]": nextCursor, "page[size]": size }),
    prev: null
  }
}

/** "a, b or c". */
const orList = (names: ReadonlyArray<string>) =>
  names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`

/**
 * The `urlParams` schema of a v3 list, derived from the same spec the parser checks against, so the
 * OpenAPI parameters and what the parser accepts cannot drift: `extra` first (e.g. `companyId`), then each
 * filter, `include`, `fields`, `sort` and the paging parameters.
 */
export const v3UrlParams = <const Extra extends Schema.Struct.Fields>(spec: V3QuerySpec, extra: Extra) => {
  const optionalString = (description?: string) =>
    Schema.optional(description === undefined ? Schema.String : Schema.String.annotations({ description }))
  const fields: Record<string, Schema.Struct.Field> = { ...extra }
  // Exact: a parameter is absent or a string, so a bad value gets its schema's issue, not also "Expected undefined".
  for (const filter of spec.filters) {
    fields[`filter[${filter}]`] = Schema.optionalWith(spec.filterSchemas?.[filter] ?? Schema.String, { exact: true })
  }
  if (spec.include !== undefined) fields.include = optionalString(`Comma-separated: ${orList(spec.include)}`)
  if (spec.fields !== undefined) fields.fields = optionalString(`Comma-separated: ${orList(spec.fields)}`)
  if (spec.sort !== undefined) fields.sort = optionalString(`${orList(spec.sort)}; -field descends`)
  // The parser checks the paging integers, with every other parameter, so that one 400 lists every
  // problem; the document still declares them as integers, as the parser takes them.
  const integer = (max: number, description: string) =>
    Schema.optional(
      Schema.String.annotations({ jsonSchema: { type: "integer", minimum: 1, maximum: max, description } })
    )
  if (spec.paging === "number") fields["page[number]"] = integer(maxPageNumber, "The page, from 1 (default 1)")
  else fields["page[cursor]"] = optionalString("The cursor of the page, from a `links` URL")
  fields["page[size]"] = integer(
    spec.maxPageSize,
    `Items per page, from 1 to ${spec.maxPageSize} (default ${spec.defaultPageSize})`
  )
  return Schema.Struct(fields as Extra & Record<string, Schema.optional<typeof Schema.String>>)
}

/** An ISO 8601 date-time, for a time range's filters (`filter[createdAt][gte]`, `filter[createdAt][lte]`). */
export const DateTimeFilter = Schema.String.pipe(
  Schema.filter((value) => !Number.isNaN(Date.parse(value)) || "Expected an ISO 8601 date-time")
)

export const Links = Schema.Struct({
  self: Schema.String,
  next: Schema.NullOr(Schema.String),
  prev: Schema.NullOr(Schema.String)
})

/**
 * A v3 request body refuses properties the operation does not define (400 naming each), so that a client
 * still sending a field 3.1 removed learns it at once; v2 bodies ignore them, as they always have.
 */
export const strictBody = <S extends Schema.Schema.Any>(schema: S): S =>
  schema.annotations({ parseOptions: { onExcessProperty: "error" } }) as S
