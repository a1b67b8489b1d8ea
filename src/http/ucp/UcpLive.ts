import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { UcpAgentMissing } from "../../domain/checkout/Errors.js"
import {
  UCP_CHECKOUT,
  UCP_FULFILLMENT,
  UCP_ORDER,
  UCP_SHOPPING,
  UCP_VERSION,
  type UcpCheckoutRequest
} from "../../domain/checkout/Ucp.js"
import { ucpAgentProfile } from "../../domain/checkout/UcpPlatformProfile.js"
import type { User } from "../../domain/identity/Users.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { Pricing } from "../../services/catalog/Pricing.js"
import { AcpSessions, type AcpSessionView } from "../../services/checkout/AcpSessions.js"
import { AgentOrders } from "../../services/checkout/AgentOrders.js"
import { CheckoutPresenter } from "../../services/checkout/Checkouts.js"
import { Bearers } from "../../services/identity/Bearers.js"
import { Api } from "../Api.js"
import { presentSession } from "../acp/present.js"
import { bearerTokenOf, CurrentUser } from "../identity/Agent.js"
import { buyerOf, countryOf, detailsOf, itemsOf, lineIndexOf, presentCheckout, presentOrder } from "./present.js"
import { signedJson, UcpSignatureLive } from "./signatures.js"
import { UcpAgent, UcpBearer } from "./UcpApi.js"
import { UcpSigningKey } from "./UcpSigningKey.js"

/** The scope every `/ucp` operation needs, as on `/acp`: each may lead to a purchase for the signed-in person. */
const UCP_SCOPE = "orders:write"

/** `UCP-Agent: profile="…"`: required on every request; the profile is fetched only to check a signature (decision 0087). */
export const UcpAgentLive = Layer.succeed(
  UcpAgent,
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (ucpAgentProfile(request.headers["ucp-agent"] ?? "") === undefined) {
      return yield* new UcpAgentMissing({
        message: 'The UCP-Agent header must name the platform\'s profile: profile="https://platform.example/profile".'
      })
    }
  })
)

/** The bearer token of the signed-in person, with `orders:write`, as on `/acp`. */
export const UcpBearerLive = Layer.effect(
  UcpBearer,
  Effect.gen(function* () {
    const bearers = yield* Bearers
    return {
      bearer: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          bearers.authenticateFor(bearerTokenOf(request.headers.authorization), UCP_SCOPE)
        )
    }
  })
)

const ProfileLive = HttpApiBuilder.group(Api, "ucpProfile", (handlers) =>
  Effect.gen(function* () {
    const baseUrl = yield* PublicUrl
    const key = yield* UcpSigningKey
    const spec = (page: string) => `https://ucp.dev/${UCP_VERSION}/specification/${page}`
    const schema = (path: string) => `https://ucp.dev/${UCP_VERSION}/${path}`
    const profile = {
      ucp: {
        version: UCP_VERSION,
        services: {
          // REST only: Ribbon's `/mcp` serves its own tools, not UCP's checkout tools.
          [UCP_SHOPPING]: [
            {
              version: UCP_VERSION,
              spec: spec("overview"),
              transport: "rest",
              endpoint: `${baseUrl}/ucp`,
              schema: schema("services/shopping/rest.openapi.json")
            }
          ]
        },
        capabilities: {
          [UCP_CHECKOUT]: [
            { version: UCP_VERSION, spec: spec("checkout"), schema: schema("schemas/shopping/checkout.json") }
          ],
          [UCP_FULFILLMENT]: [
            {
              version: UCP_VERSION,
              spec: spec("fulfillment"),
              schema: schema("schemas/shopping/fulfillment.json"),
              extends: UCP_CHECKOUT
            }
          ],
          [UCP_ORDER]: [{ version: UCP_VERSION, spec: spec("order"), schema: schema("schemas/shopping/order.json") }]
        },
        payment_handlers: {}
      },
      signing_keys: [key.publicJwk]
    }
    return handlers.handle("ucpProfile", () =>
      Effect.succeed(HttpServerResponse.unsafeJson(profile, { headers: { "cache-control": "public, max-age=3600" } }))
    )
  })
)

/** The session as `/acp` shows it, with its checkout's hosted payment page: what UCP's objects are made from. */
const sessionOf = (baseUrl: string, presenter: CheckoutPresenter["Type"], view: AcpSessionView) =>
  presentSession(
    baseUrl,
    view,
    view.checkout === undefined ? null : presenter.checkout(view.checkout.row, view.checkout.items).paymentUrl
  )

