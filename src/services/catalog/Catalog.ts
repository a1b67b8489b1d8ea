import { Context, Effect, Either, Option } from "effect"
import {
  Collection,
  CollectionPriceRange,
  ProductOption,
  ProductSummary,
  Tag,
  Variant
} from "../../domain/catalog/Catalog.js"
import { CollectionNotFound, ProductNotFound, VariantNotFound } from "../../domain/catalog/Errors.js"
import type {
  CollectionRecord,
  SummaryRecord,
  SummaryVariantRecord,
  VariantRecord
} from "../../domain/catalog/Records.js"
import { FieldIssue, InvalidRequest } from "../../domain/platform/Errors.js"
import type { Id } from "../../domain/platform/Ids.js"
import { MoneyRange } from "../../domain/platform/Money.js"
import { CatalogRepo } from "./CatalogRepo.js"
import { convertUsd, formatMoney, Pricing, type PricingCountry, type PricingReference } from "./Pricing.js"

/**
 * Catalog reads for the agent API (docs/catalog.md, docs/search.md): product summaries priced in a country,
 * products with their variants and recommendations, variants, collections, tags and countries.
 * Search (src/services/catalog/Search.ts) finds ids and asks this service for the summaries. The statements
 * are CatalogRepo's; this service prices its records for a country and returns the agent API's resources. It
 * also answers the other contexts' questions about products, variants and stock (`variantLabel`, `shipsTo`,
 * `orderVariant`, `offeredVariants`, `takeStock` …).
 */

/**
 * The country used when a caller names none. Agent API requests never get here without one: their handlers
 * default to the signed-in user's country (docs/search.md); this is the service's own default.
 */
export const DEFAULT_COUNTRY = "US"

/**
 * The service's public base URL (`PUBLIC_URL`, no trailing slash). Image paths in the catalog are relative
 * (`/images/…`); summaries and variants make them absolute with it. Provided by the layers (from AppConfig).
 */
export class PublicUrl extends Context.Tag("PublicUrl")<PublicUrl, string>() {}

/** A catalog path (`/images/…`) made absolute under the public URL; absolute URLs pass as they are. */
export const absoluteUrl = (publicUrl: string, path: string | null) =>
  path === null || /^https?:\/\//.test(path) ? path : `${publicUrl}${path.startsWith("/") ? "" : "/"}${path}`

// ---------------------------------------------------------------------------------------------------------
// Cursors: opaque base64url of the last row's sort key (docs/decisions/0022-search.md).

export interface CursorKey {
  /** Which ordering the key belongs to (`relevance`, `price_asc`, …, `collection`). */
  readonly s: string
  /** The sort key of the last row returned, ending with its id. */
  readonly k: ReadonlyArray<string | number>
}

export const encodeCursor = (key: CursorKey): string => Buffer.from(JSON.stringify(key), "utf8").toString("base64url")

const badCursor = (message: string) =>
  new InvalidRequest({
    message: `cursor: ${message}`,
    errors: [FieldIssue.make({ path: "cursor", message })]
  })

/** Decodes a cursor made for `ordering` with `length` key parts; anything else is a 400 naming `cursor`. */
export const decodeCursor = (
  cursor: string,
  ordering: string,
  length: number
): Either.Either<ReadonlyArray<string | number>, InvalidRequest> => {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return Either.left(badCursor("Malformed cursor."))
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
  } catch {
    return Either.left(badCursor("Malformed cursor."))
  }
  const key = parsed as Partial<CursorKey> | null
  if (
    typeof key !== "object" ||
    key === null ||
    typeof key.s !== "string" ||
    !Array.isArray(key.k) ||
    key.k.length !== length ||
    !key.k.every((part) => typeof part === "string" || (typeof part === "number" && Number.isFinite(part)))
  ) {
    return Either.left(badCursor("Malformed cursor."))
  }
  if (key.s !== ordering) {
    return Either.left(badCursor(`This cursor belongs to a different ordering (${key.s}); start again without it.`))
  }
  return Either.right(key.k)
}

/** Priced AND in stock (or untracked) AND ships to the country (docs/pricing.md). */
const purchasable = (variant: SummaryVariantRecord, country: string) =>
  variant.priceUsd !== null &&
  (variant.stock === null || variant.stock > 0) &&
  (variant.shipsTo ?? []).includes(country)

