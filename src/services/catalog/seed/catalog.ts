import type { WeightClass } from "./reference.js"
import type { ImprintKind } from "./swag.js"

/**
 * The curated demo catalog, as templates: each category has invented brands (with the warehouse they ship
 * from), adjectives, and item templates. Every template yields two products (two brands, the second with an
 * adjective and a price factor), so 14 categories × 12 templates give 336 products. See Seed.ts for how the
 * templates become rows, deterministically.
 */

/** How a product's variants differ. */
export type OptionKind =
  | "none"
  | "size" // apparel sizes
  | "colour"
  | "size_colour"
  | "engraving" // personalization: the engraved variant requires a personalization text
  | "amount" // gift card denominations
  | "format" // books: hardcover, paperback, e-book (digital)
  | "tier" // flowers and hampers: classic, deluxe, grand
  | "scent"

export interface ItemTemplate {
  readonly noun: string
  /** USD, whole dollars or with cents (e.g. 24.5). */
  readonly price: number
  /** null: digital (no shipping, no duties). */
  readonly weight: WeightClass | null
  readonly options?: OptionKind
  readonly tags: ReadonlyArray<string>
  readonly blurb: string
  /** Swag (`catalog: "swag"`): it must say how it takes a logo (swag.ts). */
  readonly swag?: boolean
  readonly imprint?: ImprintKind
  /** Where it can be delivered: every supported country (default), its warehouse's customs area, or a list. */
  readonly shipsTo?: "all" | "domestic" | ReadonlyArray<string>
}

export interface CategorySeed {
  readonly slug: string
  readonly name: string
  /** Customs duty in basis points, added to the destination's import tax (reference.ts). */
  readonly dutyBps: number
  readonly brands: ReadonlyArray<readonly [name: string, warehouse: "US" | "EU"]>
  readonly adjectives: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
  readonly items: ReadonlyArray<ItemTemplate>
}

export const tagNames: Record<string, string> = {
  coffee: "Coffee",
  tea: "Tea",
  chocolate: "Chocolate",
  sweets: "Sweets",
  snacks: "Snacks",
  cocktails: "Cocktails",
  cooking: "Cooking",
  baking: "Baking",
  vegan: "Vegan",
  organic: "Organic",
  "eco-friendly": "Eco-friendly",
  handmade: "Handmade",
  personalized: "Personalized",
  luxury: "Luxury",
  minimalist: "Minimalist",
  cozy: "Cozy",
  "self-care": "Self-care",
  fitness: "Fitness",
  sleep: "Sleep",
  aromatherapy: "Aromatherapy",
  skincare: "Skincare",
  "work-from-home": "Work from home",
  office: "Office",
  travel: "Travel",
  outdoors: "Outdoors",
  camping: "Camping",
  gardening: "Gardening",
  houseplants: "Houseplants",
  flowers: "Flowers",
  reading: "Reading",
  fiction: "Fiction",
  cookbooks: "Cookbooks",
  kids: "Kids",
  baby: "Baby",
  toys: "Toys",
  dogs: "Dogs",
  cats: "Cats",
  pets: "Pets",
  tech: "Tech",
  audio: "Audio",
  charging: "Charging",
  gaming: "Gaming",
  apparel: "Apparel",
  "team-swag": "Team swag",
  "thank-you": "Thank you",
  birthday: "Birthday",
  holiday: "Holiday",
  wedding: "Wedding",
  "new-home": "New home",
  "new-baby": "New baby",
  "get-well": "Get well soon",
  corporate: "Corporate gifting",
  digital: "Digital delivery",
  experiences: "Experiences",
  stationery: "Stationery",
  journaling: "Journaling",
  art: "Art",
  wine: "Wine",
  "gift-box": "Gift box"
}

