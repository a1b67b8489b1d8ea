import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import type { CatalogCollection, CatalogProduct, CatalogVariant, TagRef } from "../../domain/catalog/CatalogV3.js"
import type { CatalogExport, DownloadUrls, ExportRequest } from "../../domain/catalog/Exports.js"
import { formatTimestamp, type Permission } from "../../domain/company/Company.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import type { V3Page } from "../../services/platform/V3QuerySql.js"
import { CurrentCaller } from "../company/ApiKeyAuth.js"
import { searchParams } from "../company/v3.js"
import { cursorLinks, parseV3Query, type V3Query, type V3QuerySpec } from "../V3Requests.js"
import type { ProductListV3, ProductV3 } from "./CatalogV3Api.js"

/**
 * The company API's version 3 presentation of the catalog (docs/decisions/0042-v3-catalog.md): products without their
 * variants, `include` and `fields` adding what was asked for, money as `{amount, currency}`, and prices
 * left out for a key without `products:read:prices`. Exports present their lines with `productV3` too.
 */

/** What a product or variant shows beyond its own fields. */
export interface PresentOptions {
  readonly include: ReadonlyArray<string>
  readonly fields: ReadonlyArray<string>
  /** The key holds `products:read:prices`; without it no price or breakdown is shown. */
  readonly prices: boolean
}

/** Collections are read in an account (spec "Authentication" 9): `Ribbon-Account-Id` is required. */
export const requireAccount = Effect.flatMap(CurrentCaller, (caller) =>
  Option.isSome(caller.account)
    ? Effect.void
    : InvalidRequest.field("Ribbon-Account-Id", "Collections are read in an account: name it with this header.")
)

/** Whether a key may see prices (`products:read:prices`). */
export const seesPrices = (permissions: ReadonlyArray<Permission>) => permissions.includes("products:read:prices")

const media = (images: ReadonlyArray<string>) => images.map((src) => ({ type: "image" as const, src }))

/** A product as `GET /v3/products` shows it; `include=brand,tags` and `fields=priceRange,variantsCount,options` add theirs. */
export const productV3 = (product: CatalogProduct, options: PresentOptions): typeof ProductV3.Encoded => ({
  id: product.id,
  title: product.title,
  catalog: product.catalog,
  type: product.type,
  category: { fullName: product.category },
  media: media(product.images),
  createdAt: formatTimestamp(product.createdAt),
  ...(options.include.includes("brand") ? { brand: product.brand } : {}),
  ...(options.include.includes("tags") ? { tags: product.tags ?? [] } : {}),
  ...(options.fields.includes("priceRange") && options.prices ? { priceRange: product.priceRange } : {}),
  ...(options.fields.includes("variantsCount") ? { variantsCount: product.variantsCount } : {}),
  ...(options.fields.includes("options") ? { options: product.options ?? [] } : {})
})

/** A variant; `fields=price,priceBreakdown,details` add the landed price, its parts and the description. */
export const variantV3 = (variant: CatalogVariant, options: PresentOptions) => ({
  id: variant.id,
  productId: variant.productId,
  title: variant.title,
  selectedOptions: variant.selectedOptions,
  media: media(variant.images),
  personalization: variant.personalization,
  ...(options.fields.includes("price") && options.prices ? { price: variant.price?.total ?? null } : {}),
  ...(options.fields.includes("priceBreakdown") && options.prices
    ? {
        priceBreakdown:
          variant.price === null
            ? null
            : {
                item: variant.price.item,
                shipping: variant.price.shipping,
                duties: variant.price.duties,
                serviceFee: variant.price.serviceFee
              }
      }
    : {}),
  ...(options.fields.includes("details") ? { details: { descriptionHtml: variant.descriptionHtml } } : {})
})

export const collectionV3 = (collection: CatalogCollection, prices: boolean) => ({
  id: collection.id,
  name: collection.name,
  description: collection.description,
  media: media(collection.images),
  tags: collection.tags,
  ...(prices ? { priceRange: collection.priceRange } : {}),
  createdAt: formatTimestamp(collection.createdAt)
})

export const tagV3 = (tag: TagRef) => ({ id: tag.id, name: tag.name })

/**
 * A cursor-paged v3 list of products: parses the request's query against `spec` (400 on anything it does not
 * accept), reads the page, and presents it as `{data, links}` with `links.next` carrying the next cursor.
 *
 * The page is sent as it is built, not encoded through `ProductListV3`: checking a page of 300 products
 * against the schema took ~4 ms, eight times its `JSON.stringify` (docs/performance.md, `bench:products`).
 * `productV3` returns the schema's encoded form, so the compiler holds every page to the documented shape.
 */
export const productList = <E, R>(
  spec: V3QuerySpec,
  read: (query: V3Query) => Effect.Effect<V3Page<CatalogProduct>, E, R>,
  prices: boolean
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = searchParams(request.url)
    const query = yield* parseV3Query(params, spec)
    const page = yield* read(query)
    const path = new URL(request.url, "http://ribbon").pathname
    const shown: PresentOptions = { include: query.include, fields: query.fields, prices }
    const body: typeof ProductListV3.Encoded = {
      data: page.rows.map((product) => productV3(product, shown)),
      links: cursorLinks(path, params, query, page.nextCursor)
    }
    return HttpServerResponse.unsafeJson(body)
  })

/** The path and query of the request being served (a single resource's `links.self`). */
export const selfLink = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const url = new URL(request.url, "http://ribbon")
  return `${url.pathname}${url.search}`
})

/** A line of an export file: the product as `GET /v3/products/{id}` shows it with the export's options. */
export const exportLine = (product: CatalogProduct, request: ExportRequest) => productV3(product, request)

/** An export, with its signed download URLs once completed. */
export const exportV3 = (exported: CatalogExport, downloadUrls: DownloadUrls) => ({
  id: exported.id,
  type: exported.kind,
  status: exported.status,
  locations: exported.request.locations,
  progress:
    exported.status === "completed"
      ? 100
      : exported.totalLines === null || exported.totalLines === 0
        ? 0
        : Math.min(99, Math.floor((exported.writtenLines * 100) / exported.totalLines)),
  downloadUrls: exported.status === "completed" ? downloadUrls : null,
  expiresAt: exported.expiresAt === null ? null : formatTimestamp(exported.expiresAt),
  errorMessage: exported.errorMessage,
  createdAt: formatTimestamp(exported.createdAt),
  completedAt: exported.completedAt === null ? null : formatTimestamp(exported.completedAt)
})
