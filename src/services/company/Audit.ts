import { Effect, FiberRef } from "effect"
import { globalValue } from "effect/GlobalValue"
import { type Actor, type AuditAction, targetTypeOf } from "../../domain/company/Audit.js"
import type { AccountScope, Environment } from "../../domain/company/Company.js"
import { makeId } from "../../domain/platform/Ids.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { nowDate } from "../platform/Time.js"
import { AuditRepo } from "./AuditRepo.js"

/**
 * The company audit log (docs/decisions/0057-audit-log.md). Each mutating operation of the company's services calls
 * `record` inside its own transaction, so a change and its row commit or roll back together, and a refused operation
 * leaves none.
 *
 * Who acted is not a parameter of every operation: it rides on the fiber (`CurrentActor`), set once per request by
 * the API-key middleware (`setActor`) or the dashboard's session (`setActor`, or `withActor` around an effect). A
 * fiber without one is the operator's (the CLI).
 */

/** The actor of the running fiber; none for the operator. */
export const CurrentActor = globalValue("ribbon/CurrentActor", () => FiberRef.unsafeMake<Actor | undefined>(undefined))

/** Makes `actor` the actor of the rest of this fiber (a request's fiber, and what it forks). */
export const setActor = (actor: Actor): Effect.Effect<void> => FiberRef.set(CurrentActor, actor)

/** Runs `effect` as `actor`. */
export const withActor =
  (actor: Actor) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(effect, CurrentActor, actor)

/**
 * The account a change touching `accountIds` is on: the one account, if there is exactly one; else none (the change
 * is then read by every key of the company and environment, as company-wide changes are).
 */
export const soleAccount = (accountIds: "all" | ReadonlyArray<string>): string | null =>
  accountIds !== "all" && accountIds.length === 1 ? accountIds[0]! : null

/**
 * A change to record: of which company and environment (none for a change of the company as a whole: its members,
 * invitations, ownership and settings), on which account if one, what and on which resource.
 */
export interface AuditedChange {
  readonly companyId: string
  readonly environment: Environment | null
  readonly accountId: string | null
  readonly action: AuditAction
  /** The id of the resource changed; its type is the action's (`targetTypeOf`). */
  readonly target: string
  /**
   * Who acted, when it is not the fiber's actor: a person accepting an invitation acts as themselves, who may
   * have no session yet. The request's source address and id are still the fiber's actor's, if it has one.
   */
  readonly as?: Pick<Actor, "type" | "id" | "name">
}

/** The request an actor came by, if known. */
const requestOf = (actor: Actor | undefined) => ({
  sourceAddress: actor?.sourceAddress ?? null,
  requestId: actor?.requestId ?? null
})

export class Audit extends Effect.Service<Audit>()("Audit", {
  dependencies: [AuditRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* AuditRepo

    /** Writes the change's row, as the fiber's actor (or `as`), in the caller's transaction. */
    const record = Effect.fn("Audit.record")(function* (change: AuditedChange) {
      const fiberActor = yield* FiberRef.get(CurrentActor)
      const actor = change.as ?? fiberActor
      yield* repo.insert({
        id: yield* makeId,
        companyId: change.companyId,
        occurredAt: yield* nowDate,
        actorType: actor?.type ?? "operator",
        actorId: actor?.id ?? null,
        actorName: actor?.name ?? "operator",
        action: change.action,
        targetType: targetTypeOf(change.action),
        targetId: change.target,
        accountId: change.accountId,
        environment: change.environment,
        ...requestOf(fiberActor)
      })
    })

    /**
     * One page of the log as the scope reads it, newest first: its environment's rows, of those on an account only
     * its accounts', and the rows of the company as a whole.
     */
    const page = Effect.fn("Audit.page")((scope: AccountScope, query: V3Query) => repo.page(scope, query))

    return { record, page } as const
  })
}) {}
