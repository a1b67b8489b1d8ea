import { Effect, Option } from "effect"
import type { AmountRange, CatalogCollection, CatalogProduct, CatalogVariant } from "../../domain/catalog/CatalogV3.js"
import { CollectionNotFound, ProductNotFound } from "../../domain/catalog/Errors.js"
import type { CollectionRecord, ProductRecord } from "../../domain/catalog/Records.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { decodeCursor, type V3Cursor, type V3Query } from "../../domain/platform/V3Query.js"
import type { V3Page } from "../platform/V3QuerySql.js"
import { absoluteUrl, Catalog, DEFAULT_COUNTRY, PublicUrl } from "./Catalog.js"
import { CatalogRepo, type Offer, type PriceBounds, type ProductView } from "./CatalogRepo.js"
import { convertUsd, landedAmounts, landedInput, Pricing, type PricingCountry } from "./Pricing.js"

/**
 * The catalog as the company API lists it (docs/decisions/0042-v3-catalog.md; docs/catalog.md "Catalog (v3)"): products
 * with keyset cursors, a collection's products, a product's variants with landed prices, collections and tags,
 * filtered, sorted and paged in SQL from a parsed v3 query (CatalogRepo, with
 * src/services/platform/V3QuerySql.ts).
 *
 * - A product is listed when it has a priced variant (`min_price_usd` is set), so every sort key is present.
 * - Prices are for `filter[country]`, else the account's country: accounts have no country of their own and
 *   bill in USD, so that is the catalog's default country, US.
 * - `filter[country]` also narrows: only products with a variant available there (priced, in stock, shipping
 *   there), as v1 search does. `filter[price]` is the item price of such a variant in that currency; without a
 *   country, of any priced variant, in USD.
 */

export type { ProductView }

const Hex24 = /^[0-9a-f]{24}$/

const noExtras: ProductView = { include: [], fields: [] }

const bound = (value: string | undefined) => (value === undefined ? undefined : Number(value))

/** Whether a cursor sent back could be one of ours for this sort: the value's type, and an id. */
const cursorFits = (cursor: V3Cursor, key: "createdAt" | "minPrice" | "title" | "position") => {
  if (!Hex24.test(cursor.id)) return false
  const value = cursor.value
  switch (key) {
    case "createdAt":
      return (
        typeof value === "string" &&
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(value) &&
        !Number.isNaN(Date.parse(value))
      )
    case "minPrice":
    case "position":
      return typeof value === "number" && Number.isSafeInteger(value) && value >= 0
    case "title":
      return typeof value === "string"
  }
}

