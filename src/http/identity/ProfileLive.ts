import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Bearers } from "../../services/identity/Bearers.js"
import { Users } from "../../services/identity/Users.js"
import { Api } from "../Api.js"
import { CurrentUser } from "./Agent.js"

export const ProfileLive = HttpApiBuilder.group(Api, "profile", (handlers) =>
  Effect.gen(function* () {
    const users = yield* Users
    const bearers = yield* Bearers
    return handlers
      .handle("me", () =>
        Effect.gen(function* () {
          const { user, scopes } = yield* CurrentUser
          return { user, addresses: yield* users.listAddresses(user.id), scopes }
        })
      )
      .handle("updateMe", ({ payload }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          // The user's cached tokens carry the profile: the next request must see the change.
          users.update(user.id, payload).pipe(Effect.tap(() => bearers.forgetUser(user.id)))
        )
      )
      .handle("addAddress", ({ payload }) =>
        Effect.flatMap(CurrentUser, ({ user }) => users.addAddress(user.id, payload))
      )
      .handle("deleteAddress", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => users.deleteAddress(user.id, path.addressId))
      )
  })
)
