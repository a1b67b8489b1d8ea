import { SqlClient, SqlError, SqlSchema } from "@effect/sql"
import { Data, Effect, Schema } from "effect"
import type { AccountScope } from "../../domain/company/Company.js"
import { RecipientRecord } from "../../domain/company/Recipients.js"
import { isUniqueViolation } from "../platform/Rows.js"
import { likeEscape } from "../platform/V3QuerySql.js"
import { ScopeParam } from "./Scope.js"

/**
 * A write refused because one of the recipient's accounts lists another recipient with its `externalId` or
 * e-mail (a unique violation on `recipient_identities`, which a trigger on `recipients` keeps). It fails the
 * write's transaction; the Recipients service turns it into the 409 that names the other recipient.
 */
export class RecipientIdentityTaken extends Data.TaggedError("RecipientIdentityTaken")<{}> {}

/** The other recipient holding a value, and which field it is. */
export const RecipientConflict = Schema.Struct({ id: Schema.String, field: Schema.Literal("externalId", "email") })
export type RecipientConflict = typeof RecipientConflict.Type

/** The columns a new recipient is inserted with. */
const NewRecipientRow = RecipientRecord.pipe(Schema.omit("deletedAt"))
export type NewRecipientRow = typeof NewRecipientRow.Type

/** The columns a change of a recipient sets (`updatedAt` the time of the change). */
const RecipientUpdate = RecipientRecord.pipe(
  Schema.pick("id", "accountIds", "firstName", "lastName", "email", "mobilePhone", "country", "externalId", "updatedAt")
)
export type RecipientUpdate = typeof RecipientUpdate.Type

const Strings = Schema.Array(Schema.String)

/**
 * A search of recipients by name or e-mail, case-insensitively: `part` matches a piece of the first name, the last
 * name, both with a space between, or the e-mail; `whole` only one of them entirely (what a reader who sees personal
 * data masked may ask: it confirms a value it already knows, never spells one out letter by letter).
 */
export const RecipientSearch = Schema.Struct({ text: Schema.String, match: Schema.Literal("part", "whole") })
export type RecipientSearch = typeof RecipientSearch.Type

/**
 * The `recipients` table, and through its trigger `recipient_identities` (migration 0026). Only the Recipients
 * service uses it. A write that would give an account two recipients with one value fails with
 * `RecipientIdentityTaken`; any other database error is a defect.
 */
