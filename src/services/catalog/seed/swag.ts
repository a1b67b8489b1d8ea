import type { Personalization } from "../../../domain/catalog/Personalization.js"
import type { ItemTemplate } from "./catalog.js"

/**
 * The swag catalog's data (docs/catalog.md, "Swag"): how each kind of swag takes a company's logo, and the
 * swag base products, the blanks a company orders with its logo on them. Templates only; build.ts turns
 * them into rows like the curated ones.
 */

/** How a kind of swag takes a logo: where it can go, in which colours, and how long a text line may be. */
export type ImprintKind = "apparel" | "headwear" | "drinkware" | "bags" | "stationery" | "accessories"

const imprints: Record<
  ImprintKind,
  { readonly placements: ReadonlyArray<string>; readonly colours: ReadonlyArray<string>; readonly textLine: number }
> = {
  apparel: {
    placements: ["Left chest", "Centre chest", "Full back", "Left sleeve"],
    colours: ["White", "Black", "Navy", "Heather grey", "Full colour"],
    textLine: 20
  },
  headwear: {
    placements: ["Front panel", "Left side", "Back strap"],
    colours: ["White", "Black", "Navy", "Tonal"],
    textLine: 16
  },
  drinkware: {
    placements: ["Front", "Back", "Wrap-around"],
    colours: ["Laser etched", "White", "Black", "Full colour"],
    textLine: 24
  },
  bags: {
    placements: ["Front panel", "Front pocket", "Strap tag"],
    colours: ["White", "Black", "Natural", "Full colour"],
    textLine: 20
  },
  stationery: {
    placements: ["Cover, centred", "Cover, lower right", "Inside cover"],
    colours: ["Blind deboss", "Gold foil", "Silver foil", "Full colour"],
    textLine: 30
  },
  accessories: {
    placements: ["Front", "Back"],
    colours: ["Laser etched", "White", "Black", "Full colour"],
    textLine: 20
  }
}

/**
 * The personalization of a swag variant: logo placement, imprint colour and an optional text line. On a swag
 * base product the logo is the point, so placement and colour are required; the ready-for-your-logo items of
 * the curated catalog are sold blank unless personalized, so there every field is optional.
 */
export const imprintPersonalization = (kind: ImprintKind, logoRequired: boolean): Personalization => {
  const imprint = imprints[kind]
  return {
    fields: [
      {
        name: "logoPlacement",
        label: "Logo placement",
        type: "choice",
        required: logoRequired,
        choices: imprint.placements
      },
      {
        name: "imprintColour",
        label: "Imprint colour",
        type: "choice",
        required: logoRequired,
        choices: imprint.colours
      },
      { name: "textLine", label: "Text line", type: "text", required: false, maxLength: imprint.textLine }
    ]
  }
}

/** An engraved variant takes its engraving text. */
export const engravingPersonalization: Personalization = {
  fields: [{ name: "engraving", label: "Engraving", type: "text", required: true, maxLength: 20 }]
}

/** Swag base products by the category they are filed under; each takes the category's brands in turn. */
export interface SwagGroup {
  readonly category: string
  readonly items: ReadonlyArray<ItemTemplate & { readonly swag: true; readonly imprint: ImprintKind }>
}

const base = { swag: true, tags: ["team-swag", "corporate"] } as const

