import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { SearchResult } from "../../domain/catalog/Search.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import { Addresses } from "../../services/catalog/Addresses.js"
import { Catalog } from "../../services/catalog/Catalog.js"
import { Search } from "../../services/catalog/Search.js"
import { Api } from "../Api.js"
import { CurrentUser } from "../identity/Agent.js"

/** A request without `country` is priced for the signed-in user's default country (spec "Catalog"). */
const userCountry = (country: string | undefined) =>
  country === undefined ? Effect.map(CurrentUser, ({ user }) => user.defaultCountry) : Effect.succeed(country)

export const CatalogLive = HttpApiBuilder.group(Api, "catalog", (handlers) =>
  Effect.gen(function* () {
    const search = yield* Search
    const catalog = yield* Catalog
    const addresses = yield* Addresses
    return handlers
      .handle("search", ({ urlParams }) =>
        userCountry(urlParams.country).pipe(
          Effect.flatMap((country) => search.search({ ...urlParams, country })),
          // Sent as built: a search result holds no transformation, so its type is its encoded form (checked
          // here by the compiler, and its JSON by the Search tests); encoding every field of every summary
          // through the schema again was ~7 % of a search's CPU (docs/performance.md).
          Effect.map((result) => HttpServerResponse.unsafeJson(result satisfies typeof SearchResult.Encoded))
        )
      )
      .handle("product", ({ path, urlParams }) =>
        Effect.flatMap(userCountry(urlParams.country), (country) => catalog.product(path.productId, country))
      )
      .handle("variant", ({ path, urlParams }) =>
        Effect.flatMap(userCountry(urlParams.country), (country) => catalog.variant(path.variantId, country))
      )
      .handle("availability", ({ path, urlParams }) =>
        Effect.map(catalog.availability(path.variantId, urlParams.countries), (countries) => ({
          variantId: path.variantId,
          countries
        }))
      )
      .handle("collections", ({ urlParams }) =>
        userCountry(urlParams.country).pipe(
          Effect.flatMap((country) => catalog.collections({ ...urlParams, country, limit: urlParams.limit ?? 20 })),
          Effect.map((collections) => ({ collections }))
        )
      )
      .handle("collection", ({ path, urlParams }) =>
        Effect.flatMap(userCountry(urlParams.country), (country) =>
          catalog.collection(path.collectionId, { ...urlParams, country, limit: urlParams.limit ?? 20 })
        )
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
