import { Either, Schema } from "effect"
import { FieldIssue, InvalidRequest } from "../domain/platform/Errors.js"

/**
 * The v3 query syntax (spec "Versioning" 3): `filter[field]` (several are ANDed), `include`, `fields`,
 * `sort`, `page[number]`, `page[size]` and `page[cursor]`. Each list operation describes what it accepts;
 * anything else under `filter[...]` (or an unknown key) is a 400 naming it. `links.next` is built here by
 * the server from the request's own query, so clients follow it verbatim and never build a cursor.
 */

export interface V3QuerySpec {
  readonly filters: ReadonlyArray<string>
  readonly include?: ReadonlyArray<string>
  readonly fields?: ReadonlyArray<string>
  /** Sortable fields; `-field` sorts descending. */
  readonly sort?: ReadonlyArray<string>
  /** `number` for page[number]/page[size], `cursor` for page[cursor]/page[size]. */
  readonly paging: "number" | "cursor"
  readonly maxPageSize: number
  readonly defaultPageSize: number
  /** Other plain keys the operation accepts (e.g. `companyId`). */
  readonly extra?: ReadonlyArray<string>
}

export interface V3Query {
  readonly filters: Readonly<Record<string, string>>
  readonly include: ReadonlyArray<string>
  readonly fields: ReadonlyArray<string>
  readonly sort: ReadonlyArray<{ readonly field: string; readonly descending: boolean }>
  readonly page: { readonly number: number; readonly size: number; readonly cursor: string | undefined }
}

export type RawParams = Readonly<Record<string, string | ReadonlyArray<string>>>

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
    const filter = /^filter\[([^\]]+)\]$/.exec(key)
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
        break
      case "page[size]":
        size = int(key, raw, 1, spec.maxPageSize) ?? size
        break
      case "page[number]":
        if (spec.paging !== "number") errors.push(issue(key, "This list pages with page[cursor]."))
        else number = int(key, raw, 1, 1_000_000) ?? number
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

export const Links = Schema.Struct({
  self: Schema.String,
  next: Schema.NullOr(Schema.String),
  prev: Schema.NullOr(Schema.String)
})
