import { type Personalization, personalizationRequired } from "../../../domain/catalog/Personalization.js"
import type { Id } from "../../../domain/platform/Ids.js"
import {
  type CategorySeed,
  type CollectionRule,
  categories,
  collections,
  type ItemTemplate,
  type OptionKind,
  tagNames
} from "./catalog.js"
import { catalogEpoch, type Rng, rngFor, slugify, stableId } from "./random.js"
import { countries, warehouses } from "./reference.js"
import { engravingPersonalization, imprintPersonalization, swagBaseProducts } from "./swag.js"

/**
 * Turns the templates of catalog.ts into rows, deterministically: every random choice comes from a PRNG
 * seeded by the entity's stable key, and every id from `stableId(key, createdAt)`. Pure: no database.
 * Row objects use snake_case keys: they are sent as one JSON document per batch (Seed.ts).
 */

export const categoryId = (slug: string) => stableId(`category:${slug}`, catalogEpoch)
export const brandId = (name: string) => stableId(`brand:${slugify(name)}`, catalogEpoch)
export const tagId = (slug: string) => stableId(`tag:${slug}`, catalogEpoch)
export const collectionId = (slug: string) => stableId(`collection:${slug}`, catalogEpoch)

const countryCodes = countries.map((c) => c.code)
const customsAreaOf = new Map(countries.map((c) => [c.code, c.customsArea]))
const warehouseArea = new Map(warehouses.map((w) => [w.code, w.customsArea]))

export interface ProductRow {
  readonly id: Id
  readonly catalog: "marketplace" | "swag"
  readonly title: string
  readonly description: string
  readonly brand_id: Id | null
  readonly category_id: Id
  readonly created_at: string
  readonly min_price_usd: number
  readonly max_price_usd: number
  /** What the v3 lists read of its variants, images and tags (migration 0020). */
  readonly variant_count: number
  readonly physical_variant_count: number
  readonly image_urls: ReadonlyArray<string>
  readonly tag_ids: ReadonlyArray<Id>
  /** Where a priced variant ships: the product's `ships_to_mask` is made of it (migration 0022); not a column. */
  readonly ships_to: ReadonlyArray<string>
  /** For `search_document` only (not columns). */
  readonly brand_name: string | null
  readonly category_name: string
  readonly tag_names: string
}

export interface VariantRow {
  readonly id: Id
  readonly product_id: Id
  readonly position: number
  readonly sku: string
  readonly title: string
  readonly selected_options: Record<string, string>
  readonly image_url: string | null
  readonly price_usd: number
  readonly is_digital: boolean
  readonly shipping_required: boolean
  readonly personalization_required: boolean
  /** What the buyer may or must specify (null: nothing); required fields make `personalization_required`. */
  readonly personalization: Personalization | null
  readonly description_html: string | null
  readonly details: Record<string, unknown> | null
  readonly origin_warehouse: "US" | "EU" | null
  readonly weight_class: string | null
}

export interface LocationRow {
  readonly variant_id: Id
  readonly stock: number | null
  readonly ships_to: ReadonlyArray<string>
}

export interface BuiltProduct {
  readonly product: ProductRow
  readonly variants: ReadonlyArray<VariantRow>
  readonly locations: ReadonlyArray<LocationRow>
  readonly images: ReadonlyArray<{ readonly product_id: Id; readonly position: number; readonly url: string }>
  readonly options: ReadonlyArray<{
    readonly product_id: Id
    readonly position: number
    readonly name: string
    readonly display_name: string
    readonly option_values: ReadonlyArray<string>
  }>
  readonly tags: ReadonlyArray<{ readonly product_id: Id; readonly tag_id: Id }>
  /** For collection rules. */
  readonly facts: Parameters<CollectionRule["match"]>[0]
}

export interface ProductSpec {
  readonly key: string
  readonly category: CategorySeed
  readonly item: ItemTemplate
  readonly brand: readonly [string, "US" | "EU"] | null
  readonly warehouse: "US" | "EU"
  readonly title: string
  readonly priceCents: number
  readonly createdAt: Date
  readonly catalog: "marketplace" | "swag"
  readonly extraTags: ReadonlyArray<string>
  /** A swag base product: ordered with a logo, so its logo placement and imprint colour are required. */
  readonly logoRequired?: boolean
}

