import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFound } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"
import { showsErrorPages } from "../OpenApiDocument.js"

/**
 * The gift page (docs/decisions/0048-gift-page-and-claims.md; docs/company-api.md "Claims, the gift page and
 * `POST /v2/orders`"): the link a recipient opens, in a browser. The token in the path is the only key; an unknown one
 * gets the page saying so, never a 400.
 */

const Html = HttpApiSchema.Text({ contentType: "text/html" })

const Path = Schema.Struct({ token: Schema.String.pipe(Schema.maxLength(128)) })

/** Taken as they come: the page answers for values it cannot use. */
const Text = Schema.String.pipe(Schema.maxLength(500))
const Country = Schema.optionalWith(Schema.String.pipe(Schema.maxLength(8)), { default: () => "" })

export const ClaimForm = Schema.Struct({
  variantId: Schema.optionalWith(Text, { default: () => "" }),
  productId: Schema.optionalWith(Text, { default: () => "" }),
  firstName: Schema.optionalWith(Text, { default: () => "" }),
  lastName: Schema.optionalWith(Text, { default: () => "" }),
  email: Schema.optionalWith(Text, { default: () => "" }),
  phone: Schema.optionalWith(Text, { default: () => "" }),
  address1: Schema.optionalWith(Text, { default: () => "" }),
  address2: Schema.optionalWith(Text, { default: () => "" }),
  city: Schema.optionalWith(Text, { default: () => "" }),
  state: Schema.optionalWith(Text, { default: () => "" }),
  zipcode: Schema.optionalWith(Text, { default: () => "" }),
  country: Country
})

/**
 * The thank-you note's form: judged by the Gifts service (docs/decisions/0070-gift-thank-you-notes.md), so any text
 * decodes and a refused one comes back on the page beside its field.
 */
export const ThankYouForm = Schema.Struct({ message: Schema.optionalWith(Schema.String, { default: () => "" }) })

/**
 * The language switcher's form (docs/decisions/0074-gift-page-languages.md): the language picked, and the gift page
 * to come back to. A language the page does not offer changes nothing.
 */
export const LanguageForm = Schema.Struct({
  language: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(16)), { default: () => "" }),
  back: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(2048)), { default: () => "" })
})

const pages = showsErrorPages([404, 410, 422])

/** The switcher's POST: answered 303 back to the page, with the language's cookie when it is one offered. */
const languageResponses = (operation: Record<string, any>): Record<string, any> => {
  operation.responses["303"] = {
    description: "Back to the gift page it was posted from (or the gift's link); the picked language's cookie set",
    headers: {
      Location: { schema: { type: "string" }, description: "The page to come back to, under /g/{token}" },
      "Set-Cookie": { schema: { type: "string" }, description: "ribbon_gift_language=<tag>; Path=/g" }
    }
  }
  return operation
}

/** The note's POST: a written note is answered 303 back to the gift page, a refused one with the page again. */
const noteResponses = (operation: Record<string, any>): Record<string, any> => {
  operation.responses["303"] = {
    description: "The note is written: back to the gift page, which shows it",
    headers: { Location: { schema: { type: "string" }, description: "/g/{token}?note=sent#thank-you" } }
  }
  return pages(operation)
}

/** Where a claimed gift's order stands: the shipment status and its words on the page. No personal data. */
export const GiftDeliveryStatus = Schema.Struct({
  shipmentStatus: Schema.String,
  label: Schema.String,
  final: Schema.Boolean.annotations({ description: "Nothing more will change: stop asking" })
})

export class GiftPageApi extends HttpApiGroup.make("giftPage")
  .add(
    HttpApiEndpoint.get("landing", "/g/:token")
      .setPath(Path)
      .setUrlParams(
        Schema.Struct({
          note: Schema.optional(Schema.String.pipe(Schema.maxLength(16))).annotations({
            description: "`sent` after a thank-you note was written: the claimed page says so once"
          })
        })
      )
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "The gift page (browser): the gift, the sender's note, where it goes")
      .annotate(OpenApi.Transform, pages)
  )
  .add(
    HttpApiEndpoint.get("choices", "/g/:token/choices")
      .setPath(Path)
      .setUrlParams(Schema.Struct({ country: Country }))
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "The gift page's choices within the budget in a country")
      .annotate(OpenApi.Transform, pages)
  )
  .add(
    HttpApiEndpoint.get("others", "/g/:token/others")
      .setPath(Path)
      .setUrlParams(Schema.Struct({ country: Country }))
      .addSuccess(Html)
      .annotate(
        OpenApi.Summary,
        "The gift page's other gifts within the same budget, for a product gift that may be swapped"
      )
      .annotate(OpenApi.Transform, pages)
  )
  .add(
    HttpApiEndpoint.get("choose", "/g/:token/choose")
      .setPath(Path)
      .setUrlParams(Schema.Struct({ productId: Schema.optionalWith(Text, { default: () => "" }), country: Country }))
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "The gift page's claim form for a chosen product")
      .annotate(OpenApi.Transform, pages)
  )
  .add(
    HttpApiEndpoint.get("status", "/g/:token/status")
      .setPath(Path)
      .addSuccess(GiftDeliveryStatus)
      .addError(lineError("v1", NotFound))
      .annotate(OpenApi.Summary, "A claimed gift's delivery, for the gift page to follow it live")
  )
  .add(
    HttpApiEndpoint.post("claim", "/g/:token/claim")
      .setPath(Path)
      .setPayload(HttpApiSchema.withEncoding(ClaimForm, { kind: "UrlParams" }))
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "The gift page's claim: the chosen variant sent to the address")
      .annotate(OpenApi.Transform, pages)
  )
  .add(
    HttpApiEndpoint.post("language", "/g/:token/language")
      .setPath(Path)
      .setPayload(HttpApiSchema.withEncoding(LanguageForm, { kind: "UrlParams" }))
      .addSuccess(Html)
      .annotate(
        OpenApi.Summary,
        "The gift page's language switcher: the picked language kept in a cookie (and for the gift's reminders)"
      )
      .annotate(OpenApi.Transform, languageResponses)
  )
  .add(
    HttpApiEndpoint.post("thankYou", "/g/:token/thank-you")
      .setPath(Path)
      .setPayload(HttpApiSchema.withEncoding(ThankYouForm, { kind: "UrlParams" }))
      .addSuccess(Html)
      .annotate(
        OpenApi.Summary,
        "The claimed gift's thank-you note to the sender: written, or changed within 24 hours; then back to the page"
      )
      .annotate(OpenApi.Transform, noteResponses)
  )
  .annotate(OpenApi.Title, "Gift page")
  .annotate(OpenApi.Description, "The page a gift's recipient opens from its link, to choose and claim it.") {}
