import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Accounts } from "../../services/company/Accounts.js"
import { Billing } from "../../services/company/Billing.js"
import { Api } from "../Api.js"
import { accountsV3Query, billingMethodsV3Query } from "./AccountsApi.js"
import { CurrentCaller } from "./ApiKeyAuth.js"
import { accountV3, billingMethodV3, numberedList } from "./v3.js"

export const AccountsV3Live = HttpApiBuilder.group(Api, "accountsV3", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const billing = yield* Billing
    return handlers
      .handle("list", () =>
        Effect.flatMap(CurrentCaller, (caller) =>
          numberedList(accountsV3Query, (query) => accounts.page(caller.scope, query), accountV3)
        )
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return { data: accountV3(yield* accounts.find(caller.scope, path.accountId)) }
        })
      )
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const method = payload.billingMethod
          const account = yield* accounts.create(caller.scope, {
            name: payload.name,
            billingMethod:
              method === undefined
                ? undefined
                : { name: method.name, type: method.type, spendingLimit: method.spendingLimit.amount }
          })
          return { data: accountV3(account) }
        })
      )
      .handle("billingMethods", () =>
        Effect.flatMap(CurrentCaller, (caller) =>
          numberedList(billingMethodsV3Query, (query) => billing.page(caller.scope, query), billingMethodV3)
        )
      )
      .handle("billingMethod", ({ path }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          return { data: billingMethodV3(yield* billing.find(caller.scope, path.billingMethodId)) }
        })
      )
  })
)
