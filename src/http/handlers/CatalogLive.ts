import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { FieldIssue, InvalidRequest } from "../../domain/Errors.js"
import { Addresses } from "../../services/Addresses.js"
import { Catalog } from "../../services/Catalog.js"
import { Search } from "../../services/Search.js"
import { Api } from "../Api.js"

export const CatalogLive = HttpApiBuilder.group(Api, "catalog", (handlers) =>
  Effect.gen(function* () {
    const search = yield* Search
    const catalog = yield* Catalog
    const addresses = yield* Addresses
    return handlers
      .handle("search", ({ urlParams }) => search.search(urlParams))
      .handle("product", ({ path, urlParams }) => catalog.product(path.productId, urlParams.country))
      .handle("variant", ({ path, urlParams }) => catalog.variant(path.variantId, urlParams.country))
      .handle("availability", ({ path, urlParams }) =>
        Effect.map(catalog.availability(path.variantId, urlParams.countries), (countries) => ({
          variantId: path.variantId,
          countries
        }))
      )
      .handle("collections", ({ urlParams }) =>
        Effect.map(catalog.collections({ ...urlParams, limit: urlParams.limit ?? 20 }), (collections) => ({
          collections
        }))
      )
      .handle("collection", ({ path, urlParams }) =>
        catalog.collection(path.collectionId, { ...urlParams, limit: urlParams.limit ?? 20 })
      )
      .handle("tags", ({ urlParams }) => Effect.map(catalog.tags(urlParams.q), (tags) => ({ tags })))
      .handle("countries", () =>
        Effect.map(catalog.countries(), (countries) => ({ countries: countries.map((c) => c.code) }))
      )
      .handle("autocompleteAddress", ({ urlParams }) =>
        addresses.autocomplete(urlParams.q, urlParams.country).pipe(
          Effect.map((suggestions) => ({ suggestions })),
          Effect.catchTag("UnknownCountry", (e) =>
            Effect.fail(
              new InvalidRequest({
                message: `country: ${e.message}`,
                errors: [FieldIssue.make({ path: "country", message: e.message })]
              })
            )
          )
        )
      )
      .handle("validateAddress", ({ payload }) =>
        Effect.map(addresses.validate(payload.address), ({ result, message }) => ({ result, message }))
      )
  })
)
