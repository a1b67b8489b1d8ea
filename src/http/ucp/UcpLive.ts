import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { UcpAgentMissing, UcpIdempotencyConflict } from "../../domain/checkout/Errors.js"
import {
  UCP_CHECKOUT,
  UCP_FULFILLMENT,
  UCP_ORDER,
  UCP_SHOPPING,
  UCP_VERSION,
  type UcpCheckout
} from "../../domain/checkout/Ucp.js"
import { ucpAgentProfile } from "../../domain/checkout/UcpPlatformProfile.js"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { Pricing } from "../../services/catalog/Pricing.js"
import { AcpIdempotency } from "../../services/checkout/AcpIdempotency.js"
import { AcpSessions } from "../../services/checkout/AcpSessions.js"
import { AgentOrders } from "../../services/checkout/AgentOrders.js"
import { CheckoutPresenter } from "../../services/checkout/Checkouts.js"
import { UcpOrders } from "../../services/checkout/UcpOrders.js"
import { paymentHandlersOf } from "../../services/checkout/UcpPresent.js"
import { Bearers } from "../../services/identity/Bearers.js"
import { UcpSigningKey } from "../../services/platform/UcpSigningKey.js"
import { Api } from "../Api.js"
import { bearerTokenOf, CurrentUser } from "../identity/Agent.js"
import { keyedAnswer } from "../ProtocolAnswers.js"
import { makeUcpCheckouts } from "./operations.js"
import { signedJson, UcpSignatureLive } from "./signatures.js"
import { UcpAgent, UcpBearer } from "./UcpApi.js"

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
          // REST under `/ucp`; MCP on `/mcp`, whose five checkout tools bind the same operations (UcpTools).
          [UCP_SHOPPING]: [
            {
              version: UCP_VERSION,
              spec: spec("overview"),
              transport: "rest",
              endpoint: `${baseUrl}/ucp`,
              schema: schema("services/shopping/rest.openapi.json")
            },
            {
              version: UCP_VERSION,
              spec: spec("overview"),
              transport: "mcp",
              endpoint: `${baseUrl}/mcp`,
              schema: schema("services/shopping/mcp.openrpc.json")
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
        payment_handlers: paymentHandlersOf(baseUrl)
      },
      signing_keys: [key.publicJwk]
    }
    return handlers.handle("ucpProfile", () =>
      Effect.succeed(HttpServerResponse.unsafeJson(profile, { headers: { "cache-control": "public, max-age=3600" } }))
    )
  })
)

/** A write's body as fingerprinted: its JSON (none is `{}`; cancel takes no body, so any text is taken as given). */
const bodyOf = (text: string): unknown => {
  if (text === "") return {}
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const CheckoutsLive = HttpApiBuilder.group(Api, "ucpCheckoutSessions", (handlers) =>
  Effect.gen(function* () {
    const checkouts = yield* makeUcpCheckouts
    const idempotency = yield* AcpIdempotency

    const signingKey = yield* UcpSigningKey

    /**
     * A write's answer: with an `Idempotency-Key`, under the protocol's idempotency (the store `/acp` uses, keyed by
     * method and path): the first answer, a 4xx included, is replayed for the same body; another body is a 409.
     * With `signed`, a successful answer is signed with Ribbon's UCP key (what the binding recommends for complete:
     * the platform can prove what the order was), a replay as well.
     */
    const keyed = <E, R>(
      status: number,
      key: string | undefined,
      operation: Effect.Effect<UcpCheckout, E, R>,
      signed = false
    ) =>
      Effect.gen(function* () {
        const respond = (body: unknown, status: number, headers: Record<string, string> = {}) =>
          signed && status < 300
            ? Effect.map(signedJson(signingKey, body, status), HttpServerResponse.setHeaders(headers))
            : Effect.succeed(HttpServerResponse.unsafeJson(body, { status, headers }))
        if (key === undefined) return yield* respond(yield* operation, status)
        const request = yield* HttpServerRequest.HttpServerRequest
        const text = yield* Effect.orDie(request.text)
        const { user } = yield* CurrentUser
        const answered = yield* keyedAnswer(
          idempotency,
          {
            userId: user.id,
            endpoint: `${request.method} ${new URL(request.url, "http://ribbon").pathname}`,
            key,
            body: bodyOf(text)
          },
          status,
          operation,
          "ucp"
        ).pipe(
          Effect.catchTag("IdempotencyKeyReused", (e) =>
            Effect.fail(new UcpIdempotencyConflict({ message: e.message }))
          )
        )
        return yield* respond(
          answered.body,
          answered.status,
          answered.replayed ? { "idempotent-replayed": "true" } : {}
        )
      })

    return handlers
      .handle("ucpCreateCheckout", ({ payload, headers }) =>
        Effect.gen(function* () {
          const { user } = yield* CurrentUser
          const request = yield* HttpServerRequest.HttpServerRequest
          // UcpAgentLive has checked it names a profile.
          const profileUrl = ucpAgentProfile(request.headers["ucp-agent"] ?? "")!
          return yield* keyed(201, headers["idempotency-key"], checkouts.create(user, payload, profileUrl))
        })
      )
      .handle("ucpGetCheckout", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          Effect.map(checkouts.get(user, path.id), (checkout) => HttpServerResponse.unsafeJson(checkout))
        )
      )
      .handle("ucpUpdateCheckout", ({ path, payload, headers }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          keyed(200, headers["idempotency-key"], checkouts.update(user, path.id, payload))
        )
      )
      .handle("ucpCompleteCheckout", ({ path, payload, headers }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          keyed(200, headers["idempotency-key"], checkouts.complete(user, path.id, payload.payment), true)
        )
      )
      .handle("ucpCancelCheckout", ({ path, headers }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          keyed(200, headers["idempotency-key"], checkouts.cancel(user, path.id))
        )
      )
  })
)

const OrdersLive = HttpApiBuilder.group(Api, "ucpOrders", (handlers) =>
  Effect.gen(function* () {
    const orders = yield* UcpOrders
    return handlers.handle("ucpGetOrder", ({ path }) =>
      Effect.flatMap(CurrentUser, ({ user }) => orders.get(user.id, path.id))
    )
  })
)

/** The profile and the checkout and order bindings, with their middleware. */
export const UcpLive = Layer.mergeAll(ProfileLive, CheckoutsLive, OrdersLive).pipe(
  Layer.provide([UcpAgentLive, UcpBearerLive, UcpSignatureLive, Pricing.Default])
)