export const categories: ReadonlyArray<CategorySeed> = [
  {
    slug: "gourmet-food-drink",
    name: "Gourmet food and drink",
    dutyBps: 800,
    brands: [
      ["Harbor & Pine Provisions", "US"],
      ["Maison Olivette", "EU"],
      ["Copperleaf Roasters", "US"],
      ["Dolce Vallata", "EU"]
    ],
    adjectives: ["Artisan", "Small-Batch", "Signature", "Heritage"],
    tags: ["snacks", "thank-you"],
    items: [
      {
        noun: "Sea Salt Caramel Tin",
        price: 24,
        weight: "light",
        tags: ["sweets", "chocolate"],
        blurb: "Buttery caramels hand-cut and wrapped in wax paper, finished with flaky sea salt."
      },
      {
        noun: "Dark Chocolate Truffle Box",
        price: 38,
        weight: "light",
        options: "tier",
        tags: ["chocolate", "luxury"],
        blurb: "Sixteen ganache truffles in single-origin dark chocolate, dusted by hand."
      },
      {
        noun: "Single-Origin Coffee Trio",
        price: 42,
        weight: "medium",
        options: "format",
        tags: ["coffee"],
        blurb: "Three 250 g bags of seasonal single-origin beans, roasted to order."
      },
      {
        noun: "Loose Leaf Tea Sampler",
        price: 29,
        weight: "light",
        tags: ["tea", "organic"],
        blurb: "Twelve organic loose-leaf teas in tins, from smoky lapsang to bright sencha."
      },
      {
        noun: "Extra Virgin Olive Oil Duo",
        price: 46,
        weight: "medium",
        tags: ["cooking", "organic"],
        blurb: "Two cold-pressed oils from a single estate harvest, one peppery, one mild."
      },
      {
        noun: "Charcuterie Picnic Hamper",
        price: 89,
        weight: "heavy",
        options: "tier",
        tags: ["gift-box", "luxury"],
        blurb: "Cured meats, aged cheeses, crackers and fig jam packed in a keepsake crate.",
        shipsTo: "domestic"
      },
      {
        noun: "Craft Cocktail Syrup Set",
        price: 34,
        weight: "medium",
        tags: ["cocktails"],
        blurb: "Four small-batch syrups — ginger, grapefruit, smoked maple and lavender — for bar-quality drinks."
      },
      {
        noun: "Honey Tasting Flight",
        price: 32,
        weight: "medium",
        tags: ["organic", "cooking"],
        blurb: "Five raw wildflower honeys from different seasons, with a wooden dipper."
      },
      {
        noun: "Hot Sauce Discovery Box",
        price: 27,
        weight: "medium",
        tags: ["cooking", "snacks"],
        blurb: "Six fermented hot sauces ranked from gentle to fearless."
      },
      {
        noun: "Gluten-Free Cookie Tin",
        price: 26,
        weight: "light",
        tags: ["baking", "sweets"],
        blurb: "Almond-flour cookies baked in small batches, shipped in a reusable tin."
      },
      {
        noun: "Vegan Snack Crate",
        price: 48,
        weight: "medium",
        tags: ["vegan", "gift-box"],
        blurb: "Twenty plant-based snacks from independent makers, sweet and savoury."
      },
      {
        noun: "Wine Country Gourmet Basket",
        price: 120,
        weight: "heavy",
        tags: ["wine", "luxury", "gift-box"],
        blurb: "Olive tapenade, crackers, chocolate-covered figs and a corkscrew — wine not included.",
        shipsTo: ["US", "CA", "GB", "DE", "FR", "NL"]
      }
    ]
  },
  {
    slug: "drinkware",
    name: "Drinkware",
    dutyBps: 400,
    brands: [
      ["Kiln & Cove", "US"],
      ["Nordvik Glassworks", "EU"],
      ["Summit Flask Co.", "US"]
    ],
    adjectives: ["Stoneware", "Hand-Thrown", "Double-Wall", "Classic"],
    tags: ["coffee", "thank-you"],
    items: [
      {
        noun: "Ceramic Coffee Mug",
        price: 40,
        weight: "medium",
        options: "colour",
        tags: ["coffee", "handmade"],
        blurb: "A 350 ml wheel-thrown mug with a speckled glaze, dishwasher safe."
      },
      {
        noun: "Insulated Travel Tumbler",
        price: 32,
        weight: "medium",
        options: "engraving",
        tags: ["travel", "personalized"],
        blurb: "Keeps coffee hot for 6 hours and iced tea cold for 12, with a leak-proof lid."
      },
      {
        noun: "Whiskey Glass Pair",
        price: 48,
        weight: "medium",
        options: "engraving",
        tags: ["cocktails", "personalized"],
        blurb: "Two heavy-bottomed rocks glasses, lead-free crystal."
      },
      {
        noun: "Pour-Over Coffee Set",
        price: 64,
        weight: "medium",
        tags: ["coffee"],
        blurb: "Glass carafe, ceramic dripper and 100 filters for a slow morning ritual."
      },
      {
        noun: "Stemless Wine Glasses",
        price: 36,
        weight: "medium",
        tags: ["wine", "wedding"],
        blurb: "A set of four mouth-blown glasses that feel at home on any table."
      },
      {
        noun: "Matcha Whisk Set",
        price: 44,
        weight: "light",
        tags: ["tea"],
        blurb: "Bamboo chasen, scoop and a hand-glazed bowl for ceremonial matcha."
      },
      {
        noun: "Logo Water Bottle",
        price: 22,
        weight: "light",
        options: "colour",
        tags: ["team-swag", "fitness"],
        blurb: "A 750 ml stainless bottle, ready for your team's logo.",
        swag: true,
        imprint: "drinkware"
      },
      {
        noun: "Cold Brew Pitcher",
        price: 29,
        weight: "medium",
        tags: ["coffee"],
        blurb: "A 1 litre glass pitcher with a fine-mesh filter for smooth cold brew."
      },
      {
        noun: "Espresso Cup Set",
        price: 34,
        weight: "light",
        options: "colour",
        tags: ["coffee", "minimalist"],
        blurb: "Four 90 ml porcelain cups with saucers."
      },
      {
        noun: "Teapot for One",
        price: 38,
        weight: "medium",
        tags: ["tea", "cozy"],
        blurb: "A stacking teapot and cup with a removable steel infuser."
      },
      {
        noun: "Cocktail Shaker Kit",
        price: 58,
        weight: "medium",
        tags: ["cocktails"],
        blurb: "Shaker, jigger, strainer and muddler in brushed copper."
      },
      {
        noun: "Campfire Enamel Mug",
        price: 18,
        weight: "light",
        tags: ["camping", "outdoors"],
        blurb: "Chip-resistant enamel over steel, for tents and tailgates alike."
      }
    ]
  },
  {
    slug: "tech-accessories",
    name: "Tech accessories",
    dutyBps: 0,
    brands: [
      ["Voltaic Labs", "US"],
      ["Lumio Audio", "US"],
      ["Bytehaus", "EU"]
    ],
    adjectives: ["Pro", "Compact", "Wireless", "Everyday"],
    tags: ["tech", "work-from-home"],
    items: [
      {
        noun: "Wireless Charging Pad",
        price: 39,
        weight: "light",
        options: "colour",
        tags: ["charging"],
        blurb: "15 W fast charging through most cases, with a soft fabric top."
      },
      {
        noun: "Noise-Cancelling Earbuds",
        price: 129,
        weight: "light",
        options: "colour",
        tags: ["audio", "travel"],
        blurb: "Adaptive noise cancelling, 28 hours with the case, and a snug fit."
      },
      {
        noun: "Portable Bluetooth Speaker",
        price: 79,
        weight: "medium",
        options: "colour",
        tags: ["audio", "outdoors"],
        blurb: "Waterproof, 360-degree sound and a 14-hour battery."
      },
      {
        noun: "Leather Laptop Sleeve",
        price: 68,
        weight: "medium",
        options: "engraving",
        tags: ["office", "personalized"],
        blurb: "Vegetable-tanned leather with a felt lining; fits 13 to 14 inch laptops."
      },
      {
        noun: "Power Bank 10000 mAh",
        price: 45,
        weight: "light",
        tags: ["charging", "travel"],
        blurb: "Charges a phone twice, with USB-C in and out."
      },
      {
        noun: "Mechanical Keyboard",
        price: 149,
        weight: "heavy",
        options: "colour",
        tags: ["gaming", "office"],
        blurb: "Hot-swappable switches, PBT keycaps and a solid aluminium case."
      },
      {
        noun: "Desk Cable Organizer",
        price: 24,
        weight: "light",
        tags: ["office", "minimalist"],
        blurb: "Weighted walnut block that keeps five cables in place."
      },
      {
        noun: "Smart Tracker Tag",
        price: 29,
        weight: "light",
        tags: ["travel"],
        blurb: "Find keys and luggage from your phone; a year-long battery."
      },
      {
        noun: "Webcam Light Bar",
        price: 55,
        weight: "light",
        tags: ["work-from-home"],
        blurb: "Dimmable, colour-adjustable light that clips to any monitor."
      },
      {
        noun: "Over-Ear Headphones",
        price: 199,
        weight: "medium",
        options: "colour",
        tags: ["audio", "luxury"],
        blurb: "Memory-foam cushions, 40 hours of battery and studio-tuned drivers."
      },
      {
        noun: "Phone Stand",
        price: 26,
        weight: "light",
        options: "colour",
        tags: ["office", "team-swag"],
        blurb: "Aluminium stand with adjustable angle, ready for a logo.",
        swag: true,
        imprint: "accessories"
      },
      {
        noun: "Streaming App Subscription Card",
        price: 60,
        weight: null,
        options: "amount",
        tags: ["digital", "gaming"],
        blurb: "A prepaid code for twelve months of ad-free music and podcasts, delivered by e-mail."
      }
    ]
  },
  {
    slug: "wellness",
    name: "Wellness and self-care",
    dutyBps: 300,
    brands: [
      ["Stillwater Botanics", "US"],
      ["Hygge & Ro", "EU"],
      ["Lumen Ritual", "US"]
    ],
    adjectives: ["Calming", "Restorative", "Botanical", "Spa"],
    tags: ["self-care", "get-well"],
    items: [
      {
        noun: "Soy Candle",
        price: 32,
        weight: "medium",
        options: "scent",
        tags: ["aromatherapy", "cozy"],
        blurb: "A 60-hour hand-poured soy candle with a cotton wick."
      },
      {
        noun: "Bath Soak Trio",
        price: 36,
        weight: "medium",
        options: "scent",
        tags: ["skincare"],
        blurb: "Epsom salts with essential oils and dried botanicals."
      },
      {
        noun: "Weighted Eye Mask",
        price: 28,
        weight: "light",
        tags: ["sleep"],
        blurb: "Gentle pressure and blackout silk for deeper rest."
      },
      {
        noun: "Essential Oil Diffuser",
        price: 54,
        weight: "medium",
        tags: ["aromatherapy"],
        blurb: "Ultrasonic diffuser in ceramic with a warm night-light."
      },
      {
        noun: "Yoga Mat",
        price: 78,
        weight: "heavy",
        options: "colour",
        tags: ["fitness"],
        blurb: "Natural rubber with a grippy top layer and alignment lines."
      },
      {
        noun: "Facial Care Set",
        price: 64,
        weight: "light",
        tags: ["skincare", "luxury"],
        blurb: "Cleanser, serum and moisturiser with no added fragrance."
      },
      {
        noun: "Silk Pillowcase",
        price: 59,
        weight: "light",
        options: "colour",
        tags: ["sleep", "luxury"],
        blurb: "22-momme mulberry silk, kind to hair and skin."
      },
      {
        noun: "Massage Roller Kit",
        price: 34,
        weight: "light",
        tags: ["fitness", "self-care"],
        blurb: "Jade face roller, gua sha stone and a foam roller for sore backs."
      },
      {
        noun: "Herbal Sleep Tea",
        price: 19,
        weight: "light",
        tags: ["tea", "sleep"],
        blurb: "Chamomile, lemon balm and lavender in compostable pyramids."
      },
      {
        noun: "Meditation Cushion",
        price: 68,
        weight: "medium",
        options: "colour",
        tags: ["self-care"],
        blurb: "Buckwheat-filled zafu with a washable linen cover."
      },
      {
        noun: "Hand Cream Trio",
        price: 30,
        weight: "light",
        options: "scent",
        tags: ["skincare", "thank-you"],
        blurb: "Three rich hand creams in travel tubes."
      },
      {
        noun: "Spa Day Gift Box",
        price: 95,
        weight: "medium",
        tags: ["gift-box", "luxury"],
        blurb: "Robe, slippers, candle and bath soak in one ribboned box."
      }
    ]
  },
  {
    slug: "home",
    name: "Home and kitchen",
    dutyBps: 350,
    brands: [
      ["Oak & Ember Home", "US"],
      ["Linnea Studio", "EU"],
      ["Fernhill Goods", "US"]
    ],
    adjectives: ["Linen", "Walnut", "Heirloom", "Modern"],
    tags: ["new-home", "cozy"],
    items: [
      {
        noun: "Knit Throw Blanket",
        price: 89,
        weight: "heavy",
        options: "colour",
        tags: ["cozy"],
        blurb: "Chunky knit cotton throw, 130 × 170 cm."
      },
      {
        noun: "Walnut Cutting Board",
        price: 65,
        weight: "heavy",
        options: "engraving",
        tags: ["cooking", "personalized", "wedding"],
        blurb: "End-grain walnut board, oiled and ready to use."
      },
      {
        noun: "Ceramic Planter Set",
        price: 42,
        weight: "medium",
        tags: ["houseplants"],
        blurb: "Three nesting planters with drainage and saucers."
      },
      {
        noun: "Linen Napkin Set",
        price: 38,
        weight: "light",
        options: "colour",
        tags: ["cooking", "wedding"],
        blurb: "Six stonewashed linen napkins that soften with every wash."
      },
      {
        noun: "Cast Iron Skillet",
        price: 55,
        weight: "heavy",
        tags: ["cooking"],
        blurb: "Pre-seasoned 26 cm skillet that lasts generations."
      },
      {
        noun: "Scented Reed Diffuser",
        price: 34,
        weight: "medium",
        options: "scent",
        tags: ["aromatherapy"],
        blurb: "Three months of gentle fragrance from rattan reeds."
      },
      {
        noun: "Picture Frame",
        price: 29,
        weight: "medium",
        options: "engraving",
        tags: ["personalized", "wedding"],
        blurb: "Solid oak frame for 13 × 18 cm prints, with glass front."
      },
      {
        noun: "Cheese Knife Set",
        price: 44,
        weight: "light",
        tags: ["cooking", "wine"],
        blurb: "Four stainless knives with acacia handles."
      },
      {
        noun: "Wall Clock",
        price: 72,
        weight: "medium",
        tags: ["minimalist"],
        blurb: "Silent sweep movement in a 30 cm birch face."
      },
      {
        noun: "Doormat",
        price: 39,
        weight: "heavy",
        options: "engraving",
        tags: ["personalized", "new-home"],
        blurb: "Natural coir doormat, custom-printed with your family name."
      },
      {
        noun: "Pasta Making Kit",
        price: 58,
        weight: "medium",
        tags: ["cooking"],
        blurb: "Rolling pin, cutter, drying rack and a recipe card for fresh pasta."
      },
      {
        noun: "Bread Baking Set",
        price: 49,
        weight: "medium",
        tags: ["baking"],
        blurb: "Proofing basket, lame and dough scraper for crusty sourdough."
      }
    ]
  },
  {
    slug: "books",
    name: "Books",
    dutyBps: 0,
    brands: [
      ["Lantern House Press", "US"],
      ["Greyfriar Editions", "EU"],
      ["Marigold Books", "US"]
    ],
    adjectives: ["Illustrated", "Collector's", "Pocket", "Anniversary"],
    tags: ["reading"],
    items: [
      {
        noun: "Cookbook: Weeknight Feasts",
        price: 35,
        weight: "medium",
        options: "format",
        tags: ["cookbooks", "cooking"],
        blurb: "120 recipes that come together in under 40 minutes."
      },
      {
        noun: "Novel: The Lighthouse Keepers",
        price: 27,
        weight: "medium",
        options: "format",
        tags: ["fiction"],
        blurb: "A sweeping family saga on a windswept island."
      },
      {
        noun: "Field Guide to Birds",
        price: 30,
        weight: "medium",
        options: "format",
        tags: ["outdoors"],
        blurb: "800 species with paintings, range maps and calls."
      },
      {
        noun: "Coffee Table Book: Cities at Night",
        price: 60,
        weight: "heavy",
        tags: ["art", "new-home"],
        blurb: "Photographs of forty cities after dark, cloth-bound."
      },
      {
        noun: "Cocktail Recipe Book",
        price: 28,
        weight: "medium",
        options: "format",
        tags: ["cocktails"],
        blurb: "Classics and modern twists, with bar techniques explained."
      },
      {
        noun: "Children's Picture Book",
        price: 18,
        weight: "light",
        tags: ["kids"],
        blurb: "A bedtime story about a fox who collects stars."
      },
      {
        noun: "Mindfulness Journal",
        price: 22,
        weight: "light",
        tags: ["journaling", "self-care"],
        blurb: "Guided prompts for five minutes a day, for a year."
      },
      {
        noun: "Gardening Handbook",
        price: 32,
        weight: "medium",
        options: "format",
        tags: ["gardening"],
        blurb: "From soil to harvest, season by season."
      },
      {
        noun: "Thriller: Cold Harbour",
        price: 25,
        weight: "medium",
        options: "format",
        tags: ["fiction"],
        blurb: "A detective returns to the town she swore she'd left behind."
      },
      {
        noun: "Baking Bible",
        price: 42,
        weight: "heavy",
        options: "format",
        tags: ["baking", "cookbooks"],
        blurb: "The reference for breads, pastries and cakes."
      },
      {
        noun: "Travel Atlas",
        price: 48,
        weight: "heavy",
        tags: ["travel"],
        blurb: "Maps, itineraries and stories from 60 countries."
      },
      {
        noun: "Audiobook Credit Pack",
        price: 45,
        weight: null,
        options: "amount",
        tags: ["digital"],
        blurb: "Credits for any audiobook in the store, delivered instantly."
      }
    ]
  },
  {
    slug: "apparel-swag",
    name: "Apparel and swag",
    dutyBps: 1200,
    brands: [
      ["Northbound Outfitters", "US"],
      ["Atelier Fjell", "EU"],
      ["Common Thread Co.", "US"]
    ],
    adjectives: ["Organic Cotton", "Recycled", "Heavyweight", "Everyday"],
    tags: ["apparel", "team-swag", "corporate"],
    items: [
      {
        noun: "Crewneck Sweatshirt",
        price: 58,
        weight: "medium",
        options: "size_colour",
        tags: [],
        blurb: "Brushed fleece crew, ready for embroidery.",
        swag: true,
        imprint: "apparel"
      },
      {
        noun: "Logo T-Shirt",
        price: 24,
        weight: "light",
        options: "size_colour",
        tags: [],
        blurb: "Soft ringspun cotton tee that holds a print.",
        swag: true,
        imprint: "apparel"
      },
      {
        noun: "Zip Hoodie",
        price: 72,
        weight: "medium",
        options: "size_colour",
        tags: ["cozy"],
        blurb: "Mid-weight hoodie with metal zip and kangaroo pockets.",
        swag: true,
        imprint: "apparel"
      },
      {
        noun: "Knit Beanie",
        price: 22,
        weight: "light",
        options: "colour",
        tags: ["outdoors"],
        blurb: "Ribbed merino-blend beanie, one size.",
        swag: true,
        imprint: "headwear"
      },
      {
        noun: "Canvas Tote Bag",
        price: 19,
        weight: "light",
        options: "colour",
        tags: ["eco-friendly"],
        blurb: "Heavy canvas tote with an inside pocket.",
        swag: true,
        imprint: "bags"
      },
      {
        noun: "Quarter-Zip Pullover",
        price: 84,
        weight: "medium",
        options: "size_colour",
        tags: [],
        blurb: "Performance knit with a clean look for the office.",
        swag: true,
        imprint: "apparel"
      },
      {
        noun: "Baseball Cap",
        price: 26,
        weight: "light",
        options: "colour",
        tags: [],
        blurb: "Unstructured six-panel cap with a brass buckle.",
        swag: true,
        imprint: "headwear"
      },
      {
        noun: "Wool Socks Set",
        price: 28,
        weight: "light",
        options: "size",
        tags: ["cozy"],
        blurb: "Three pairs of cushioned merino socks."
      },
      {
        noun: "Rain Jacket",
        price: 129,
        weight: "heavy",
        options: "size_colour",
        tags: ["outdoors"],
        blurb: "Seam-sealed and packable, with pit zips."
      },
      {
        noun: "Cashmere Scarf",
        price: 110,
        weight: "light",
        options: "colour",
        tags: ["luxury"],
        blurb: "Pure Mongolian cashmere, 180 × 30 cm."
      },
      {
        noun: "Embroidered Polo",
        price: 46,
        weight: "light",
        options: "size_colour",
        tags: [],
        blurb: "Pique polo with a left-chest embroidery area.",
        swag: true,
        imprint: "apparel"
      },
      {
        noun: "Fleece Vest",
        price: 64,
        weight: "medium",
        options: "size_colour",
        tags: ["outdoors"],
        blurb: "Recycled fleece vest, warm and light.",
        swag: true,
        imprint: "apparel"
      }
    ]
  },
  {
    slug: "kids",
    name: "Kids and baby",
    dutyBps: 450,
    brands: [
      ["Little Acorn Toys", "US"],
      ["Bambolino", "EU"],
      ["Tiny Tumble", "US"]
    ],
    adjectives: ["Wooden", "Rainbow", "Classic", "Montessori"],
    tags: ["kids", "birthday"],
    items: [
      {
        noun: "Stacking Blocks",
        price: 34,
        weight: "medium",
        tags: ["toys", "baby"],
        blurb: "Twelve beechwood blocks painted with non-toxic colours."
      },
      {
        noun: "Plush Bunny",
        price: 28,
        weight: "light",
        options: "engraving",
        tags: ["toys", "baby", "personalized"],
        blurb: "Organic cotton bunny, embroidered with a name if you like."
      },
      {
        noun: "Baby Blanket",
        price: 48,
        weight: "medium",
        options: "colour",
        tags: ["baby", "new-baby"],
        blurb: "Muslin swaddle blanket, breathable and soft."
      },
      {
        noun: "Art Supply Kit",
        price: 39,
        weight: "medium",
        tags: ["art"],
        blurb: "Crayons, watercolours and a sketchbook in a tin case."
      },
      {
        noun: "Building Set",
        price: 59,
        weight: "medium",
        tags: ["toys"],
        blurb: "300 compatible bricks and instructions for three vehicles."
      },
      {
        noun: "Puzzle 100 Pieces",
        price: 22,
        weight: "light",
        tags: ["toys"],
        blurb: "A jungle scene on thick recycled card."
      },
      {
        noun: "Balance Bike",
        price: 119,
        weight: "heavy",
        options: "colour",
        tags: ["outdoors"],
        blurb: "Lightweight frame and adjustable seat for ages 2 to 5."
      },
      {
        noun: "Baby Bodysuit Set",
        price: 32,
        weight: "light",
        options: "size",
        tags: ["baby", "new-baby"],
        blurb: "Five organic cotton bodysuits with envelope necks."
      },
      {
        noun: "Science Experiment Kit",
        price: 45,
        weight: "medium",
        tags: ["toys"],
        blurb: "Twenty kitchen-safe experiments with a lab notebook."
      },
      {
        noun: "Play Kitchen Set",
        price: 79,
        weight: "heavy",
        tags: ["toys"],
        blurb: "Pots, utensils and wooden vegetables to slice."
      },
      {
        noun: "Bath Toy Boats",
        price: 19,
        weight: "light",
        tags: ["baby"],
        blurb: "Three stacking boats that float and pour."
      },
      {
        noun: "New Baby Gift Box",
        price: 85,
        weight: "medium",
        tags: ["new-baby", "gift-box"],
        blurb: "Blanket, rattle, bodysuit and a keepsake card."
      }
    ]
  },
  {
    slug: "pets",
    name: "Pets",
    dutyBps: 250,
    brands: [
      ["Good Boy Supply", "US"],
      ["Pfote & Co.", "EU"],
      ["Whisker Works", "US"]
    ],
    adjectives: ["Cozy", "Durable", "Natural", "Deluxe"],
    tags: ["pets"],
    items: [
      {
        noun: "Dog Bed",
        price: 79,
        weight: "heavy",
        options: "size",
        tags: ["dogs", "cozy"],
        blurb: "Orthopaedic foam bed with a washable cover."
      },
      {
        noun: "Cat Tree",
        price: 99,
        weight: "heavy",
        tags: ["cats"],
        blurb: "Three levels, sisal posts and a hideaway."
      },
      {
        noun: "Leather Dog Collar",
        price: 36,
        weight: "light",
        options: "size",
        tags: ["dogs"],
        blurb: "Full-grain leather with solid brass hardware."
      },
      {
        noun: "Personalized Pet Tag",
        price: 18,
        weight: "light",
        options: "engraving",
        tags: ["dogs", "cats", "personalized"],
        blurb: "Stainless tag engraved with a name and phone number."
      },
      {
        noun: "Dog Treat Sampler",
        price: 25,
        weight: "medium",
        tags: ["dogs", "snacks"],
        blurb: "Six single-ingredient treats, baked in small batches."
      },
      {
        noun: "Catnip Toy Set",
        price: 16,
        weight: "light",
        tags: ["cats", "toys"],
        blurb: "Five organic catnip toys in felted wool."
      },
      {
        noun: "Pet Grooming Kit",
        price: 42,
        weight: "medium",
        tags: ["dogs", "cats"],
        blurb: "Brush, nail clippers and a gentle shampoo."
      },
      {
        noun: "Dog Raincoat",
        price: 44,
        weight: "light",
        options: "size",
        tags: ["dogs", "outdoors"],
        blurb: "Reflective, waterproof and easy on and off."
      },
      {
        noun: "Ceramic Pet Bowl",
        price: 28,
        weight: "medium",
        options: "colour",
        tags: ["dogs", "cats"],
        blurb: "Heavy, non-slip stoneware bowl."
      },
      {
        noun: "Interactive Puzzle Feeder",
        price: 30,
        weight: "medium",
        tags: ["dogs", "toys"],
        blurb: "Slows fast eaters and keeps minds busy."
      },
      {
        noun: "Cat Window Perch",
        price: 38,
        weight: "medium",
        tags: ["cats"],
        blurb: "Suction-mounted hammock holding up to 20 kg."
      },
      {
        noun: "Pet Birthday Box",
        price: 55,
        weight: "medium",
        tags: ["dogs", "birthday", "gift-box"],
        blurb: "Bandana, toy, treats and a pup-safe cake mix."
      }
    ]
  },
  {
    slug: "plants-flowers",
    name: "Plants and flowers",
    dutyBps: 0,
    brands: [
      ["Bloom & Bramble", "US"],
      ["Tulpenhof", "EU"],
      ["Greenhouse Row", "US"]
    ],
    adjectives: ["Seasonal", "Garden", "Wild", "Luxe"],
    tags: ["flowers", "get-well"],
    items: [
      {
        noun: "Seasonal Bouquet",
        price: 55,
        weight: "medium",
        options: "tier",
        tags: ["birthday", "thank-you"],
        blurb: "Hand-tied stems picked that morning, wrapped in kraft paper.",
        shipsTo: "domestic"
      },
      {
        noun: "Rose Bouquet",
        price: 75,
        weight: "medium",
        options: "tier",
        tags: ["wedding", "luxury"],
        blurb: "Long-stem roses in a colour of the florist's choosing.",
        shipsTo: "domestic"
      },
      {
        noun: "Snake Plant in Ceramic Pot",
        price: 48,
        weight: "heavy",
        tags: ["houseplants"],
        blurb: "The hardiest houseplant, potted and ready.",
        shipsTo: "domestic"
      },
      {
        noun: "Orchid",
        price: 58,
        weight: "medium",
        tags: ["houseplants", "luxury"],
        blurb: "Double-stem phalaenopsis that blooms for months.",
        shipsTo: "domestic"
      },
      {
        noun: "Herb Garden Kit",
        price: 32,
        weight: "medium",
        tags: ["gardening", "cooking"],
        blurb: "Basil, mint and parsley seeds with pots and soil."
      },
      {
        noun: "Bonsai Tree",
        price: 69,
        weight: "medium",
        tags: ["houseplants", "minimalist"],
        blurb: "A ten-year-old juniper with care instructions.",
        shipsTo: "domestic"
      },
      {
        noun: "Dried Flower Arrangement",
        price: 44,
        weight: "medium",
        tags: ["new-home"],
        blurb: "Pampas, bunny tails and statice that last a year."
      },
      {
        noun: "Succulent Trio",
        price: 36,
        weight: "medium",
        tags: ["houseplants"],
        blurb: "Three easy-care succulents in concrete pots.",
        shipsTo: "domestic"
      },
      {
        noun: "Tulip Bulb Collection",
        price: 29,
        weight: "light",
        tags: ["gardening"],
        blurb: "Thirty bulbs for a spring full of colour.",
        shipsTo: ["NL", "DE", "BE", "FR", "AT", "GB", "IE", "DK", "SE"]
      },
      {
        noun: "Monstera Plant",
        price: 65,
        weight: "heavy",
        tags: ["houseplants"],
        blurb: "A 60 cm split-leaf monstera in a nursery pot.",
        shipsTo: "domestic"
      },
      {
        noun: "Sympathy Wreath",
        price: 95,
        weight: "heavy",
        tags: [],
        blurb: "A calm wreath of white flowers and eucalyptus.",
        shipsTo: "domestic"
      },
      {
        noun: "Flower Subscription (3 Months)",
        price: 150,
        weight: "medium",
        tags: ["luxury"],
        blurb: "A fresh bouquet on the first of each month for three months.",
        shipsTo: "domestic"
      }
    ]
  },
  {
    slug: "experiences",
    name: "Experiences",
    dutyBps: 0,
    brands: [
      ["Wayfarer Experiences", "US"],
      ["Erlebnisreich", "EU"],
      ["Momento Days", "US"]
    ],
    adjectives: ["Private", "Weekend", "Evening", "Signature"],
    tags: ["experiences", "digital"],
    items: [
      {
        noun: "Sushi Making Class in Tokyo",
        price: 120,
        weight: null,
        tags: ["cooking"],
        blurb: "Three hours with a sushi chef; e-voucher valid 12 months.",
        shipsTo: ["JP"]
      },
      {
        noun: "Hot Air Balloon Flight",
        price: 249,
        weight: null,
        tags: ["outdoors", "luxury"],
        blurb: "Sunrise flight with a sparkling toast on landing.",
        shipsTo: ["US", "GB", "DE", "FR", "AU"]
      },
      {
        noun: "Online Cocktail Masterclass",
        price: 45,
        weight: null,
        tags: ["cocktails"],
        blurb: "A live 90-minute class over video; ingredient list sent ahead."
      },
      {
        noun: "Wine Tasting for Two",
        price: 89,
        weight: null,
        tags: ["wine"],
        blurb: "Guided tasting of six wines at a partner vineyard.",
        shipsTo: ["US", "FR", "IT", "ES", "DE", "AU", "NZ"]
      },
      {
        noun: "Pottery Workshop",
        price: 75,
        weight: null,
        tags: ["art", "handmade"],
        blurb: "Throw your own bowls; pieces are glazed and fired for you.",
        shipsTo: ["US", "GB", "DE", "NL", "CA"]
      },
      {
        noun: "Spa Day Pass",
        price: 150,
        weight: null,
        tags: ["self-care", "luxury"],
        blurb: "Full-day access to thermal pools and one treatment.",
        shipsTo: ["US", "DE", "AT", "CH", "GB"]
      },
      {
        noun: "Online Watercolour Course",
        price: 39,
        weight: null,
        tags: ["art"],
        blurb: "Six recorded lessons with lifetime access."
      },
      {
        noun: "Guided City Food Tour",
        price: 85,
        weight: null,
        tags: ["cooking", "travel"],
        blurb: "Eight tastings across a city's markets and hidden kitchens.",
        shipsTo: ["US", "GB", "IT", "ES", "FR", "JP", "SG"]
      },
      {
        noun: "Rock Climbing Intro Session",
        price: 65,
        weight: null,
        tags: ["fitness", "outdoors"],
        blurb: "Gear, instruction and two hours on the wall.",
        shipsTo: ["US", "CA", "GB", "DE", "AU"]
      },
      {
        noun: "Virtual Team Trivia Night",
        price: 30,
        weight: null,
        options: "tier",
        tags: ["corporate", "team-swag"],
        blurb: "A hosted trivia game for remote teams, priced per seat."
      },
      {
        noun: "Stargazing Night",
        price: 55,
        weight: null,
        tags: ["outdoors"],
        blurb: "Telescopes, hot cocoa and an astronomer under dark skies.",
        shipsTo: ["US", "NZ", "AU", "CL"]
      },
      {
        noun: "Perfume Blending Workshop",
        price: 110,
        weight: null,
        tags: ["luxury"],
        blurb: "Create and bottle your own 50 ml fragrance.",
        shipsTo: ["FR", "US", "GB"]
      }
    ]
  },
  {
    slug: "gift-cards",
    name: "Digital gift cards",
    dutyBps: 0,
    brands: [
      ["Ribbon", "US"],
      ["Everbloom Gift Cards", "US"],
      ["Giftloop", "EU"]
    ],
    adjectives: ["Birthday", "Thank-You", "Holiday", "Celebration"],
    tags: ["digital", "thank-you"],
    items: [
      {
        noun: "Marketplace E-Gift Card",
        price: 25,
        weight: null,
        options: "amount",
        tags: ["birthday", "corporate"],
        blurb: "Spend it on anything in the marketplace; delivered by e-mail in minutes."
      },
      {
        noun: "Coffee Shop E-Gift Card",
        price: 25,
        weight: null,
        options: "amount",
        tags: ["coffee"],
        blurb: "Good at thousands of independent cafés."
      },
      {
        noun: "Restaurant E-Gift Card",
        price: 50,
        weight: null,
        options: "amount",
        tags: ["cooking"],
        blurb: "Dinner at partner restaurants, redeemable online or in person."
      },
      {
        noun: "Bookstore E-Gift Card",
        price: 25,
        weight: null,
        options: "amount",
        tags: ["reading"],
        blurb: "For print, e-books and audiobooks."
      },
      {
        noun: "Streaming E-Gift Card",
        price: 30,
        weight: null,
        options: "amount",
        tags: ["gaming"],
        blurb: "Movies, series and music in one card."
      },
      {
        noun: "Wellness E-Gift Card",
        price: 50,
        weight: null,
        options: "amount",
        tags: ["self-care"],
        blurb: "Yoga studios, massages and meditation apps."
      },
      {
        noun: "Travel E-Gift Card",
        price: 100,
        weight: null,
        options: "amount",
        tags: ["travel"],
        blurb: "Hotels, rail and experiences in 80 countries."
      },
      {
        noun: "Charity Donation Card",
        price: 25,
        weight: null,
        options: "amount",
        tags: ["eco-friendly"],
        blurb: "The recipient picks a charity to receive the amount."
      },
      {
        noun: "Team Lunch E-Gift Card",
        price: 20,
        weight: null,
        options: "amount",
        tags: ["corporate", "work-from-home"],
        blurb: "Lunch delivered anywhere, on the company."
      },
      {
        noun: "Game Store E-Gift Card",
        price: 25,
        weight: null,
        options: "amount",
        tags: ["gaming"],
        blurb: "Credit for games and add-ons on every major platform."
      },
      {
        noun: "Plant Shop E-Gift Card",
        price: 40,
        weight: null,
        options: "amount",
        tags: ["houseplants"],
        blurb: "For plants, pots and tools."
      },
      {
        noun: "Experience E-Gift Card",
        price: 75,
        weight: null,
        options: "amount",
        tags: ["experiences"],
        blurb: "Let them pick a class, tour or adventure."
      }
    ]
  },
  {
    slug: "stationery",
    name: "Stationery and desk",
    dutyBps: 300,
    brands: [
      ["Inkwell & Quill", "US"],
      ["Papeterie Lune", "EU"],
      ["Deskbound Co.", "US"]
    ],
    adjectives: ["Leather", "Linen-Bound", "Letterpress", "Brass"],
    tags: ["stationery", "office"],
    items: [
      {
        noun: "Leather Notebook",
        price: 38,
        weight: "light",
        options: "engraving",
        tags: ["journaling", "personalized"],
        blurb: "A5 refillable notebook with dot-grid pages."
      },
      {
        noun: "Fountain Pen",
        price: 85,
        weight: "light",
        options: "colour",
        tags: ["luxury"],
        blurb: "Steel nib, piston filler and a bottle of ink."
      },
      {
        noun: "Letterpress Card Set",
        price: 24,
        weight: "light",
        tags: ["thank-you"],
        blurb: "Twelve cotton-paper cards with envelopes."
      },
      {
        noun: "Desk Planner",
        price: 32,
        weight: "light",
        tags: ["work-from-home"],
        blurb: "Undated weekly planner with habit trackers."
      },
      {
        noun: "Logo Notebook",
        price: 16,
        weight: "light",
        options: "colour",
        tags: ["team-swag", "corporate"],
        blurb: "A5 softcover notebook with a debossed logo area.",
        swag: true,
        imprint: "stationery"
      },
      {
        noun: "Brass Desk Set",
        price: 69,
        weight: "medium",
        tags: ["minimalist"],
        blurb: "Pen cup, tray and paperweight in solid brass."
      },
      {
        noun: "Watercolour Sketchbook",
        price: 28,
        weight: "light",
        tags: ["art"],
        blurb: "Cold-pressed 300 gsm paper that takes a wash."
      },
      {
        noun: "Wax Seal Kit",
        price: 34,
        weight: "light",
        options: "engraving",
        tags: ["personalized", "wedding"],
        blurb: "A custom initial seal with three wax sticks."
      },
      {
        noun: "Desk Organizer",
        price: 45,
        weight: "medium",
        options: "colour",
        tags: ["work-from-home"],
        blurb: "Felt and wood organizer with a phone slot."
      },
      {
        noun: "Gel Pen Collection",
        price: 18,
        weight: "light",
        tags: ["art", "journaling"],
        blurb: "Thirty smooth gel pens in a zip case."
      },
      {
        noun: "Gratitude Journal",
        price: 26,
        weight: "light",
        tags: ["journaling", "self-care"],
        blurb: "A year of prompts for what went right today."
      },
      {
        noun: "Welcome Onboarding Kit",
        price: 79,
        weight: "medium",
        tags: ["corporate", "team-swag"],
        blurb: "Notebook, pen, bottle and sticker sheet in a branded box.",
        swag: true,
        imprint: "accessories"
      }
    ]
  },
  {
    slug: "outdoor",
    name: "Outdoor and travel",
    dutyBps: 500,
    brands: [
      ["Ridgeway Gear", "US"],
      ["Alpenkamm", "EU"],
      ["Trailhead Supply", "US"]
    ],
    adjectives: ["Ultralight", "Weatherproof", "Packable", "Expedition"],
    tags: ["outdoors", "travel"],
    items: [
      {
        noun: "Camping Hammock",
        price: 59,
        weight: "medium",
        options: "colour",
        tags: ["camping"],
        blurb: "Parachute nylon with tree straps, packs to the size of a melon."
      },
      {
        noun: "Picnic Blanket",
        price: 49,
        weight: "medium",
        options: "colour",
        tags: ["camping"],
        blurb: "Water-resistant backing and a carry strap."
      },
      {
        noun: "Weekender Duffel",
        price: 129,
        weight: "heavy",
        options: "engraving",
        tags: ["personalized", "luxury"],
        blurb: "Waxed canvas and leather trim, 45 litres."
      },
      {
        noun: "Travel Toiletry Kit",
        price: 34,
        weight: "light",
        tags: ["self-care"],
        blurb: "Hanging organizer with leak-proof bottles."
      },
      {
        noun: "Headlamp",
        price: 29,
        weight: "light",
        tags: ["camping"],
        blurb: "Rechargeable, 400 lumens, red night mode."
      },
      {
        noun: "Insulated Backpack Cooler",
        price: 75,
        weight: "medium",
        tags: ["camping"],
        blurb: "Keeps 24 cans cold for a day on the trail."
      },
      { noun: "Binoculars", price: 99, weight: "medium", tags: [], blurb: "8 × 42 roof prism, fog-proof." },
      {
        noun: "Passport Wallet",
        price: 39,
        weight: "light",
        options: "engraving",
        tags: ["personalized"],
        blurb: "Full-grain leather with RFID blocking."
      },
      {
        noun: "Camp Stove",
        price: 65,
        weight: "medium",
        tags: ["camping", "cooking"],
        blurb: "Boils a litre in three minutes."
      },
      {
        noun: "Trekking Poles",
        price: 85,
        weight: "medium",
        tags: ["fitness"],
        blurb: "Carbon fibre, cork grips, folds to 38 cm."
      },
      {
        noun: "Packing Cube Set",
        price: 32,
        weight: "light",
        options: "colour",
        tags: [],
        blurb: "Four compression cubes for carry-on travel."
      },
      {
        noun: "Solar Lantern",
        price: 42,
        weight: "medium",
        tags: ["camping", "eco-friendly"],
        blurb: "Charges by day, glows for 12 hours."
      }
    ]
  }
]

