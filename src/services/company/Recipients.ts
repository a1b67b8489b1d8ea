import { SqlClient, SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { Account, AccountScope, RequestSource } from "../../domain/company/Company.js"
import { RecipientAlreadyExists, RecipientNotFound } from "../../domain/company/Errors.js"
import type { NewRecipient, RecipientChange, RecipientRecord } from "../../domain/company/Recipients.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Addresses } from "../catalog/Addresses.js"
import { nowDate } from "../platform/Time.js"
import { Accounts } from "./Accounts.js"
import { Audit, soleAccount } from "./Audit.js"
import { RecipientIdentityTaken, type RecipientSearch, RecipientsRepo } from "./RecipientsRepo.js"

export type { RecipientSearch }

/**
 * Recipients, version 2 (docs/decisions/0033-scoping-and-masking.md, docs/decisions/0046-v2-recipients.md;
 * docs/company-api.md "Recipients"). A recipient belongs to the company, in the key's environment, and lists the
 * accounts that may reach it: a request reaches it when one of them is in its scope. `externalId` and the e-mail
 * (case-insensitively) are unique per account: no account lists two recipients with one value (`recipient_identities`,
 * migration 0026, holds it), so two creates racing with the same value cannot both pass: the loser gets 409 naming the
 * field. Deleting one erases its personal data and keeps the row as a tombstone for the gifts and orders that name it;
 * reads then answer 404.
 */

/** Who writes: the request's scope, the account its header named, and its `Request-Source`. */
export interface RecipientCaller {
  readonly scope: AccountScope
  readonly account: Option.Option<Account>
  readonly source: RequestSource | null
}

/** v2 paging and the list's filters: newest first. The dashboard's list also searches by name or e-mail. */
export interface RecipientListQuery {
  readonly skip: number
  readonly limit: number
  readonly externalId?: string | undefined
  readonly email?: string | undefined
  readonly search?: RecipientSearch | undefined
}

export class Recipients extends Effect.Service<Recipients>()("Recipients", {
  dependencies: [Accounts.Default, Addresses.Default, RecipientsRepo.Default, Audit.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const addresses = yield* Addresses
    const repo = yield* RecipientsRepo
    const audit = yield* Audit

    /**
     * A recipient's row in the audit log: its id only, never its names or addresses. It is on the recipient's account
     * when `accountIds` (its accounts, or the scope's) is one, else on none.
     */
    const recordRecipient = (
      scope: AccountScope,
      accountIds: "all" | ReadonlyArray<string>,
      recipientId: string,
      action: "recipient.created" | "recipient.updated" | "recipient.deleted"
    ) =>
      audit.record({
        companyId: scope.companyId,
        environment: scope.environment,
        accountId: soleAccount(accountIds),
        action,
        target: recipientId
      })

    /** A phone in any international form, as E.164 (400 on `path` otherwise). */
    const e164 = (path: string, phone: string | null | undefined) =>
      phone === null || phone === undefined
        ? Effect.succeed(phone)
        : addresses.validatePhone(phone).pipe(
            Effect.map((normalized): string => normalized),
            Effect.mapError((e) => InvalidRequest.field(path, e.message))
          )

    /** Each named account, if the scope reaches it (404 otherwise), once. */
    const reachableAccounts = (scope: AccountScope, accountIds: ReadonlyArray<string>) =>
      Effect.map(
        Effect.forEach(accountIds, (accountId) => accounts.find(scope, accountId)),
        (found) => [...new Set(found.map((account) => account.id))]
      )

    /** The accounts of a new recipient: the named ones, else the header's, else the only or default one in reach. */
    const accountsFor = (caller: RecipientCaller, accountIds: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        if (accountIds.length > 0) return yield* reachableAccounts(caller.scope, accountIds)
        if (Option.isSome(caller.account)) return [caller.account.value.id]
        const reachable = yield* accounts.defaultIn(caller.scope)
        if (Option.isNone(reachable)) {
          return yield* InvalidRequest.field("accounts", "Name the accounts, or one with Ribbon-Account-Id.")
        }
        return [reachable.value.id]
      })

    /** A write in a transaction (a savepoint inside another); `undefined` when a recipient identity is taken. */
    const unlessTaken = <A, E, R>(write: Effect.Effect<A, E | RecipientIdentityTaken, R>) =>
      sql.withTransaction(write).pipe(
        Effect.catchIf(
          (error): error is RecipientIdentityTaken => error instanceof RecipientIdentityTaken,
          () => Effect.succeed(undefined)
        ),
        Effect.catchIf((error): error is SqlError.SqlError => error instanceof SqlError.SqlError, Effect.die)
      )

    /**
     * The other recipient holding the `externalId` or the e-mail in one of `accountIds` (the external id first),
     * as a 409. It is named only when the scope reaches it.
     */
    const conflictWith = (
      scope: AccountScope,
      values: { readonly externalId: string | null; readonly email: string | null },
      accountIds: ReadonlyArray<string>,
      exceptId: string | null
    ) =>
      Effect.gen(function* () {
        const found = Option.getOrUndefined(yield* repo.findConflict(scope, values, accountIds, exceptId))
        // Gone again between the write and this read (deleted meanwhile): still the answer the write had.
        const field = found?.field ?? (values.externalId !== null ? "externalId" : "email")
        return yield* new RecipientAlreadyExists({
          message:
            field === "externalId"
              ? `A recipient with externalId "${values.externalId}" already exists.`
              : `A recipient with e-mail ${values.email} already exists.`,
          field,
          recipientId: found?.id ?? ""
        })
      })

    /**
     * A new recipient (409 when one of its accounts lists another with its `externalId` or e-mail); `audited`, it is
     * recorded as the request's own change (a gift's recipient is part of the gift's).
     */
    const insertNew = (caller: RecipientCaller, input: NewRecipient, audited: boolean) =>
      Effect.gen(function* () {
        const mobilePhone = yield* e164("mobilePhone", input.mobilePhone)
        const accountIds = yield* accountsFor(caller, input.accountIds)
        const id = yield* makeId
        const now = yield* nowDate
        const { scope } = caller
        const inserted = yield* unlessTaken(
          repo
            .insert({
              id,
              companyId: scope.companyId,
              environment: scope.environment,
              accountIds,
              firstName: input.firstName,
              lastName: input.lastName,
              email: input.email,
              mobilePhone: mobilePhone ?? null,
              country: input.country,
              externalId: input.externalId,
              source: caller.source,
              createdAt: now,
              updatedAt: now
            })
            .pipe(
              Effect.tap((row) =>
                audited ? recordRecipient(scope, row.accountIds, row.id, "recipient.created") : Effect.void
              )
            )
        )
        if (inserted === undefined) return yield* conflictWith(scope, input, accountIds, null)
        return inserted
      })

    /** A new recipient (409 when one of its accounts lists another with its `externalId` or e-mail). */
    const create = Effect.fn("Recipients.create")((caller: RecipientCaller, input: NewRecipient) =>
      insertNew(caller, input, true)
    )

    const notFound = (recipientId: string) =>
      new RecipientNotFound({ message: `No recipient ${recipientId} is reachable with this key.`, recipientId })

    /**
     * A recipient the scope reaches (404 otherwise). A deleted one is 404 too, unless `includeDeleted`: gifts
     * and orders that name a tombstone still read it (its personal data null).
     */
    const get = Effect.fn("Recipients.get")(function* (
      scope: AccountScope,
      recipientId: string,
      options: { readonly includeDeleted?: boolean } = {}
    ) {
      const found = yield* repo.findById(scope, recipientId, options.includeDeleted === true)
      if (Option.isNone(found)) return yield* notFound(recipientId)
      return found.value
    })

    /**
     * The recipients the scope reaches (not deleted), newest first, by `externalId` or e-mail if asked, and by a
     * name or e-mail search (`RecipientSearch`).
     */
    const page = Effect.fn("Recipients.page")(function* (scope: AccountScope, query: RecipientListQuery) {
      return yield* repo.page(scope, query)
    })

    /**
     * Changes a recipient: absent fields stay, `null` clears an optional one. `accountIds` replaces the accounts
     * the scope reaches (each must be reachable, 404) and keeps those it does not, so a key never drops an
     * account it cannot see. 409 when the new `externalId` or e-mail is another recipient's.
     */
    const update = Effect.fn("Recipients.update")(function* (
      scope: AccountScope,
      recipientId: string,
      change: RecipientChange
    ) {
      const mobilePhone = yield* e164("mobilePhone", change.mobilePhone)
      const named = change.accountIds === undefined ? undefined : yield* reachableAccounts(scope, change.accountIds)
      const now = yield* nowDate
      // What the refused write would have held, to name the conflict.
      let attempted = {
        externalId: null as string | null,
        email: null as string | null,
        accountIds: [] as Array<string>
      }
      const write = Effect.gen(function* () {
        const locked = yield* repo.lockById(scope, recipientId)
        if (Option.isNone(locked)) return yield* notFound(recipientId)
        const current = locked.value
        const accountIds =
          named === undefined
            ? current.accountIds
            : scope.accountIds === "all"
              ? named
              : [...new Set([...current.accountIds.filter((id) => !scope.accountIds.includes(id)), ...named])]
        const keep = <A>(value: A | undefined, was: A) => (value === undefined ? was : value)
        const next = {
          firstName: keep(change.firstName, current.firstName),
          lastName: keep(change.lastName, current.lastName),
          email: keep(change.email, current.email),
          mobilePhone: keep(mobilePhone, current.mobilePhone),
          country: keep(change.country, current.country),
          externalId: keep(change.externalId, current.externalId)
        }
        attempted = { externalId: next.externalId, email: next.email, accountIds: [...accountIds] }
        const updated = yield* repo.update({ id: current.id, accountIds, ...next, updatedAt: now })
        yield* recordRecipient(scope, updated.accountIds, current.id, "recipient.updated")
        return updated
      })
      const result = yield* unlessTaken(write)
      if (result !== undefined) return result
      // An account of the recipient lists another with one of its values: say which.
      return yield* conflictWith(scope, attempted, attempted.accountIds, recipientId.toLowerCase())
    })

    /**
     * Deletes a recipient's personal data: names, e-mail, phone and `externalId` are erased and the row kept as
     * a tombstone (`deletedAt`), so gifts and orders naming it keep working; reads answer 404 from then on.
     */
    const remove = Effect.fn("Recipients.remove")(function* (scope: AccountScope, recipientId: string) {
      const now = yield* nowDate
      const erase = Effect.gen(function* () {
        const erased = yield* repo.erase(scope, recipientId, now)
        if (!erased) return yield* notFound(recipientId)
        yield* recordRecipient(scope, scope.accountIds, recipientId.toLowerCase(), "recipient.deleted")
      })
      yield* sql.withTransaction(erase).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** `recipient` with `accountIds` added to its accounts (409 when one of them lists another with its values). */
    const widen = (scope: AccountScope, recipient: RecipientRecord, accountIds: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const missing = accountIds.filter((id) => !recipient.accountIds.includes(id))
        if (missing.length === 0) return { recipient, created: false } as const
        const now = yield* nowDate
        const widened = yield* unlessTaken(
          Effect.map(
            repo.widen(recipient.id, missing, now),
            Option.getOrElse(() => recipient)
          )
        )
        if (widened === undefined) return yield* conflictWith(scope, recipient, missing, recipient.id)
        return { recipient: widened, created: false } as const
      })

    /**
     * The recipient a gift is for, among those the caller's scope reaches: the one with the `externalId` (when
     * given), else with the e-mail (one already listing the gift's accounts first), else a new one. A recipient
     * found that does not list the gift's account yet gets it added. A recipient the scope does not reach is
     * never matched, read or widened: the caller gets a recipient of its own accounts instead, which the
     * per-account uniqueness allows. Safe under races: a create that loses to another finds the winner.
     */
    const findOrCreate = Effect.fn("Recipients.findOrCreate")(function* (caller: RecipientCaller, input: NewRecipient) {
      const { scope } = caller
      const accountIds = yield* accountsFor(caller, input.accountIds)
      const matching = (column: "external_id" | "email", value: string | null) =>
        value === null
          ? Effect.succeed(undefined)
          : Effect.map(repo.findMatching(scope, column, value, accountIds), Option.getOrUndefined)
      const lookup = Effect.flatMap(matching("external_id", input.externalId), (found) =>
        found === undefined ? matching("email", input.email) : Effect.succeed(found)
      )
      const found = yield* lookup
      if (found === undefined) {
        const created = yield* Effect.either(insertNew(caller, { ...input, accountIds }, false))
        if (created._tag === "Right") return { recipient: created.right, created: true } as const
        // Another request made it meanwhile: that one is the recipient.
        const winner = yield* lookup
        if (winner === undefined) return yield* created.left
        return yield* widen(scope, winner, accountIds)
      }
      return yield* widen(scope, found, accountIds)
    })

    return { create, get, page, update, remove, findOrCreate } as const
  })
}) {}
