import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { CatalogV3 } from "../../services/catalog/CatalogV3.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "../company/ApiKeyAuth.js"
import { numberedList, searchParams } from "../company/v3.js"
import { collectionsV3Query, productsV3Query, productTagsV3Query, splitList, variantsV3Query } from "./CatalogV3Api.js"
import { collectionV3, productList, productV3, requireAccount, seesPrices, selfLink, tagV3, variantV3 } from "./v3.js"

/** Whether the calling key sees prices. */
const prices = Effect.map(CurrentCaller, (caller) => seesPrices(caller.key.permissions))

export const CatalogV3Live = HttpApiBuilder.group(Api, "catalogV3", (handlers) =>
  Effect.gen(function* () {
    const catalog = yield* CatalogV3
    return handlers
      .handle("products", () =>
        Effect.flatMap(prices, (prices) => productList(productsV3Query, catalog.products, prices))
      )
      .handle("product", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const options = { include: splitList(urlParams.include), fields: splitList(urlParams.fields) }
          const product = yield* catalog.product(path.productId, urlParams["filter[country]"], options)
          return { data: productV3(product, { ...options, prices: yield* prices }) }
        })
      )
      .handle("variants", ({ path }) =>
        Effect.flatMap(prices, (prices) =>
          numberedList(
            variantsV3Query,
            (query) =>
              Effect.map(catalog.variants(path.productId, query), (page) => ({
                ...page,
                rows: page.rows.map((variant) => variantV3(variant, { include: [], fields: query.fields, prices }))
              })),
            (variant) => variant
          )
        )
      )
      .handle("recommendations", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const options = { include: splitList(urlParams.include), fields: splitList(urlParams.fields) }
          const products = yield* catalog.recommendations(path.productId, urlParams["filter[country]"], options)
          const shown = { ...options, prices: yield* prices }
          return {
            data: products.map((product) => productV3(product, shown)),
            links: { self: yield* selfLink, next: null, prev: null }
          }
        })
      )
      .handle("collections", () =>
        Effect.gen(function* () {
          yield* requireAccount
          const shown = yield* prices
          return yield* numberedList(collectionsV3Query, catalog.collections, (collection) =>
            collectionV3(collection, shown)
          )
        })
      )
      .handle("collection", ({ path, urlParams }) =>
        Effect.gen(function* () {
          yield* requireAccount
          const collection = yield* catalog.collection(path.collectionId, urlParams["filter[country]"])
          return { data: collectionV3(collection, yield* prices) }
        })
      )
      .handle("collectionProducts", ({ path }) =>
        Effect.flatMap(prices, (prices) =>
          productList(productsV3Query, (query) => catalog.collectionProducts(path.collectionId, query), prices)
        )
      )
      .handle("productTags", () =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          // 3.1 renamed `title` to `filter[name]`: say so rather than "unknown parameter".
          if ("title" in searchParams(request.url)) {
            return yield* InvalidRequest.field("title", "Renamed filter[name] in 3.1.")
          }
          return yield* numberedList(productTagsV3Query, catalog.tags, tagV3)
        })
      )
  })
)
