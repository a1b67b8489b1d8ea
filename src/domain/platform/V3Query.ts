import { Either, Encoding, Schema } from "effect"

/**
 * The v3 list query (spec "Versioning" 3): what each list operation accepts (`V3QuerySpec`) and a parsed
 * request (`V3Query`). `src/http/V3Requests.ts` parses it from the URL; `src/services/platform/V3QuerySql.ts`
 * compiles it to SQL, so filtering, sorting and paging happen in the database.
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
  /** The values a filter accepts, where not any string (documented in the operation's parameters). */
  readonly filterSchemas?: Readonly<Record<string, Schema.Schema.AnyNoContext>>
}

export interface V3Query {
  readonly filters: Readonly<Record<string, string>>
  readonly include: ReadonlyArray<string>
  readonly fields: ReadonlyArray<string>
  readonly sort: ReadonlyArray<{ readonly field: string; readonly descending: boolean }>
  readonly page: { readonly number: number; readonly size: number; readonly cursor: string | undefined }
}

/** A keyset cursor: the last row's sort value and id. Opaque to clients (base64url JSON). */
export interface V3Cursor {
  readonly value: string | number | boolean | null
  readonly id: string
}

const CursorJson = Schema.parseJson(
  Schema.Tuple(Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null), Schema.String)
)

export const encodeCursor = (cursor: V3Cursor): string =>
  Encoding.encodeBase64Url(Schema.encodeSync(CursorJson)([cursor.value, cursor.id]))

/** The cursor a client sent back, or none when it is not one of ours. */
export const decodeCursor = (text: string): V3Cursor | undefined => {
  const json = Encoding.decodeBase64UrlString(text)
  if (Either.isLeft(json)) return undefined
  const decoded = Schema.decodeUnknownEither(CursorJson)(json.right)
  return Either.isRight(decoded) ? { value: decoded.right[0], id: decoded.right[1] } : undefined
}
