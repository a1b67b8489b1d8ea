import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { Addresses } from "../../services/catalog/Addresses.js"
import { Api } from "../Api.js"
import { autocompleteV3Query } from "./OrderAddressesApi.js"
import { addressSuggestionV3, numberedList } from "./v3.js"

export const OrderAddressesV3Live = HttpApiBuilder.group(Api, "orderAddressesV3", (handlers) =>
  Effect.gen(function* () {
    const addresses = yield* Addresses
    return handlers
      .handle("validate", ({ payload }) =>
        Effect.map(addresses.validate(payload.address), ({ message, result }) => ({ data: { result, message } }))
      )
      .handle("autocomplete", ({ urlParams }) =>
        numberedList(
          autocompleteV3Query,
          ({ page }) =>
            addresses.autocomplete(urlParams["filter[address]"], urlParams["filter[country]"]).pipe(
              Effect.map((suggestions) => {
                const start = (page.number - 1) * page.size
                return {
                  rows: suggestions.slice(start, start + page.size),
                  hasNext: suggestions.length > start + page.size,
                  nextCursor: null
                }
              }),
              // Two letters that name no country (`ZZ`): the parameter is wrong, as for any bound.
              Effect.catchTag("UnknownCountry", (e) => Effect.fail(InvalidRequest.field("filter[country]", e.message)))
            ),
          addressSuggestionV3
        )
      )
  })
)
