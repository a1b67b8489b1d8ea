import { Schema } from "effect"

/**
 * What a buyer may or must specify to personalize a variant (docs/catalog.md, "Personalization"): a logo's
 * placement and imprint colour on a swag base product, a line of text, an engraving. Stored with the variant
 * (`variants.personalization`); a variant that takes none has `null`. A variant requires personalization
 * (`personalizationRequired` on `/v1`) exactly when one of its fields is required.
 */

/** Pick one of `choices` (a logo placement, an imprint colour). */
export const ChoiceField = Schema.Struct({
  name: Schema.String,
  label: Schema.String,
  type: Schema.Literal("choice"),
  required: Schema.Boolean,
  choices: Schema.Array(Schema.String)
})

/** Free text of at most `maxLength` characters (a text line under the logo, an engraving). */
export const TextField = Schema.Struct({
  name: Schema.String,
  label: Schema.String,
  type: Schema.Literal("text"),
  required: Schema.Boolean,
  maxLength: Schema.Int
})

export const PersonalizationField = Schema.Union(ChoiceField, TextField)
export type PersonalizationField = typeof PersonalizationField.Type

export const Personalization = Schema.Struct({ fields: Schema.Array(PersonalizationField) })
export type Personalization = typeof Personalization.Type

/** Whether an order of the variant must carry personalization values. */
export const personalizationRequired = (personalization: Personalization | null): boolean =>
  personalization?.fields.some((field) => field.required) ?? false