export class Catalog extends Effect.Service<Catalog>()("Catalog", {
  effect: Effect.gen(function* () {
    const repo = yield* CatalogRepo
    const pricing = yield* Pricing
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")

    const absolute = (path: string | null) => absoluteUrl(publicUrl, path)

    const money = (usd: number, country: PricingCountry) =>
      formatMoney(convertUsd(usd, country.fxRate, country.digits), country.currency, country.locale)

    /** A supported country by code (either case); otherwise a 400 naming `path`. */
    const country = Effect.fn("Catalog.country")(function* (
      code: string | undefined,
      path = "country",
      reference?: PricingReference
    ) {
      const wanted = (code ?? DEFAULT_COUNTRY).toUpperCase()
      const found = (reference ?? (yield* pricing.reference())).country.get(wanted)
      if (found === undefined) {
        return yield* new InvalidRequest({
          message: `${path}: ${wanted} is not a supported country (GET /v1/countries lists them).`,
          errors: [FieldIssue.make({ path, message: `Unsupported country: ${code}` })]
        })
      }
      return found
    })

    /** Every supported country, by code. */
    const countries = Effect.fn("Catalog.countries")(function* () {
      return (yield* pricing.reference()).countries
    })

    /** A product's summary priced for the country, from its `summaryColumns`. */
    const summary = (row: SummaryRecord, country: PricingCountry): ProductSummary => {
      const variants = row.variants ?? []
      const prices = variants.flatMap((v) => (v.priceUsd === null ? [] : [v.priceUsd]))
      const buyable = variants.filter((v) => purchasable(v, country.code))
      const images = row.images.map((url) => absolute(url) as string)
      return ProductSummary.make(
        {
          id: row.id as Id,
          title: row.title,
          brand: row.brand,
          category: row.category,
          catalog: row.catalog,
          imageUrl: images[0] ?? null,
          images,
          tags: row.tags,
          priceRange:
            prices.length === 0
              ? null
              : MoneyRange.make(
                  { min: money(Math.min(...prices), country), max: money(Math.max(...prices), country) },
                  true
                ),
          variantsCount: variants.length,
          options: (row.options ?? []).map((o) =>
            ProductOption.make({ name: o.name, displayName: o.displayName, values: o.values }, true)
          ),
          defaultVariantId: buyable.length === 1 ? (buyable[0]!.id as Id) : null
        },
        true
      )
    }

    /** Product summaries priced for the country, in the order of `ids` (unknown ids are skipped). */
    const summaries = Effect.fn("Catalog.summaries")(function* (ids: ReadonlyArray<string>, country: PricingCountry) {
      if (ids.length === 0) return [] as ReadonlyArray<ProductSummary>
      const rows = yield* repo.summaries(ids)
      const byId = new Map(rows.map((row) => [row.id, row]))
      return ids.flatMap((id) => {
        const row = byId.get(id)
        return row === undefined ? [] : [summary(row, country)]
      })
    })

    const toVariant = (row: VariantRecord, country: PricingCountry): Variant =>
      Variant.make(
        {
          id: row.id as Id,
          productId: row.productId as Id,
          title: row.title,
          selectedOptions: row.selectedOptions ?? {},
          imageUrl: absolute(row.imageUrl),
          price: row.priceUsd === null ? null : money(row.priceUsd, country),
          shippingRequired: row.shippingRequired,
          isDigital: row.isDigital,
          personalizationRequired: row.personalizationRequired,
          descriptionHtml: row.descriptionHtml,
          details: row.details ?? null
        },
        true
      )

    /** A product, its variants priced for the country, and up to 8 recommendations available there. */
    const product = Effect.fn("Catalog.product")(function* (productId: string, countryCode?: string) {
      const target = yield* country(countryCode)
      const [found] = yield* summaries([productId], target)
      if (found === undefined) {
        return yield* new ProductNotFound({ message: `No product ${productId}.`, productId })
      }
      const variantRows = yield* repo.productVariants(productId)
      return {
        product: found,
        variants: variantRows.map((row) => toVariant(row, target)),
        recommendations: (yield* repo.recommendedSummaries(productId, target)).map((row) => summary(row, target))
      }
    })

    /**
     * Up to 8 products to show beside one (the product detail's recommendations, on every API line): the same
     * category or a shared collection, both first, available in the country.
     */
    const recommendedIds = Effect.fn("Catalog.recommendedIds")((productId: string, target: PricingCountry) =>
      repo.recommendedIds(productId, target)
    )

    /** One variant, priced for the country. */
    const variant = Effect.fn("Catalog.variant")(function* (variantId: string, countryCode?: string) {
      const target = yield* country(countryCode)
      const row = yield* repo.variant(variantId)
      if (Option.isNone(row)) return yield* new VariantNotFound({ message: `No variant ${variantId}.`, variantId })
      return toVariant(row.value, target)
    })

    /** Availability and all-in price per country (default: every supported one). */
    const availability = Effect.fn("Catalog.availability")(function* (
      variantId: string,
      countryCodes?: ReadonlyArray<string>
    ) {
      const reference = yield* pricing.reference()
      const codes =
        countryCodes === undefined
          ? undefined
          : yield* Effect.forEach(countryCodes, (code) =>
              Effect.map(country(code, "countries", reference), (c) => c.code)
            )
      const exists = yield* repo.variantPrice(variantId)
      if (Option.isNone(exists)) {
        return yield* new VariantNotFound({ message: `No variant ${variantId}.`, variantId })
      }
      if (exists.value.priceUsd === null) {
        return yield* new VariantNotFound({ message: `Variant ${variantId} is not for sale.`, variantId })
      }
      return yield* pricing.availability(variantId, codes).pipe(
        // The variant and the countries were checked above; anything else is a bug.
        Effect.catchTag("NotFound", "InvalidRequest", (e) => Effect.die(e))
      )
    })

    const toCollection = (row: CollectionRecord, target: PricingCountry) =>
      Collection.make(
        {
          id: row.id as Id,
          name: row.name,
          description: row.description,
          imageUrl: absolute(row.imageUrl),
          priceRange:
            row.minUsd === null || row.maxUsd === null
              ? null
              : CollectionPriceRange.make(
                  {
                    min: convertUsd(row.minUsd, target.fxRate, target.digits),
                    max: convertUsd(row.maxUsd, target.fxRate, target.digits)
                  },
                  true
                ),
          tags: row.tags.map((tag) => tag.name)
        },
        true
      )

    /**
     * Collections, optionally matching `q` and holding something at or under `maxPrice` (minor units of the
     * country's currency). Best name match first with `q`, else by name.
     */
    const collections = Effect.fn("Catalog.collections")(function* (options: {
      readonly q?: string | undefined
      readonly maxPrice?: number | undefined
      readonly country?: string | undefined
      readonly limit: number
    }) {
      const target = yield* country(options.country)
      const rows = yield* repo.collections({
        q: options.q?.trim() || undefined,
        maxPrice: options.maxPrice,
        country: target,
        limit: options.limit
      })
      return rows.map((row) => toCollection(row, target))
    })

    /** Collections matching search words (for `/v1/search`), at most `limit`. */
    const matchingCollections = Effect.fn("Catalog.matchingCollections")(function* (
      q: string,
      target: PricingCountry,
      limit = 5
    ) {
      const rows = yield* repo.matchingCollections(q, limit)
      return rows.map((row) => toCollection(row, target))
    })

    /** A collection and a page of its products available in the country (in the collection's order). */
    const collection = Effect.fn("Catalog.collection")(function* (
      collectionId: string,
      options: {
        readonly country?: string | undefined
        readonly limit: number
        readonly cursor?: string | undefined
        readonly minPrice?: number | undefined
        readonly maxPrice?: number | undefined
      }
    ) {
      const target = yield* country(options.country)
      const after = options.cursor === undefined ? undefined : yield* decodeCursor(options.cursor, "collection", 2)
      if (after !== undefined && !(Number.isSafeInteger(after[0]) && /^[0-9a-f]{24}$/.test(String(after[1])))) {
        return yield* badCursor("Malformed cursor.")
      }
      const row = yield* repo.collection(collectionId)
      if (Option.isNone(row)) {
        return yield* new CollectionNotFound({ message: `No collection ${collectionId}.`, collectionId })
      }
      const page = yield* repo.collectionSummaries(
        collectionId,
        target,
        { min: options.minPrice, max: options.maxPrice },
        after === undefined ? undefined : [Number(after[0]), String(after[1])],
        options.limit + 1
      )
      const shown = page.slice(0, options.limit)
      const last = shown[shown.length - 1]
      return {
        collection: toCollection(row.value, target),
        products: shown.map((row) => summary(row, target)),
        nextCursor:
          page.length > options.limit && last !== undefined
            ? encodeCursor({ s: "collection", k: [last.position, last.id] })
            : null
      }
    })

    /** Tags whose name matches `q` (substring or trigram), best first; every tag without `q`. */
    const tags = Effect.fn("Catalog.tags")(function* (q?: string) {
      const rows = yield* repo.tags(q?.trim() || undefined)
      return rows.map((row) => Tag.make({ id: row.id as Id, name: row.name }, true))
    })

    /** Whether a collection exists. */
    const collectionExists = Effect.fn("Catalog.collectionExists")((collectionId: string) =>
      repo.collectionExists(collectionId)
    )

    /** Whether a product exists. */
    const productExists = Effect.fn("Catalog.productExists")((productId: string) => repo.productExists(productId))

    /** The category names of products, by product id. */
    const categoriesOf = Effect.fn("Catalog.categoriesOf")((productIds: ReadonlyArray<string>) =>
      productIds.length === 0 ? Effect.succeed(new Map<string, string>()) : repo.categoriesOf(productIds)
    )

    /** The title of a product, or the name of a collection, that an `/images/…` path belongs to. */
    const imageSubject = Effect.fn("Catalog.imageSubject")((kind: "product" | "collection", id: string) =>
      repo.imageSubject(kind, id)
    )

    /** How a variant is shown on a quote or order line: its product (id and title), its own title and its image (as stored). */
    const variantLabel = Effect.fn("Catalog.variantLabel")((variantId: string) => repo.variantLabel(variantId))

    /** The countries a variant ships to; none for an unknown variant. */
    const shipsTo = Effect.fn("Catalog.shipsTo")((variantId: string) => repo.shipsTo(variantId))

    /**
     * What placing an order reads of a variant, in one statement: its product and titles, where it ships (none
     * without a location), and what its landed price is computed from. None for an unknown variant.
     */
    const orderVariant = Effect.fn("Catalog.orderVariant")((variantId: string) => repo.orderVariant(variantId))

    /**
     * The variants of a product, or of a collection's products in the collection's order (each product's in
     * its own), with their product's title, description and first image: what a gift may offer.
     */
    const offeredVariants = Effect.fn("Catalog.offeredVariants")(
      (source: { readonly productId: string | null } | { readonly collectionId: string }) =>
        repo.offeredVariants(source)
    )

    /** The catalog's digital variants for sale that reach `countryCode`: what a gift offers where nothing ships. */
    const digitalOffered = Effect.fn("Catalog.digitalOffered")((countryCode: string) =>
      repo.digitalOffered(countryCode)
    )

    /**
     * Takes `quantity` units of a variant that ships to `countryCode`, in the caller's transaction: untracked
     * stock (null) stays untracked, tracked stock never goes below zero. Whether it could.
     */
    const takeStock = Effect.fn("Catalog.takeStock")((variantId: string, countryCode: string, quantity: number) =>
      repo.takeStock(variantId, countryCode, quantity)
    )

    /** Puts `quantity` units back, where stock is tracked (a cancelled order). */
    const returnStock = Effect.fn("Catalog.returnStock")((variantId: string, quantity: number) =>
      repo.returnStock(variantId, quantity)
    )

    return {
      country,
      countries,
      variantLabel,
      shipsTo,
      orderVariant,
      offeredVariants,
      digitalOffered,
      takeStock,
      returnStock,
      imageSubject,
      summary,
      summaries,
      product,
      recommendedIds,
      variant,
      availability,
      collections,
      matchingCollections,
      collection,
      collectionExists,
      productExists,
      categoriesOf,
      tags
    } as const
  }),
  dependencies: [Pricing.Default, CatalogRepo.Default]
}) {}

export type { PricingCountry }