/** `https://…`-free image paths under the service's own `/images/` route (docs/catalog.md). */
export const productImageUrl = (productId: string, name: string) => `/images/products/${productId}/${name}.svg`

const colours = ["Charcoal", "Sage", "Sand", "Navy", "Terracotta", "Cream", "Forest", "Blush", "Ocean", "Mustard"]
const scents = ["Cedar & Sage", "Fig & Amber", "Sea Salt", "Lavender", "Bergamot", "Vanilla Smoke"]

interface OptionDef {
  readonly name: string
  readonly displayName: string
  readonly values: ReadonlyArray<string>
}

interface VariantDef {
  readonly selected: Record<string, string>
  readonly title: string
  readonly priceCents: number
  readonly digital: boolean
  readonly personalization: boolean
  readonly colour: string | null
}

/** Whole dollars minus a cent above $10 (`45.99`), whole cents below. */
const retail = (cents: number) => (cents >= 1000 ? Math.max(100, Math.round(cents / 100) * 100 - 1) : Math.round(cents))

const sizesFor = (category: string) =>
  category === "kids"
    ? ["0-3 months", "3-6 months", "6-12 months"]
    : category === "pets"
      ? ["S", "M", "L"]
      : ["S", "M", "L", "XL"]

const dollars = (cents: number) => `$${cents % 100 === 0 ? cents / 100 : (cents / 100).toFixed(2)}`

const variantsOf = (
  kind: OptionKind,
  spec: ProductSpec,
  rng: Rng
): { options: ReadonlyArray<OptionDef>; variants: ReadonlyArray<VariantDef> } => {
  const base = spec.priceCents
  const digital = spec.item.weight === null
  const plain = (
    selected: Record<string, string>,
    title: string,
    priceCents = base,
    extra: Partial<VariantDef> = {}
  ) => ({
    selected,
    title,
    priceCents,
    digital,
    personalization: false,
    colour: null,
    ...extra
  })
  switch (kind) {
    case "none":
      return { options: [], variants: [plain({}, "Default")] }
    case "size": {
      const values = sizesFor(spec.category.slug)
      return {
        options: [{ name: "size", displayName: "Size", values }],
        variants: values.map((size) => plain({ size }, size))
      }
    }
    case "colour": {
      const values = rng.sample(colours, 3)
      return {
        options: [{ name: "colour", displayName: "Colour", values }],
        variants: values.map((colour) => plain({ colour }, colour, base, { colour }))
      }
    }
    case "size_colour": {
      const sizes = sizesFor(spec.category.slug)
      const values = rng.sample(colours, 2)
      return {
        options: [
          { name: "size", displayName: "Size", values: sizes },
          { name: "colour", displayName: "Colour", values }
        ],
        variants: values.flatMap((colour) =>
          sizes.map((size) => plain({ size, colour }, `${size} / ${colour}`, base, { colour }))
        )
      }
    }
    case "engraving":
      return {
        options: [{ name: "personalization", displayName: "Personalization", values: ["None", "Engraved"] }],
        variants: [
          plain({ personalization: "None" }, "Without engraving"),
          plain({ personalization: "Engraved" }, "Engraved", base + 800, { personalization: true })
        ]
      }
    case "amount": {
      const amounts = [base, base * 2, base * 4]
      const values = amounts.map(dollars)
      return {
        options: [{ name: "amount", displayName: "Amount", values }],
        variants: amounts.map((cents, i) => plain({ amount: values[i] }, values[i], cents))
      }
    }
    case "format":
      if (spec.category.slug === "books") {
        return {
          options: [{ name: "format", displayName: "Format", values: ["Hardcover", "Paperback", "E-book"] }],
          variants: [
            plain({ format: "Hardcover" }, "Hardcover"),
            plain({ format: "Paperback" }, "Paperback", retail(base * 0.6)),
            plain({ format: "E-book" }, "E-book", retail(base * 0.4), { digital: true })
          ]
        }
      }
      return {
        options: [{ name: "grind", displayName: "Grind", values: ["Whole bean", "Ground"] }],
        variants: [plain({ grind: "Whole bean" }, "Whole bean"), plain({ grind: "Ground" }, "Ground")]
      }
    case "tier": {
      const values = ["Classic", "Deluxe", "Grand"]
      return {
        options: [{ name: "size", displayName: "Size", values }],
        variants: values.map((tier, i) => plain({ size: tier }, tier, retail(base * [1, 1.5, 2][i])))
      }
    }
    case "scent": {
      const values = rng.sample(scents, 3)
      return {
        options: [{ name: "scent", displayName: "Scent", values }],
        variants: values.map((scent) => plain({ scent }, scent))
      }
    }
  }
}

