import { Effect, Option } from "effect"
import type { LandedPrice, ProductType } from "../../domain/catalog/CatalogV3.js"
import { CollectionNotFound, VariantNotFound } from "../../domain/catalog/Errors.js"
import type { LandedProduct, LandedVariant } from "../../domain/catalog/Landed.js"
import type { LandedVariantRecord } from "../../domain/catalog/Records.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { absoluteUrl, DEFAULT_COUNTRY, PublicUrl } from "./Catalog.js"
import { CatalogRepo, type LandedPageQuery } from "./CatalogRepo.js"
import { Pricing, type PricingCountry, usdRangeFor } from "./Pricing.js"

/**
 * The catalog judged and priced on landed totals (docs/catalog.md, "v2 reads"; docs/decisions/0044-v2-catalog-reads.md,
 * docs/decisions/0045-v2-campaigns.md):
 *
 * - `products` lists the products with a variant that can be ordered in the country (priced, in stock or
 *   untracked, shipping there) for a landed total (item + shipping + duties + service fee) within the budget,
 *   each with those variants, newest first (a collection's: in the collection's order), paged by offset.
 *   Budgets are plain numbers in the major units of the country's currency (`49.99` dollars, `5000` yen).
 * - `variant` is one variant with its landed price in a country.
 *
 * The budget is judged in SQL, so filtering and paging happen there: CatalogRepo's `landedSql` is the SQL twin
 * of `landedAmounts` (Pricing.ts), exact in `numeric`, and the test suite holds the two equal for every variant.
 */

export interface BudgetQuery {
  /** The most one gift may cost, landed, in major units of the country's currency. */
  readonly budget: number
  /** The least, likewise (none: 0). */
  readonly minBudget?: number | undefined
  /** Where the gift goes (either case; default US). */
  readonly country?: string | undefined
  readonly collectionId?: string | undefined
  /** Only this catalog's products (none: every catalog's). */
  readonly catalog?: "marketplace" | "swag" | undefined
  readonly skip: number
  readonly limit: number
}

export class LandedCatalog extends Effect.Service<LandedCatalog>()("LandedCatalog", {
  dependencies: [Pricing.Default, CatalogRepo.Default],
  effect: Effect.gen(function* () {
    const repo = yield* CatalogRepo
    const pricing = yield* Pricing
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")
    const absolute = (path: string) => absoluteUrl(publicUrl, path) as string

    const countryOf = Effect.fn("LandedCatalog.country")(function* (code: string | undefined) {
      const wanted = (code ?? DEFAULT_COUNTRY).toUpperCase()
      const found = (yield* pricing.reference()).country.get(wanted)
      if (found === undefined) return yield* InvalidRequest.field("country", `${wanted} is not a supported country.`)
      return found
    })

    const toVariant = (row: LandedVariantRecord, country: PricingCountry): LandedVariant => {
      const money = (amount: number) => ({ amount, currency: country.currency })
      const { landed } = row
      const price: LandedPrice | null =
        landed !== null && row.availableIn.includes(country.code)
          ? {
              item: money(landed.item),
              shipping: money(landed.shipping),
              duties: money(landed.duties),
              serviceFee: money(landed.serviceFee),
              total: money(landed.total)
            }
          : null
      return {
        id: row.id,
        productId: row.productId,
        title: row.title,
        selectedOptions: row.selectedOptions,
        images: (row.imageUrl === null ? row.productImages : [row.imageUrl]).map(absolute),
        type: row.isDigital ? "digital" : "physical",
        availableIn: row.availableIn,
        price
      }
    }

    /**
     * A page of the products with a variant orderable in the country for a landed total within the budget,
     * each with the variants that are (docs/decisions/0044-v2-catalog-reads.md). An unknown collection is a 404; a
     * `minBudget` above `budget` a 400 naming it.
     */
    const products = Effect.fn("LandedCatalog.products")(function* (query: BudgetQuery) {
      const country = yield* countryOf(query.country)
      const min = query.minBudget ?? 0
      if (min > query.budget) return yield* InvalidRequest.field("minBudget", "Must not be more than budget.")
      if (query.collectionId !== undefined && !(yield* repo.collectionExists(query.collectionId))) {
        return yield* new CollectionNotFound({
          message: `No collection ${query.collectionId}.`,
          collectionId: query.collectionId
        })
      }
      const reference = yield* pricing.reference()
      // The item alone is at most the landed total: a bound on the item's USD price that the price index serves.
      const itemBound = usdRangeFor(
        { min: undefined, max: Math.ceil(query.budget * 10 ** country.digits) },
        country.fxRate,
        country.digits
      ).max
      const page: LandedPageQuery = {
        country,
        fee: reference.fee,
        min,
        max: query.budget,
        itemBound,
        collectionId: query.collectionId,
        catalog: query.catalog,
        skip: query.skip,
        limit: query.limit
      }
      const ids = yield* repo.landedPage(page)
      if (ids.length === 0) return { products: [] as ReadonlyArray<LandedProduct>, country }
      const [productRowsFound, fitting] = yield* Effect.all(
        [repo.landedProducts(ids), repo.landedVariantsFitting(ids, page)],
        { concurrency: 1 }
      )
      const byId = new Map(productRowsFound.map((row) => [row.id, row]))
      const result = ids.flatMap((id): ReadonlyArray<LandedProduct> => {
        const row = byId.get(id)
        if (row === undefined) return []
        const types: ReadonlyArray<ProductType> = (["physical", "digital"] as const).filter((t) =>
          row.types.includes(t)
        )
        return [
          {
            id: row.id,
            title: row.title,
            brand: row.brandId === null || row.brandName === null ? null : { id: row.brandId, name: row.brandName },
            types,
            images: row.images.map(absolute),
            variants: fitting.filter((v) => v.productId === id).map((v) => toVariant(v, country))
          }
        ]
      })
      return { products: result, country }
    })

    /** One variant with its landed price in the country (none when it cannot be ordered there). */
    const variant = Effect.fn("LandedCatalog.variant")(function* (variantId: string, countryCode?: string) {
      const country = yield* countryOf(countryCode)
      const reference = yield* pricing.reference()
      const row = yield* repo.landedVariant(variantId, country, reference.fee)
      if (Option.isNone(row)) return yield* new VariantNotFound({ message: `No variant ${variantId}.`, variantId })
      return { variant: toVariant(row.value, country), country }
    })

    /**
     * What a gift of each product costs sent to the country: its variant orderable there with the least landed
     * total, priced as `variant` prices it, by product id; a product missing from the map cannot be sent there.
     */
    const cheapestIn = Effect.fn("LandedCatalog.cheapestIn")(function* (
      productIds: ReadonlyArray<string>,
      countryCode?: string
    ) {
      const country = yield* countryOf(countryCode)
      const reference = yield* pricing.reference()
      const rows = yield* repo.landedCheapest(productIds, country, reference.fee)
      const byProduct: ReadonlyMap<string, LandedVariant> = new Map(
        rows.map((row) => [row.productId, toVariant(row, country)])
      )
      return { byProduct, country }
    })

    /** The countries gifts are priced for (code, name, currency, minor digits), by name. */
    const countries = Effect.fn("LandedCatalog.countries")(function* () {
      const reference = yield* pricing.reference()
      return [...reference.countries].sort((a, b) => a.name.localeCompare(b.name, "en"))
    })

    return { products, variant, cheapestIn, countries } as const
  })
}) {}