export const swagBaseProducts: ReadonlyArray<SwagGroup> = [
  {
    category: "apparel-swag",
    items: [
      {
        ...base,
        noun: "Classic Crew Tee",
        price: 9.5,
        weight: "light",
        options: "size_colour",
        imprint: "apparel",
        blurb: "Ringspun cotton tee, screen printed or embroidered with your logo."
      },
      {
        ...base,
        noun: "Heavyweight Pullover Hoodie",
        price: 32,
        weight: "medium",
        options: "size_colour",
        imprint: "apparel",
        blurb: "Brushed-back fleece hoodie with a lined hood, embroidered with your logo."
      },
      {
        ...base,
        noun: "Performance Polo",
        price: 21,
        weight: "light",
        options: "size_colour",
        imprint: "apparel",
        blurb: "Moisture-wicking pique polo with your logo on the chest or sleeve."
      },
      {
        ...base,
        noun: "Soft-Shell Jacket",
        price: 48,
        weight: "heavy",
        options: "size_colour",
        imprint: "apparel",
        blurb: "Water-resistant soft-shell with a fleece lining, embroidered with your logo."
      },
      {
        ...base,
        noun: "Twill Dad Cap",
        price: 11,
        weight: "light",
        options: "colour",
        imprint: "headwear",
        blurb: "Unstructured cotton twill cap with an adjustable strap, embroidered with your logo."
      }
    ]
  },
  {
    category: "drinkware",
    items: [
      {
        ...base,
        noun: "Insulated Tumbler 20 oz",
        price: 18,
        weight: "light",
        options: "colour",
        imprint: "drinkware",
        blurb: "Double-wall steel tumbler with a slide lid, laser etched or printed with your logo."
      },
      {
        ...base,
        noun: "Enamel Camp Mug",
        price: 9,
        weight: "light",
        options: "colour",
        imprint: "drinkware",
        blurb: "Enamelled steel mug with a rolled rim, printed with your logo."
      },
      {
        ...base,
        noun: "Vacuum Bottle 500 ml",
        price: 16,
        weight: "light",
        options: "colour",
        imprint: "drinkware",
        blurb: "Keeps drinks cold for a day, laser etched with your logo."
      },
      {
        ...base,
        noun: "Glass Water Bottle",
        price: 12,
        weight: "light",
        options: "colour",
        imprint: "drinkware",
        blurb: "Borosilicate bottle in a silicone sleeve that carries your logo."
      },
      {
        ...base,
        noun: "Stoneware Mug 14 oz",
        price: 8,
        weight: "light",
        options: "colour",
        imprint: "drinkware",
        blurb: "A sturdy glazed mug, printed with your logo."
      }
    ]
  },
  {
    category: "outdoor",
    items: [
      {
        ...base,
        noun: "Recycled Canvas Tote",
        price: 7,
        weight: "light",
        options: "colour",
        imprint: "bags",
        blurb: "Recycled cotton canvas tote with long handles, printed with your logo."
      },
      {
        ...base,
        noun: "Commuter Laptop Backpack",
        price: 38,
        weight: "medium",
        options: "colour",
        imprint: "bags",
        blurb: "Padded 16-inch laptop sleeve and a luggage strap, with your logo on the front."
      },
      {
        ...base,
        noun: "Zip Pouch",
        price: 6,
        weight: "light",
        options: "colour",
        imprint: "bags",
        blurb: "A zipped pouch for cables or pens, printed with your logo."
      },
      {
        ...base,
        noun: "Carry-On Duffel",
        price: 45,
        weight: "heavy",
        options: "colour",
        imprint: "bags",
        blurb: "Water-resistant duffel with a shoe pocket, with your logo on the side panel."
      },
      {
        ...base,
        noun: "Drawstring Sport Pack",
        price: 5,
        weight: "light",
        options: "colour",
        imprint: "bags",
        blurb: "Lightweight drawstring pack, printed with your logo."
      }
    ]
  },
  {
    category: "stationery",
    items: [
      {
        ...base,
        noun: "Hardcover Journal A5",
        price: 11,
        weight: "light",
        options: "colour",
        imprint: "stationery",
        blurb: "Lay-flat journal with a ribbon marker, debossed or foiled with your logo."
      },
      {
        ...base,
        noun: "Spiral Notebook",
        price: 5,
        weight: "light",
        options: "colour",
        imprint: "stationery",
        blurb: "Wire-bound ruled notebook with a card cover printed with your logo."
      },
      {
        ...base,
        noun: "Metal Ballpoint Pen",
        price: 3.5,
        weight: "light",
        options: "colour",
        imprint: "stationery",
        blurb: "Aluminium twist pen with black ink, laser etched with your logo."
      },
      {
        ...base,
        noun: "Sticky Note Cube",
        price: 6,
        weight: "light",
        imprint: "stationery",
        blurb: "Five hundred sticky notes with your logo printed on every side of the cube."
      },
      {
        ...base,
        noun: "Desk Notepad Set",
        price: 7,
        weight: "light",
        imprint: "stationery",
        blurb: "Three tear-off notepads headed with your logo."
      }
    ]
  }
]