const CheckoutsLive = HttpApiBuilder.group(Api, "ucpCheckoutSessions", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* AcpSessions
    const presenter = yield* CheckoutPresenter
    const pricing = yield* Pricing
    const baseUrl = yield* PublicUrl

    const key = yield* UcpSigningKey

    const checkoutOf = (view: AcpSessionView) => presentCheckout(sessionOf(baseUrl, presenter, view))
    const present = (status: number) => (view: AcpSessionView) =>
      HttpServerResponse.unsafeJson(checkoutOf(view), { status })

    /** An item AcpSessions refuses is named by its UCP line (`line_items[1].item.id`), not its ACP item. */
    const byLine =
      (request: UcpCheckoutRequest) =>
      <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | InvalidRequest, R> =>
        Effect.mapError(self, (failure) => {
          if (!(failure instanceof InvalidRequest)) return failure
          const item = /^line_items\[(\d+)\]\.id$/.exec(failure.errors[0]?.path ?? "")
          if (item === null) return failure
          return InvalidRequest.field(`line_items[${lineIndexOf(request, Number(item[1]))}].item.id`, failure.message)
        })

    /** The currency of the delivery country (the user's own until an address names one), as ACP's create asks. */
    const currencyOf = (user: User, request: UcpCheckoutRequest) =>
      Effect.map(
        pricing.reference(),
        (reference) => reference.country.get(countryOf(request) ?? user.defaultCountry)?.currency ?? "USD"
      )

    return handlers
      .handle("ucpCreateCheckout", ({ payload }) =>
        Effect.gen(function* () {
          const { user } = yield* CurrentUser
          const buyer = buyerOf(payload.buyer)
          const details = detailsOf(payload)
          const view = yield* sessions
            .create(
              user,
              {
                line_items: itemsOf(payload),
                currency: yield* currencyOf(user, payload),
                capabilities: {},
                ...(buyer === undefined ? {} : { buyer }),
                ...(details === null ? {} : { fulfillment_details: details })
              },
              null
            )
            .pipe(byLine(payload))
          return present(201)(view)
        })
      )
      .handle("ucpGetCheckout", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => Effect.map(sessions.get(user.id, path.id), present(200)))
      )
      .handle("ucpUpdateCheckout", ({ path, payload }) =>
        Effect.gen(function* () {
          const { user } = yield* CurrentUser
          // A PUT replaces the checkout: what it leaves out is cleared.
          const view = yield* sessions
            .update(user, path.id, {
              line_items: itemsOf(payload),
              buyer: buyerOf(payload.buyer) ?? null,
              fulfillment_details: detailsOf(payload)
            })
            .pipe(byLine(payload))
          return present(200)(view)
        })
      )
      .handle("ucpCompleteCheckout", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          // UCP carries no vault token (the person pays at continue_url), so no token can be refused here.
          sessions.complete(user, path.id, undefined, {}).pipe(
            Effect.catchTags({
              PaymentTokenDeclined: Effect.die,
              PaymentTokenExpired: Effect.die,
              PaymentTokenExceeded: Effect.die,
              PaymentTokenUsed: Effect.die
            }),
            // The answer the binding RECOMMENDS signing: the platform can prove what the order was.
            Effect.flatMap((view) => signedJson(key, checkoutOf(view), 200))
          )
        )
      )
      .handle("ucpCancelCheckout", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => Effect.map(sessions.cancel(user.id, path.id), present(200)))
      )
  })
)

const OrdersLive = HttpApiBuilder.group(Api, "ucpOrders", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* AcpSessions
    const agentOrders = yield* AgentOrders
    const presenter = yield* CheckoutPresenter
    const baseUrl = yield* PublicUrl
    return handlers.handle("ucpGetOrder", ({ path }) =>
      Effect.gen(function* () {
        const { user } = yield* CurrentUser
        const view = yield* sessions.order(user.id, path.id)
        // The Ribbon orders placed so far, one per item (none while the checkout is still being placed).
        const orders = yield* Effect.forEach(
          view.checkout!.items.flatMap((item) => (item.orderId === null ? [] : [item.orderId])),
          (orderId) => Effect.map(agentOrders.get(user.id, orderId), (order) => order.row)
        ).pipe(Effect.catchTag("OrderNotFound", Effect.die))
        return presentOrder(sessionOf(baseUrl, presenter, view), orders)
      })
    )
  })
)

/** The profile and the checkout and order bindings, with their middleware and the signing key. */
export const UcpLive = Layer.mergeAll(ProfileLive, CheckoutsLive, OrdersLive).pipe(
  Layer.provide([UcpAgentLive, UcpBearerLive, UcpSignatureLive, UcpSigningKey.layer, Pricing.Default])
)