/** Collections: a name, a description, tags, and which products belong (a predicate over the seeded products). */
export interface CollectionRule {
  readonly name: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly match: (p: {
    readonly category: string
    readonly tags: ReadonlyArray<string>
    readonly minPriceUsd: number
    readonly digital: boolean
    readonly personalizable: boolean
    readonly warehouse: "US" | "EU" | null
    readonly catalog: "marketplace" | "swag"
    readonly shipsEverywhere: boolean
  }) => boolean
}

const has = (tag: string) => (p: { readonly tags: ReadonlyArray<string> }) => p.tags.includes(tag)

export const collections: ReadonlyArray<CollectionRule> = [
  {
    name: "Gifts under $25",
    description: "Thoughtful and easy on the budget.",
    tags: ["thank-you"],
    match: (p) => p.minPriceUsd <= 2500
  },
  {
    name: "Gifts under $50",
    description: "Something special for less than fifty.",
    tags: ["birthday"],
    match: (p) => p.minPriceUsd <= 5000
  },
  {
    name: "Luxury gifts",
    description: "When only the best will do.",
    tags: ["luxury"],
    match: (p) => p.minPriceUsd >= 10000 || has("luxury")(p)
  },
  {
    name: "For coffee lovers",
    description: "Beans, brewers and mugs for the caffeine devoted.",
    tags: ["coffee"],
    match: has("coffee")
  },
  { name: "Tea time", description: "Leaves, pots and cups for a calmer afternoon.", tags: ["tea"], match: has("tea") },
  {
    name: "Chocolate and sweets",
    description: "Truffles, caramels and cookies.",
    tags: ["chocolate"],
    match: (p) => has("chocolate")(p) || has("sweets")(p) || has("baking")(p)
  },
  {
    name: "Work from home",
    description: "Upgrades for the home office.",
    tags: ["work-from-home"],
    match: has("work-from-home")
  },
  {
    name: "New parents",
    description: "Soft, safe and useful for the first year.",
    tags: ["new-baby"],
    match: (p) => has("new-baby")(p) || has("baby")(p)
  },
  {
    name: "Pet parents",
    description: "Treats and comforts for dogs and cats.",
    tags: ["pets"],
    match: (p) => p.category === "pets"
  },
  {
    name: "Plant lovers",
    description: "Houseplants, bulbs and gardening kits.",
    tags: ["houseplants"],
    match: (p) => has("houseplants")(p) || has("gardening")(p)
  },
  {
    name: "Self-care Sunday",
    description: "Candles, soaks and slow mornings.",
    tags: ["self-care"],
    match: has("self-care")
  },
  {
    name: "Book club",
    description: "Stories and guides worth passing on.",
    tags: ["reading"],
    match: (p) => p.category === "books"
  },
  {
    name: "For the home chef",
    description: "Tools and ingredients for people who love to cook.",
    tags: ["cooking"],
    match: has("cooking")
  },
  {
    name: "Cocktail hour",
    description: "Shakers, syrups and glassware.",
    tags: ["cocktails"],
    match: has("cocktails")
  },
  {
    name: "Thank-you gifts",
    description: "Say thanks with something they'll use.",
    tags: ["thank-you"],
    match: has("thank-you")
  },
  {
    name: "Client gifts",
    description: "Polished gifts for clients and partners.",
    tags: ["corporate"],
    match: (p) => has("corporate")(p) || (has("luxury")(p) && p.minPriceUsd <= 15000)
  },
  {
    name: "Team swag",
    description: "Apparel and gear ready for your logo.",
    tags: ["team-swag"],
    match: (p) => p.catalog === "swag"
  },
  {
    name: "Onboarding kits",
    description: "Welcome new hires on day one.",
    tags: ["corporate"],
    match: (p) => p.catalog === "swag" && p.minPriceUsd <= 8000
  },
  {
    name: "Eco-friendly picks",
    description: "Lower-impact gifts with recycled and organic materials.",
    tags: ["eco-friendly"],
    match: (p) => has("eco-friendly")(p) || has("organic")(p)
  },
  {
    name: "Personalized gifts",
    description: "Engraved, embroidered and monogrammed.",
    tags: ["personalized"],
    match: (p) => p.personalizable
  },
  {
    name: "Instant digital gifts",
    description: "Delivered by e-mail in minutes; no shipping.",
    tags: ["digital"],
    match: (p) => p.digital
  },
  {
    name: "Ships worldwide",
    description: "Deliverable to every country we serve.",
    tags: ["travel"],
    match: (p) => p.shipsEverywhere && !p.digital
  },
  {
    name: "Made in Europe",
    description: "From European makers, shipped from our EU warehouse.",
    tags: ["handmade"],
    match: (p) => p.warehouse === "EU"
  },
  {
    name: "Birthday favourites",
    description: "Crowd-pleasers for every age.",
    tags: ["birthday"],
    match: (p) => has("birthday")(p) || has("gift-box")(p)
  },
  {
    name: "Wedding and anniversary",
    description: "Gifts for the happy couple.",
    tags: ["wedding"],
    match: has("wedding")
  },
  {
    name: "Get well soon",
    description: "Comfort and cheer for recovery days.",
    tags: ["get-well"],
    match: has("get-well")
  },
  {
    name: "Outdoor adventures",
    description: "Gear for trails, campsites and picnics.",
    tags: ["outdoors"],
    match: has("outdoors")
  },
  {
    name: "Tech upgrades",
    description: "Chargers, audio and desk tech.",
    tags: ["tech"],
    match: (p) => p.category === "tech-accessories"
  },
  {
    name: "Kids' picks",
    description: "Toys and keepsakes for little ones.",
    tags: ["kids"],
    match: (p) => p.category === "kids"
  },
  {
    name: "Experiences to remember",
    description: "Classes, tastings and adventures.",
    tags: ["experiences"],
    match: (p) => p.category === "experiences"
  },
  {
    name: "Cozy nights in",
    description: "Blankets, candles and something warm to drink.",
    tags: ["cozy"],
    match: has("cozy")
  },
  {
    name: "Holiday gift guide",
    description: "Our most-gifted picks for the season.",
    tags: ["holiday"],
    match: (p) => has("gift-box")(p) || has("chocolate")(p) || has("cozy")(p)
  }
]
