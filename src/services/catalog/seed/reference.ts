import countryToCurrency from "country-to-currency"

/**
 * The reference data landed pricing runs on (docs/pricing.md): warehouses, shipping zones and rates,
 * supported countries with currency, locale, FX rate and de-minimis threshold, duty and import-tax rates per
 * category and country, and the service fee rule. The values are plausible demo values, not legal advice.
 */

export type WeightClass = "light" | "medium" | "heavy"
export const weightClasses: ReadonlyArray<WeightClass> = ["light", "medium", "heavy"]

export interface WarehouseSeed {
  readonly code: "US" | "EU"
  readonly name: string
  readonly countryCode: string
  /** Shipments inside one customs area are domestic: no duties. */
  readonly customsArea: string
}

export const warehouses: ReadonlyArray<WarehouseSeed> = [
  { code: "US", name: "Reno, Nevada (US)", countryCode: "US", customsArea: "US" },
  { code: "EU", name: "Venlo, Netherlands (EU)", countryCode: "NL", customsArea: "EU" }
]

export const shippingZones = [
  { code: "us", name: "United States" },
  { code: "north_america", name: "Canada and Mexico" },
  { code: "eu", name: "European Union" },
  { code: "europe_other", name: "Europe outside the EU" },
  { code: "asia_pacific", name: "Asia-Pacific" },
  { code: "rest_of_world", name: "Rest of the world" }
] as const
export type ShippingZone = (typeof shippingZones)[number]["code"]

/** Shipping per parcel in USD cents: [light (< 0.5 kg), medium (0.5–2 kg), heavy (2–10 kg)]. */
const shippingTable: Record<WarehouseSeed["code"], Record<ShippingZone, readonly [number, number, number]>> = {
  US: {
    us: [599, 899, 1499],
    north_america: [1299, 1899, 2999],
    eu: [1799, 2499, 3999],
    europe_other: [1899, 2599, 4199],
    asia_pacific: [1999, 2899, 4499],
    rest_of_world: [2299, 3299, 4999]
  },
  EU: {
    us: [1799, 2499, 3999],
    north_america: [1999, 2799, 4299],
    eu: [499, 799, 1299],
    europe_other: [999, 1499, 2299],
    asia_pacific: [2199, 2999, 4699],
    rest_of_world: [2299, 3299, 4999]
  }
}

export const shippingRates = warehouses.flatMap((warehouse) =>
  shippingZones.flatMap((zone) =>
    weightClasses.map((weightClass, i) => ({
      originWarehouse: warehouse.code,
      shippingZone: zone.code,
      weightClass,
      amountUsd: shippingTable[warehouse.code][zone.code][i]
    }))
  )
)

export interface CountrySeed {
  readonly code: string
  readonly name: string
  readonly locale: string
  /** Units of the country's currency per 1 USD, as an exact decimal string. */
  readonly fxRate: string
  readonly shippingZone: ShippingZone
  readonly customsArea: string
  /** In the country's currency's minor units: duties apply when the item price is above it. */
  readonly deMinimis: number
  /** Import VAT/GST in basis points, added to every category's duty. */
  readonly importTaxBps: number
}

const fx: Record<string, string> = {
  USD: "1",
  CAD: "1.36",
  MXN: "17.10",
  GBP: "0.79",
  EUR: "0.92",
  SEK: "10.45",
  DKK: "6.87",
  NOK: "10.60",
  CHF: "0.88",
  PLN: "3.98",
  JPY: "151.50",
  KRW: "1345",
  AUD: "1.52",
  NZD: "1.66",
  SGD: "1.35",
  INR: "83.30",
  BRL: "5.05",
  AED: "3.6725"
}

// [code, name, locale, zone, customs area, de minimis (local minor units), import tax bps]
const countryRows: ReadonlyArray<readonly [string, string, string, ShippingZone, string, number, number]> = [
  ["US", "United States", "en-US", "us", "US", 80000, 0],
  ["CA", "Canada", "en-CA", "north_america", "CA", 15000, 500],
  ["MX", "Mexico", "es-MX", "north_america", "MX", 100000, 1600],
  ["GB", "United Kingdom", "en-GB", "europe_other", "GB", 13500, 2000],
  ["IE", "Ireland", "en-IE", "eu", "EU", 15000, 2300],
  ["DE", "Germany", "de-DE", "eu", "EU", 15000, 1900],
  ["FR", "France", "fr-FR", "eu", "EU", 15000, 2000],
  ["ES", "Spain", "es-ES", "eu", "EU", 15000, 2100],
  ["IT", "Italy", "it-IT", "eu", "EU", 15000, 2200],
  ["NL", "Netherlands", "nl-NL", "eu", "EU", 15000, 2100],
  ["BE", "Belgium", "nl-BE", "eu", "EU", 15000, 2100],
  ["AT", "Austria", "de-AT", "eu", "EU", 15000, 2000],
  ["SE", "Sweden", "sv-SE", "eu", "EU", 170000, 2500],
  ["DK", "Denmark", "da-DK", "eu", "EU", 110000, 2500],
  ["PL", "Poland", "pl-PL", "eu", "EU", 65000, 2300],
  ["NO", "Norway", "nb-NO", "europe_other", "NO", 35000, 2500],
  ["CH", "Switzerland", "de-CH", "europe_other", "CH", 6500, 810],
  ["JP", "Japan", "ja-JP", "asia_pacific", "JP", 10000, 1000],
  ["KR", "South Korea", "ko-KR", "asia_pacific", "KR", 150000, 1000],
  ["AU", "Australia", "en-AU", "asia_pacific", "AU", 100000, 1000],
  ["NZ", "New Zealand", "en-NZ", "asia_pacific", "NZ", 100000, 1500],
  ["SG", "Singapore", "en-SG", "asia_pacific", "SG", 40000, 900],
  ["IN", "India", "en-IN", "rest_of_world", "IN", 0, 1800],
  ["BR", "Brazil", "pt-BR", "rest_of_world", "BR", 0, 2000],
  ["AE", "United Arab Emirates", "en-AE", "rest_of_world", "AE", 100000, 500]
]

export const countries: ReadonlyArray<CountrySeed & { readonly currency: string }> = countryRows.map(
  ([code, name, locale, shippingZone, customsArea, deMinimis, importTaxBps]) => {
    const currency = (countryToCurrency as Record<string, string>)[code]
    const fxRate = currency === undefined ? undefined : fx[currency]
    if (fxRate === undefined) throw new Error(`seed: no currency or FX rate for ${code}`)
    return { code, name, locale, currency, fxRate, shippingZone, customsArea, deMinimis, importTaxBps }
  }
)

/** The service fee: 5 % of the item price, at least US$1.99 and at most US$24.99 (converted). */
export const serviceFeeRule = { id: "default", rateBps: 500, minUsd: 199, maxUsd: 2499 } as const
