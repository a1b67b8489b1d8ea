import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { LastEventId, PathId } from "../../domain/checkout/Checkout.js"
import { showsErrorPages } from "../OpenApiDocument.js"

/**
 * The hosted payment page (docs/decisions/0026-hosted-payment-page.md; docs/checkout.md): the person opens the
 * checkout's `paymentUrl` (`/pay/{checkoutId}?t={token}`) in a browser and pays by card. The token is the only key;
 * a wrong one gets the same page as an unknown checkout. The agent never sees card data.
 */

const Html = HttpApiSchema.Text({ contentType: "text/html" })

/** Taken as it comes: any wrong token is answered by the not-found page, never by a 400. */
const Token = Schema.String.pipe(Schema.maxLength(128))

const Path = Schema.Struct({ checkoutId: PathId })

export const PayForm = Schema.Struct({
  t: Token,
  number: Schema.String.pipe(Schema.maxLength(64)),
  expiry: Schema.String.pipe(Schema.maxLength(16)),
  cvc: Schema.String.pipe(Schema.maxLength(8)),
  name: Schema.String.pipe(Schema.maxLength(200))
})

/** The statuses of the pages for a bad form, and for unknown, paid, expired and cancelled links (`payProblems`). */
const problemPages = showsErrorPages([400, 404, 409, 410])

/**
 * The payment form's answers besides: the form again after a declined card (402) or invalid card details
 * (422), or after too many declines, untried, with `Retry-After` (429).
 */
const paymentPages = showsErrorPages([400, 402, 404, 409, 410, 422, 429])

export class PayApi extends HttpApiGroup.make("pay")
  .add(
    HttpApiEndpoint.get("payPage", "/pay/:checkoutId")
      .setPath(Path)
      .setUrlParams(Schema.Struct({ t: Schema.optionalWith(Token, { default: () => "" }) }))
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "The hosted payment page (browser): items, all-in total, recipient, card form")
      .annotate(OpenApi.Transform, problemPages)
  )
  .add(
    HttpApiEndpoint.post("pay", "/pay/:checkoutId")
      .setPath(Path)
      .setPayload(HttpApiSchema.withEncoding(PayForm, { kind: "UrlParams" }))
      .addSuccess(Html)
      .annotate(OpenApi.Summary, "The card form of the payment page")
      .annotate(OpenApi.Transform, paymentPages)
  )
  .add(
    HttpApiEndpoint.get("payEvents", "/pay/:checkoutId/events")
      .setPath(Path)
      .setUrlParams(Schema.Struct({ t: Schema.optionalWith(Token, { default: () => "" }) }))
      .setHeaders(LastEventId)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .annotate(OpenApi.Summary, "The checkout's events for the payment page's live status (server-sent events)")
      .annotate(OpenApi.Transform, problemPages)
  )
  .annotate(OpenApi.Title, "Payment page")
  .annotate(OpenApi.Description, "The hosted payment page the user opens from a checkout's paymentUrl.") {}