export class RecipientsRepo extends Effect.Service<RecipientsRepo>()("RecipientsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The recipients a scope reaches: its company and environment, listing one of its accounts. */
    const reachedBy = (scope: AccountScope) =>
      sql`company_id = ${scope.companyId} AND environment = ${scope.environment}
        AND ${scope.accountIds === "all" ? sql`TRUE` : sql`account_ids && ${scope.accountIds}::text[]`}`

    /** The recipients `search` finds (see `RecipientSearch`). */
    const searchSql = (search: RecipientSearch) => {
      const fullName = sql`(coalesce(first_name, '') || ' ' || coalesce(last_name, ''))`
      if (search.match === "whole") {
        const text = search.text
        return sql`(lower(first_name) = lower(${text}) OR lower(last_name) = lower(${text})
          OR lower(${fullName}) = lower(${text}) OR lower(email) = lower(${text}))`
      }
      const pattern = `%${likeEscape(search.text)}%`
      return sql`(first_name ILIKE ${pattern} OR last_name ILIKE ${pattern} OR ${fullName} ILIKE ${pattern}
          OR email ILIKE ${pattern})`
    }

    /** A write's unique violation as `RecipientIdentityTaken`; any other database error a defect. */
    const orTaken = <A, E, R>(write: Effect.Effect<A, E, R>) =>
      Effect.catchAll(write, (error) =>
        error instanceof SqlError.SqlError && isUniqueViolation(error)
          ? Effect.fail(new RecipientIdentityTaken())
          : Effect.die(error)
      )

    const conflictRow = SqlSchema.findOne({
      Request: Schema.Struct({
        scope: ScopeParam,
        externalId: Schema.NullOr(Schema.String),
        email: Schema.NullOr(Schema.String),
        accountIds: Strings,
        exceptId: Schema.NullOr(Schema.String)
      }),
      Result: RecipientConflict,
      execute: ({ scope, externalId, email, accountIds, exceptId }) => sql`SELECT id,
            CASE WHEN COALESCE(external_id = ${externalId}, false) THEN 'externalId' ELSE 'email' END AS field
          FROM recipients WHERE ${reachedBy(scope)} AND account_ids && ${accountIds}::text[]
            AND id <> ${exceptId ?? ""}
            AND (external_id = ${externalId} OR lower(email) = lower(${email}))
          ORDER BY COALESCE(external_id = ${externalId}, false) DESC LIMIT 1`
    })

    const insertRow = SqlSchema.single({
      Request: NewRecipientRow,
      Result: RecipientRecord,
      execute: (row) => sql`INSERT INTO recipients (id, company_id, environment, account_ids,
              first_name, last_name, email, mobile_phone, country, external_id, source, created_at, updated_at)
            VALUES (${row.id}, ${row.companyId}, ${row.environment}, ${row.accountIds}::text[], ${row.firstName},
              ${row.lastName}, ${row.email}, ${row.mobilePhone}, ${row.country}, ${row.externalId},
              ${row.source}, ${row.createdAt}, ${row.updatedAt})
            RETURNING *`
    })

    const findRow = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, recipientId: Schema.String, includeDeleted: Schema.Boolean }),
      Result: RecipientRecord,
      execute: ({ scope, recipientId, includeDeleted }) =>
        sql`SELECT * FROM recipients WHERE id = ${recipientId.toLowerCase()} AND ${reachedBy(scope)}
        ${includeDeleted ? sql`` : sql`AND deleted_at IS NULL`}`
    })

    const pageRows = SqlSchema.findAll({
      Request: Schema.Struct({
        scope: ScopeParam,
        skip: Schema.Int,
        limit: Schema.Int,
        externalId: Schema.optional(Schema.String),
        email: Schema.optional(Schema.String),
        search: Schema.optional(RecipientSearch)
      }),
      Result: RecipientRecord,
      execute: (query) => sql`SELECT * FROM recipients WHERE ${reachedBy(query.scope)} AND deleted_at IS NULL
          ${query.externalId === undefined ? sql`` : sql`AND external_id = ${query.externalId}`}
          ${query.email === undefined ? sql`` : sql`AND lower(email) = lower(${query.email})`}
          ${query.search === undefined ? sql`` : sql`AND ${searchSql(query.search)}`}
        ORDER BY created_at DESC, id DESC OFFSET ${query.skip} LIMIT ${query.limit}`
    })

    const lockRow = SqlSchema.findOne({
      Request: Schema.Struct({ scope: ScopeParam, recipientId: Schema.String }),
      Result: RecipientRecord,
      execute: ({ scope, recipientId }) => sql`SELECT * FROM recipients WHERE id = ${recipientId.toLowerCase()}
          AND ${reachedBy(scope)} AND deleted_at IS NULL FOR UPDATE`
    })

    const updateRow = SqlSchema.single({
      Request: RecipientUpdate,
      Result: RecipientRecord,
      execute: (set) => sql`UPDATE recipients SET account_ids = ${set.accountIds}::text[],
            first_name = ${set.firstName}, last_name = ${set.lastName}, email = ${set.email},
            mobile_phone = ${set.mobilePhone}, country = ${set.country}, external_id = ${set.externalId},
            updated_at = ${set.updatedAt}
          WHERE id = ${set.id} RETURNING *`
    })

    const eraseRows = SqlSchema.findAll({
      Request: Schema.Struct({ scope: ScopeParam, recipientId: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({
        scope,
        recipientId,
        at
      }) => sql`UPDATE recipients SET first_name = NULL, last_name = NULL, email = NULL,
          mobile_phone = NULL, external_id = NULL, deleted_at = ${at}, updated_at = ${at}
        WHERE id = ${recipientId.toLowerCase()} AND ${reachedBy(scope)} AND deleted_at IS NULL
        RETURNING id`
    })

    const widenRow = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, missing: Strings, at: Schema.DateFromSelf }),
      Result: RecipientRecord,
      execute: ({ id, missing, at }) => sql`UPDATE recipients
              SET account_ids = ARRAY(SELECT DISTINCT unnest(account_ids || ${missing}::text[])), updated_at = ${at}
              WHERE id = ${id} RETURNING *`
    })

    const matchingRow = SqlSchema.findOne({
      Request: Schema.Struct({
        scope: ScopeParam,
        column: Schema.Literal("external_id", "email"),
        value: Schema.String,
        accountIds: Strings
      }),
      Result: RecipientRecord,
      execute: ({ scope, column, value, accountIds }) =>
        sql`SELECT * FROM recipients WHERE ${reachedBy(scope)} AND deleted_at IS NULL AND ${
          column === "email" ? sql`lower(email) = lower(${value})` : sql`external_id = ${value}`
        } ORDER BY account_ids && ${accountIds}::text[] DESC, created_at, id LIMIT 1`
    })

    /**
     * The other recipient the scope reaches that holds `externalId` or the e-mail in one of `accountIds` (the
     * external id first), other than `exceptId`.
     */
    const findConflict = Effect.fn("RecipientsRepo.findConflict")(
      (
        scope: AccountScope,
        values: { readonly externalId: string | null; readonly email: string | null },
        accountIds: ReadonlyArray<string>,
        exceptId: string | null
      ) =>
        Effect.orDie(conflictRow({ scope, externalId: values.externalId, email: values.email, accountIds, exceptId }))
    )

    /** Inserts a new recipient; the row as stored. */
    const insert = Effect.fn("RecipientsRepo.insert")((row: NewRecipientRow) => orTaken(insertRow(row)))

    /** A recipient the scope reaches, if any; a deleted one only with `includeDeleted`. */
    const findById = Effect.fn("RecipientsRepo.findById")(
      (scope: AccountScope, recipientId: string, includeDeleted: boolean) =>
        Effect.orDie(findRow({ scope, recipientId, includeDeleted }))
    )

    /**
     * The recipients the scope reaches (not deleted), newest first, by `externalId` or e-mail if asked, and those
     * a name or e-mail search finds.
     */
    const page = Effect.fn("RecipientsRepo.page")(
      (
        scope: AccountScope,
        query: {
          readonly skip: number
          readonly limit: number
          readonly externalId?: string | undefined
          readonly email?: string | undefined
          readonly search?: RecipientSearch | undefined
        }
      ) => Effect.orDie(pageRows({ scope, ...query }))
    )

    /** A recipient the scope reaches and not deleted, locked until the transaction ends. */
    const lockById = Effect.fn("RecipientsRepo.lockById")((scope: AccountScope, recipientId: string) =>
      Effect.orDie(lockRow({ scope, recipientId }))
    )

    /** Sets every changeable column of the recipient; the row as it now is. */
    const update = Effect.fn("RecipientsRepo.update")((set: RecipientUpdate) => orTaken(updateRow(set)))

    /** Erases the personal data of a recipient the scope reaches, keeping a tombstone; whether there was one. */
    const erase = Effect.fn("RecipientsRepo.erase")((scope: AccountScope, recipientId: string, at: Date) =>
      Effect.map(Effect.orDie(eraseRows({ scope, recipientId, at })), (rows) => rows.length > 0)
    )

    /** Adds `missing` to the recipient's accounts; the row as it now is (none if it is gone). */
    const widen = Effect.fn("RecipientsRepo.widen")((id: string, missing: ReadonlyArray<string>, at: Date) =>
      orTaken(widenRow({ id, missing, at }))
    )

    /**
     * The recipient the scope reaches (not deleted) with the `externalId` or e-mail (case-insensitively), one
     * already listing one of `accountIds` first, then the oldest.
     */
    const findMatching = Effect.fn("RecipientsRepo.findMatching")(
      (scope: AccountScope, column: "external_id" | "email", value: string, accountIds: ReadonlyArray<string>) =>
        Effect.orDie(matchingRow({ scope, column, value, accountIds }))
    )

    return { findConflict, insert, findById, page, lockById, update, erase, widen, findMatching } as const
  })
}) {}