export class CatalogV3 extends Effect.Service<CatalogV3>()("CatalogV3", {
  dependencies: [Catalog.Default, Pricing.Default, CatalogRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* CatalogRepo
    const catalog = yield* Catalog
    const pricing = yield* Pricing
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")
    const absolute = (path: string) => absoluteUrl(publicUrl, path) as string

    /** The country prices are for: `filter[country]` (either case), else the account's country (US). */
    const countryOf = Effect.fn("CatalogV3.country")(function* (code: string | undefined) {
      const wanted = (code ?? DEFAULT_COUNTRY).toUpperCase()
      const found = (yield* pricing.reference()).country.get(wanted)
      if (found === undefined) {
        return yield* InvalidRequest.field("filter[country]", `${wanted} is not a supported country.`)
      }
      return found
    })

    const amount = (usd: number, country: PricingCountry) => ({
      amount: convertUsd(usd, country.fxRate, country.digits),
      currency: country.currency
    })

    const rangeOf = (minUsd: number | null, maxUsd: number | null, country: PricingCountry): AmountRange | null =>
      minUsd === null || maxUsd === null ? null : { min: amount(minUsd, country), max: amount(maxUsd, country) }

    /**
     * The query's `filter[country]` and price bounds (named `min` and `max` in this list), which make one
     * condition together (`offered`); the other filters compile on their own.
     */
    const splitFilters = (query: V3Query, names: { readonly min?: string; readonly max: string }) => {
      const rest: Record<string, string> = { ...query.filters }
      const take = (name: string | undefined) => {
        if (name === undefined) return undefined
        const value = rest[name]
        delete rest[name]
        return value
      }
      const countryCode = take("country")
      const bounds: PriceBounds = { min: bound(take(names.min)), max: bound(take(names.max)) }
      return { rest: { ...query, filters: rest } satisfies V3Query, countryCode, bounds }
    }

    const toProduct = (row: ProductRecord, country: PricingCountry): CatalogProduct => ({
      id: row.id,
      title: row.title,
      catalog: row.catalog,
      type: row.physicalVariantCount === 0 ? "digital" : "physical",
      category: row.category,
      brand: row.brandId === null ? null : { id: row.brandId, name: row.brandName ?? "" },
      images: row.images.map(absolute),
      ...(row.tags === null ? {} : { tags: row.tags }),
      ...(row.options === null ? {} : { options: row.options }),
      variantsCount: row.variantCount,
      priceRange: rangeOf(row.minPriceUsd, row.maxPriceUsd, country),
      createdAt: row.createdAt
    })

    /** A cursor from `links.next` of this list and sort; anything else is a 400 naming `page[cursor]`. */
    const checkCursor = (query: V3Query, inCollection: boolean) => {
      if (query.page.cursor === undefined) return Effect.void
      const cursor = decodeCursor(query.page.cursor)
      const sortField = query.sort[0]?.field
      const key =
        sortField === "minPrice" || sortField === "title" || sortField === "createdAt"
          ? sortField
          : inCollection
            ? "position"
            : "createdAt"
      return cursor !== undefined && cursorFits(cursor, key)
        ? Effect.void
        : InvalidRequest.field("page[cursor]", "Not a cursor of this list; follow links.next as given.")
    }

    /** What a list with these country and price filters offers (see CatalogRepo's `Offer`). */
    const offerOf = (countryCode: string | undefined, bounds: PriceBounds, country: PricingCountry): Offer => ({
      country: countryCode === undefined ? undefined : country,
      bounds,
      usd: country
    })

    /** A page of products, of the whole catalog or of one collection (in its order by default). */
    const productPage = (query: V3Query, collectionId: string | undefined) =>
      Effect.gen(function* () {
        yield* checkCursor(query, collectionId !== undefined)
        const { rest, countryCode, bounds } = splitFilters(query, { min: "price][gte", max: "price][lte" })
        const country = yield* countryOf(countryCode)
        const page = yield* repo.productPage(rest, collectionId, offerOf(countryCode, bounds, country))
        return { ...page, rows: page.rows.map((row) => toProduct(row, country)) } satisfies V3Page<CatalogProduct>
      })

    /** How many products a listing would walk through, all pages together (an export's progress). */
    const productCount = Effect.fn("CatalogV3.productCount")(function* (
      query: V3Query,
      collectionId: string | undefined
    ) {
      const { rest, countryCode, bounds } = splitFilters(query, { min: "price][gte", max: "price][lte" })
      const country = yield* countryOf(countryCode)
      return yield* repo.productCount(rest, collectionId, offerOf(countryCode, bounds, country))
    })

    /**
     * A page of products (never their variants), by a parsed v3 query with a keyset cursor: `filter[catalog|
     * type|search|tagId|brandId|country]`, `filter[price][gte|lte]`, one sort of `createdAt|minPrice|title`
     * (newest first by default). Prices are for the query's country.
     */
    const products = Effect.fn("CatalogV3.products")((query: V3Query) => productPage(query, undefined))

    /** A page of a collection's products (404 for an unknown collection), as `products` pages them. */
    const collectionProducts = Effect.fn("CatalogV3.collectionProducts")(function* (
      collectionId: string,
      query: V3Query
    ) {
      const id = collectionId.toLowerCase()
      if (!(yield* repo.collectionExists(id))) {
        return yield* new CollectionNotFound({ message: `No collection ${id}.`, collectionId: id })
      }
      return yield* productPage(query, id)
    })

    /** Products by id, in that order, priced for the country (unknown or unpriced ones left out). */
    const productsById = (ids: ReadonlyArray<string>, country: PricingCountry, view: ProductView) =>
      Effect.gen(function* () {
        if (ids.length === 0) return []
        const rows = yield* repo.productsById(ids, view)
        const byId = new Map(rows.map((row) => [row.id, row]))
        return ids.flatMap((id) => {
          const row = byId.get(id)
          return row === undefined ? [] : [toProduct(row, country)]
        })
      })

    const notFound = (productId: string) => new ProductNotFound({ message: `No product ${productId}.`, productId })

    /** One product, priced for the country (default the account's), with what `view` asks for; 404 when unknown. */
    const product = Effect.fn("CatalogV3.product")(function* (
      productId: string,
      countryCode: string | undefined,
      view: ProductView
    ) {
      const country = yield* countryOf(countryCode)
      const [found] = yield* productsById([productId.toLowerCase()], country, view)
      if (found === undefined) return yield* notFound(productId)
      return found
    })

    /** The products v1's product detail recommends beside this one, available in the country. */
    const recommendations = Effect.fn("CatalogV3.recommendations")(function* (
      productId: string,
      countryCode: string | undefined,
      view: ProductView
    ) {
      const country = yield* countryOf(countryCode)
      const id = productId.toLowerCase()
      if ((yield* productsById([id], country, noExtras)).length === 0) return yield* notFound(productId)
      return yield* productsById(yield* catalog.recommendedIds(id, country), country, view)
    })

    /**
     * A page of a product's variants (404 for an unknown product), each with its landed price and breakdown
     * for `filter[country]` (default the account's), in that country's currency.
     */
    const variants = Effect.fn("CatalogV3.variants")(function* (productId: string, query: V3Query) {
      const id = productId.toLowerCase()
      const country = yield* countryOf(query.filters.country)
      if (!(yield* repo.pricedProductExists(id))) return yield* notFound(productId)
      const page = yield* repo.variantPage(id, query)
      const reference = yield* pricing.reference()
      const facts = new Map(
        (yield* pricing.variants(Option.some(page.rows.map((row) => row.id)))).map((v) => [v.variantId, v])
      )
      const priced = page.rows.map((row): CatalogVariant => {
        const fact = facts.get(row.id)
        const priceUsd = fact?.priceUsd ?? null
        const landed =
          fact === undefined || priceUsd === null
            ? null
            : landedAmounts(landedInput(reference, { ...fact, priceUsd }, country))
        const money = (minor: number) => ({ amount: minor, currency: country.currency })
        return {
          id: row.id,
          productId: row.productId,
          title: row.title,
          selectedOptions: row.selectedOptions,
          images: row.imageUrl === null ? [] : [absolute(row.imageUrl)],
          personalization: row.personalization,
          descriptionHtml: row.descriptionHtml,
          price:
            landed === null
              ? null
              : {
                  item: money(landed.item),
                  shipping: money(landed.shipping),
                  duties: money(landed.duties),
                  serviceFee: money(landed.serviceFee),
                  total: money(landed.total)
                }
        }
      })
      return { ...page, rows: priced } satisfies V3Page<CatalogVariant>
    })

    const toCollection = (row: CollectionRecord, country: PricingCountry): CatalogCollection => ({
      id: row.id,
      name: row.name,
      description: row.description,
      images: row.imageUrl === null ? [] : [absolute(row.imageUrl)],
      tags: row.tags,
      priceRange: rangeOf(row.minUsd, row.maxUsd, country),
      createdAt: row.createdAt
    })

    /**
     * A page of collections, priced for `filter[country]` (default the account's). `filter[country]` keeps
     * those holding a product available there, `filter[maxPrice]` those holding one at or under it.
     */
    const collections = Effect.fn("CatalogV3.collections")(function* (query: V3Query) {
      const { rest, countryCode, bounds } = splitFilters(query, { max: "maxPrice" })
      const country = yield* countryOf(countryCode)
      const narrowed = countryCode !== undefined || bounds.max !== undefined
      const page = yield* repo.collectionPage(rest, narrowed ? offerOf(countryCode, bounds, country) : undefined)
      return { ...page, rows: page.rows.map((row) => toCollection(row, country)) } satisfies V3Page<CatalogCollection>
    })

    /** One collection, priced for the country (default the account's); 404 when unknown. */
    const collection = Effect.fn("CatalogV3.collection")(function* (collectionId: string, countryCode?: string) {
      const country = yield* countryOf(countryCode)
      const row = yield* repo.collection(collectionId.toLowerCase())
      if (Option.isNone(row)) {
        return yield* new CollectionNotFound({ message: `No collection ${collectionId}.`, collectionId })
      }
      return toCollection(row.value, country)
    })

    /** A page of product tags, by name; `filter[name]` is a case-insensitive substring. */
    const tags = Effect.fn("CatalogV3.tags")((query: V3Query) => repo.tagPage(query))

    return {
      products,
      collectionProducts,
      productCount,
      product,
      recommendations,
      variants,
      collections,
      collection,
      tags
    } as const
  })
}) {}
