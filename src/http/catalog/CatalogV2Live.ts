import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { LandedCatalog } from "../../services/catalog/LandedCatalog.js"
import { Api } from "../Api.js"
import { type Caller, CurrentCaller } from "../company/ApiKeyAuth.js"
import { defaultLimit } from "./CatalogV2Api.js"
import { productV2, variantV2 } from "./v2.js"

/** Prices (and costs) are shown only to a key holding `products:read:prices`. */
const seesPrices = (caller: Caller) => caller.key.permissions.includes("products:read:prices")

export const CatalogV2Live = HttpApiBuilder.group(Api, "catalogV2", (handlers) =>
  Effect.gen(function* () {
    const landed = yield* LandedCatalog
    return handlers
      .handle("products", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const skip = urlParams.skip ?? 0
          const limit = urlParams.limit ?? defaultLimit
          const { products, country } = yield* landed.products({ ...urlParams, skip, limit })
          return {
            results: products.map((product) => productV2(product, country.code, seesPrices(caller))),
            skip,
            limit
          }
        })
      )
      .handle("variant", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { variant, country } = yield* landed.variant(path.variantId, urlParams.country)
          return variantV2(variant, country.code, seesPrices(caller))
        })
      )
  })
)
