import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { Environment } from "../../src/domain/company/Company.js"
import { CompanyOrders } from "../../src/services/company/CompanyOrders.js"
import { Members } from "../../src/services/company/Members.js"
import { CompanyPolicy } from "../../src/services/company/Policy.js"
import { londonAddress } from "./checkout.js"

/**
 * Company orders for tests running a server in-process on the seeded catalog: placed through the service the API
 * calls (`CompanyOrders.place`), as a member of the company, to a London address.
 */

/** A physical variant for sale that ships to GB with stock to spare. */
export const variantShippingToGb = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ id: string }>`SELECT v.id FROM variants v JOIN variant_locations l ON l.variant_id = v.id
      WHERE NOT v.is_digital AND v.price_usd IS NOT NULL AND 'GB' = ANY (l.ships_to) AND l.stock > 100
      ORDER BY l.stock DESC, v.id LIMIT 1`,
    (rows) => rows[0]!.id
  )
).pipe(Effect.orDie)

/** The member's scope in `environment`, as the dashboard makes it. */
export const memberScopeOf = (companyId: string, userId: string, environment: Environment = "test") =>
  Effect.gen(function* () {
    const member = yield* Effect.orDie(Effect.flatMap(Members, (members) => members.get(companyId, userId)))
    return yield* Effect.orDie(Effect.flatMap(CompanyPolicy, (policy) => policy.scopeForMember(member, environment)))
  })

/** Places an order for the recipient as the member `userId` of `companyId`, with idempotency key `key`; its id. */
export const placeOrder = (
  by: { readonly companyId: string; readonly userId: string },
  key: string,
  recipient: { readonly firstName: string; readonly lastName: string; readonly email: string },
  environment: Environment = "test"
) =>
  Effect.gen(function* () {
    const scope = yield* memberScopeOf(by.companyId, by.userId, environment)
    const orders = yield* CompanyOrders
    const placed = yield* orders.place(
      { scope, account: Option.none(), source: null },
      {
        variantId: yield* variantShippingToGb,
        recipient: { ...recipient, phone: "+44 20 7946 0958" },
        shippingAddress: londonAddress,
        idempotencyKey: key,
        tags: [],
        metadata: null
      }
    )
    return placed.result.id
  }).pipe(Effect.orDie)
