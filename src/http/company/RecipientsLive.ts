import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { formatTimestamp } from "../../domain/company/Company.js"
import type { RecipientRecord } from "../../domain/company/Recipients.js"
import { maskEmail, maskName, maskPhone, readMode } from "../../services/company/Masking.js"
import { Recipients } from "../../services/company/Recipients.js"
import { Api } from "../Api.js"
import { type Caller, CurrentCaller } from "./ApiKeyAuth.js"
import { defaultLimit } from "./CampaignsApi.js"
import { listScope } from "./CampaignsLive.js"

/** How the caller reads recipients: unmasked only with `recipients:read:unmasked`. */
export const recipientReadMode = (caller: Caller) =>
  readMode(caller.key.permissions, "recipients") === "unmasked" ? "unmasked" : "masked"

const maskedOr = (value: string | null, mask: ((value: string) => string) | undefined) =>
  value === null ? null : mask === undefined ? value : mask(value)

/**
 * A recipient as v2 shows it (docs/decisions/0046-v2-recipients.md): names, e-mail and phone masked unless `mode` is
 * unmasked. A deleted recipient (never served by these routes, but named by gifts) shows empty names.
 */
export const recipientV2 = (recipient: RecipientRecord, mode: "masked" | "unmasked") => {
  const masked = mode === "masked"
  return {
    id: recipient.id,
    firstName: maskedOr(recipient.firstName, masked ? maskName : undefined) ?? "",
    lastName: maskedOr(recipient.lastName, masked ? maskName : undefined) ?? "",
    email: maskedOr(recipient.email, masked ? maskEmail : undefined),
    mobilePhone: maskedOr(recipient.mobilePhone, masked ? maskPhone : undefined),
    country: recipient.country,
    externalId: recipient.externalId,
    accounts: recipient.accountIds,
    source: recipient.source,
    createdAt: formatTimestamp(recipient.createdAt),
    updatedAt: formatTimestamp(recipient.updatedAt)
  }
}

export const RecipientsV2Live = HttpApiBuilder.group(Api, "recipientsV2", (handlers) =>
  Effect.gen(function* () {
    const recipients = yield* Recipients
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const created = yield* recipients.create(
            { scope: caller.scope, account: caller.account, source: caller.requestSource },
            {
              firstName: payload.firstName,
              lastName: payload.lastName,
              email: payload.email ?? null,
              mobilePhone: payload.mobilePhone ?? null,
              country: payload.country ?? null,
              externalId: payload.externalId ?? null,
              accountIds: payload.accounts ?? []
            }
          )
          // Creating needs `recipients:create` only; the answer is masked unless the key reads unmasked.
          return recipientV2(created, recipientReadMode(caller))
        })
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const scope = yield* listScope(caller, urlParams.accountId)
          const skip = urlParams.skip ?? 0
          const limit = urlParams.limit ?? defaultLimit
          const rows = yield* recipients.page(scope, {
            skip,
            limit,
            externalId: urlParams.externalId,
            email: urlParams.email
          })
          const mode = recipientReadMode(caller)
          return { results: rows.map((row) => recipientV2(row, mode)), skip, limit }
        })
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return recipientV2(yield* recipients.get(caller.scope, path.recipientId), recipientReadMode(caller))
        })
      )
      .handle("update", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { accounts: accountIds, ...fields } = payload
          const updated = yield* recipients.update(caller.scope, path.recipientId, { ...fields, accountIds })
          return recipientV2(updated, recipientReadMode(caller))
        })
      )
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => recipients.remove(caller.scope, path.recipientId))
      )
  })
)