const shipsToFor = (spec: ProductSpec, rng: Rng): ReadonlyArray<string> => {
  const rule = spec.item.shipsTo ?? "all"
  if (rule === "all") {
    // A few physical products are not sold into a handful of markets (brand distribution agreements).
    if (spec.item.weight !== null && rng.chance(0.1)) return countryCodes.filter((c) => !["BR", "IN", "AE"].includes(c))
    return countryCodes
  }
  if (rule === "domestic") {
    const area = warehouseArea.get(spec.warehouse)
    return countryCodes.filter((c) => customsAreaOf.get(c) === area)
  }
  return countryCodes.filter((c) => rule.includes(c))
}

/** One product and its children, from a spec. */
export const buildProduct = (spec: ProductSpec): BuiltProduct => {
  const rng = rngFor(spec.key)
  const id = stableId(spec.key, spec.createdAt)
  const { options, variants: defs } = variantsOf(spec.item.options ?? "none", spec, rng)
  if (spec.item.swag === true && spec.item.imprint === undefined)
    throw new Error(`seed: swag without an imprint: ${spec.key}`)
  const imprint =
    spec.item.imprint === undefined ? null : imprintPersonalization(spec.item.imprint, spec.logoRequired === true)
  const shipsTo = shipsToFor(spec, rng)
  const brandName = spec.brand?.[0] ?? null
  const madeBy = brandName === null ? "Ready for your logo." : `Made by ${brandName}.`
  const description = `${spec.item.blurb} ${madeBy}`
  // The product id's 16 hash hex digits: unique as the ids are (8 digits collide within ~65k products).
  const skuStem = id.slice(8).toUpperCase()
  const variants = defs.map((def, position): VariantRow => {
    const variantId = stableId(`${spec.key}:v${position}`, spec.createdAt)
    const personalization = def.personalization ? engravingPersonalization : imprint
    return {
      id: variantId,
      product_id: id,
      position,
      sku: `RB-${skuStem}-${String(position + 1).padStart(2, "0")}`,
      title: def.title,
      selected_options: def.selected,
      image_url: def.colour === null ? null : productImageUrl(id, slugify(def.colour)),
      price_usd: def.priceCents,
      is_digital: def.digital,
      shipping_required: !def.digital,
      personalization_required: personalizationRequired(personalization),
      personalization,
      description_html: rng.chance(0.2) ? null : `<p>${escapeHtml(spec.item.blurb)}</p>`,
      details: def.digital
        ? { delivery: "email", deliveryTime: "within minutes" }
        : rng.chance(0.3)
          ? null
          : { shipsFrom: spec.warehouse, weightClass: spec.item.weight },
      origin_warehouse: def.digital ? null : spec.warehouse,
      weight_class: def.digital ? null : spec.item.weight
    }
  })
  const locations = variants.map(
    (v): LocationRow => ({
      variant_id: v.id,
      stock: v.is_digital ? null : rng.chance(0.07) ? 0 : rng.int(3, 400),
      ships_to: v.is_digital && spec.item.shipsTo === undefined ? countryCodes : shipsTo
    })
  )
  const tagSlugs = [
    ...new Set([
      ...spec.category.tags,
      ...spec.item.tags,
      ...spec.extraTags,
      ...(variants.some((v) => v.personalization_required) ? ["personalized"] : []),
      ...(variants.every((v) => v.is_digital) ? ["digital"] : []),
      ...(rng.chance(0.12) ? ["handmade"] : []),
      ...(rng.chance(0.08) ? ["eco-friendly"] : [])
    ])
  ]
  for (const slug of tagSlugs) if (tagNames[slug] === undefined) throw new Error(`seed: unknown tag ${slug}`)
  const prices = variants.map((v) => v.price_usd)
  const imageCount = rng.int(1, 3)
  const images = Array.from({ length: imageCount }, (_, i) => ({
    product_id: id,
    position: i,
    url: productImageUrl(id, String(i + 1))
  }))
  return {
    product: {
      id,
      catalog: spec.catalog,
      title: spec.title,
      description,
      brand_id: brandName === null ? null : brandId(brandName),
      category_id: categoryId(spec.category.slug),
      created_at: spec.createdAt.toISOString(),
      min_price_usd: Math.min(...prices),
      max_price_usd: Math.max(...prices),
      variant_count: variants.length,
      physical_variant_count: variants.filter((v) => !v.is_digital).length,
      image_urls: images.map((image) => image.url),
      tag_ids: tagSlugs.map(tagId),
      ships_to: [...new Set(locations.flatMap((l) => l.ships_to))],
      brand_name: brandName,
      category_name: spec.category.name,
      tag_names: tagSlugs.map((slug) => tagNames[slug]).join(" ")
    },
    variants,
    locations,
    images,
    options: options.map((o, position) => ({
      product_id: id,
      position,
      name: o.name,
      display_name: o.displayName,
      option_values: o.values
    })),
    tags: tagSlugs.map((slug) => ({ product_id: id, tag_id: tagId(slug) })),
    facts: {
      category: spec.category.slug,
      tags: tagSlugs,
      minPriceUsd: Math.min(...prices),
      digital: variants.every((v) => v.is_digital),
      personalizable: variants.some((v) => v.personalization_required),
      warehouse: variants.every((v) => v.is_digital) ? null : spec.warehouse,
      catalog: spec.catalog,
      shipsEverywhere: locations.every((l) => l.ships_to.length === countryCodes.length)
    }
  }
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** The curated catalog: 2 products per template (two brands; the second with an adjective), 336 in all. */
export const curatedProducts = (): ReadonlyArray<BuiltProduct> => {
  const built: Array<BuiltProduct> = []
  let n = 0
  for (const category of categories) {
    category.items.forEach((item, i) => {
      for (let k = 0; k < 2; k++) {
        const key = `product:${category.slug}:${slugify(item.noun)}:${k}`
        const rng = rngFor(key)
        const brand = category.brands[(i + k) % category.brands.length]
        const adjective = category.adjectives[(i + k) % category.adjectives.length]
        const title = k === 0 ? item.noun : `${adjective} ${item.noun}`
        const priceCents = k === 0 ? Math.round(item.price * 100) : retail(item.price * 100 * (1.15 + rng.next() * 0.5))
        // Spread creation over ~a year before the epoch's anniversary, newest last.
        const createdAt = new Date(catalogEpoch.getTime() + n * 23 * 3600_000 + rng.int(0, 3599) * 1000)
        n++
        built.push(
          buildProduct({
            key,
            category,
            item,
            // Blank swag is unbranded on its first listing: "ready for your logo".
            brand: item.swag === true && k === 0 ? null : brand,
            warehouse: brand[1],
            title,
            priceCents,
            createdAt,
            catalog: item.swag === true ? "swag" : "marketplace",
            extraTags: []
          })
        )
      }
    })
  }
  return built
}

/** When the swag base products "were created": after the curated catalog, one every five hours. */
const swagEpoch = new Date("2025-12-01T09:00:00Z")

/**
 * The swag base products (swag.ts): one product per template, `catalog: "swag"`, under the brands of the
 * category it is filed in, in turn; their logo placement and imprint colour are required.
 */
export const swagProducts = (): ReadonlyArray<BuiltProduct> => {
  let n = 0
  return swagBaseProducts.flatMap((group) => {
    const category = categories.find((c) => c.slug === group.category)
    if (category === undefined) throw new Error(`seed: unknown category ${group.category}`)
    return group.items.map((item, i) => {
      const brand = category.brands[i % category.brands.length]
      return buildProduct({
        key: `swag:${category.slug}:${slugify(item.noun)}`,
        category,
        item,
        brand,
        warehouse: brand[1],
        title: item.noun,
        priceCents: Math.round(item.price * 100),
        createdAt: new Date(swagEpoch.getTime() + n++ * 5 * 3600_000),
        catalog: "swag",
        extraTags: [],
        logoRequired: true
      })
    })
  })
}

export interface BuiltCollections {
  readonly collections: ReadonlyArray<{
    readonly id: Id
    readonly slug: string
    readonly name: string
    readonly description: string
    readonly image_url: string
    readonly created_at: string
  }>
  readonly products: ReadonlyArray<{ readonly collection_id: Id; readonly product_id: Id; readonly position: number }>
  readonly tags: ReadonlyArray<{ readonly collection_id: Id; readonly tag_id: Id }>
}

/** At most this many products per curated collection. */
export const collectionSize = 40

export const curatedCollections = (products: ReadonlyArray<BuiltProduct>): BuiltCollections => {
  const rows: Array<BuiltCollections["collections"][number]> = []
  const members: Array<BuiltCollections["products"][number]> = []
  const tags: Array<BuiltCollections["tags"][number]> = []
  collections.forEach((rule, i) => {
    const slug = slugify(rule.name)
    const id = collectionId(slug)
    rows.push({
      id,
      slug,
      name: rule.name,
      description: rule.description,
      image_url: `/images/collections/${id}.svg`,
      created_at: new Date(catalogEpoch.getTime() + i * 86_400_000).toISOString()
    })
    const rng = rngFor(`collection:${slug}`)
    const matching = products.filter((p) => rule.match(p.facts))
    rng.sample(matching, collectionSize).forEach((p, position) => {
      members.push({ collection_id: id, product_id: p.product.id, position })
    })
    for (const slug of rule.tags) tags.push({ collection_id: id, tag_id: tagId(slug) })
  })
  return { collections: rows, products: members, tags }
}

const seriesNames = [
  "Aster",
  "Birch",
  "Cove",
  "Dune",
  "Ember",
  "Fable",
  "Grove",
  "Haven",
  "Iris",
  "Juniper",
  "Kestrel",
  "Lumen",
  "Meadow",
  "Nimbus",
  "Orchard",
  "Pebble",
  "Quill",
  "Ridge",
  "Sable",
  "Tundra",
  "Umber",
  "Vale",
  "Willow",
  "Yarrow",
  "Zephyr",
  "Alder",
  "Brook",
  "Cinder",
  "Delta",
  "Fjord",
  "Harbor",
  "Isle",
  "Lark",
  "Moss",
  "North",
  "Onyx"
]

const generatedEpoch = new Date("2025-06-01T00:00:00Z")

/**
 * The i-th synthetic product of `Seed.generate` (i from 0): a template from a category (round-robin), a brand,
 * an adjective and a series name, a price scaled from the template. Deterministic in i.
 */
export const generatedProduct = (i: number): BuiltProduct => {
  const key = `gen:${i}`
  const rng = rngFor(key)
  const category = categories[i % categories.length]
  const item = rng.pick(category.items)
  const brand = rng.pick(category.brands)
  const title = `${rng.pick(category.adjectives)} ${item.noun} ${rng.pick(seriesNames)}`
  return buildProduct({
    key,
    category,
    item,
    brand,
    warehouse: brand[1],
    title,
    priceCents: retail(item.price * 100 * (0.6 + rng.next() * 1.2)),
    createdAt: new Date(generatedEpoch.getTime() + i * 60_000),
    catalog: item.swag === true ? "swag" : "marketplace",
    extraTags: []
  })
}
