import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Schema } from "effect"
import giftSchema from "../../../docs/extensions/gift.schema.json" with { type: "json" }
import { ACP_SUPPORTED_VERSIONS, ACP_VERSION, AcpCheckoutSession } from "../../domain/checkout/Acp.js"
import { AcpWebhookEndpoint, type AcpWebhookEndpointRecord } from "../../domain/checkout/AcpOrders.js"
import { DelegatePaymentRequest } from "../../domain/checkout/AcpPayments.js"
import {
  AcpApiVersionMissing,
  AcpApiVersionUnsupported,
  IdempotencyKeyRequired,
  InvalidCard
} from "../../domain/checkout/Errors.js"
import { FieldIssue } from "../../domain/platform/Errors.js"
import { formatPath, plainIssues } from "../../domain/platform/IssueMessages.js"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { Pricing } from "../../services/catalog/Pricing.js"
import { AcpIdempotency } from "../../services/checkout/AcpIdempotency.js"
import { giftExtension, presentSession } from "../../services/checkout/AcpPresent.js"
import { AcpSessions, type AcpSessionView } from "../../services/checkout/AcpSessions.js"
import { AcpVaultTokens } from "../../services/checkout/AcpVaultTokens.js"
import { AcpWebhooks } from "../../services/checkout/AcpWebhooks.js"
import { CheckoutPresenter } from "../../services/checkout/Checkouts.js"
import { Bearers } from "../../services/identity/Bearers.js"
import { Api } from "../Api.js"
import { bearerTokenOf, CurrentUser } from "../identity/Agent.js"
import { keyedAnswer } from "../ProtocolAnswers.js"
import { AcpBearer, AcpVersion } from "./AcpApi.js"

/** The scope every `/acp` operation (and ACP tool on `/mcp`) needs: each may lead to a purchase for the signed-in person. */
export const ACP_SCOPE = "orders:write" as const

/**
 * A request's protocol version (the `API-Version` header, or `meta.api_version` over MCP): one of those served;
 * missing or unsupported is the protocol's 400 with `supported_versions`.
 */
export const checkAcpVersion = (
  version: string | undefined
): Effect.Effect<void, AcpApiVersionMissing | AcpApiVersionUnsupported> => {
  const supportedVersions = [...ACP_SUPPORTED_VERSIONS]
  if (version === undefined || version.trim() === "") {
    return Effect.fail(
      new AcpApiVersionMissing({
        message: `The API-Version header is required; this server supports ${supportedVersions.join(", ")}.`,
        supportedVersions
      })
    )
  }
  if (!supportedVersions.includes(version.trim() as (typeof ACP_SUPPORTED_VERSIONS)[number])) {
    return Effect.fail(
      new AcpApiVersionUnsupported({
        message: `API version '${version}' is not supported; this server supports ${supportedVersions.join(", ")}.`,
        supportedVersions
      })
    )
  }
  return Effect.void
}

/** `API-Version`: one of the versions served. */
export const AcpVersionLive = Layer.succeed(
  AcpVersion,
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => checkAcpVersion(request.headers["api-version"]))
)

/** The bearer token of the signed-in person, with `orders:write`, as on `/v1` (src/http/identity/BearerLive.ts). */
export const AcpBearerLive = Layer.effect(
  AcpBearer,
  Effect.gen(function* () {
    const bearers = yield* Bearers
    return {
      bearer: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          bearers.authenticateFor(bearerTokenOf(request.headers.authorization), ACP_SCOPE)
        )
    }
  })
)

const encodeSession = Schema.encodeSync(AcpCheckoutSession)

/** A session as the protocol's CheckoutSession (JSON), its `continue_url` the hosted page of its checkout. */
export const sessionPresenter = Effect.gen(function* () {
  const presenter = yield* CheckoutPresenter
  const baseUrl = yield* PublicUrl
  return (view: AcpSessionView) =>
    encodeSession(
      presentSession(
        baseUrl,
        view,
        view.checkout === undefined ? null : presenter.checkout(view.checkout.row, view.checkout.items).paymentUrl
      )
    )
})

const DiscoveryLive = HttpApiBuilder.group(Api, "acpDiscovery", (handlers) =>
  Effect.gen(function* () {
    const baseUrl = yield* PublicUrl
    const pricing = yield* Pricing
    const gift = giftExtension(baseUrl)
    return handlers.handle("acpDiscovery", () =>
      Effect.map(pricing.reference(), (reference) =>
        HttpServerResponse.unsafeJson(
          {
            protocol: {
              name: "acp",
              version: ACP_VERSION,
              supported_versions: [...ACP_SUPPORTED_VERSIONS],
              documentation_url: `${baseUrl}/docs`
            },
            api_base_url: `${baseUrl}/acp`,
            // "mcp": the binding's five tools on `/mcp` (src/http/mcp/AcpTools.ts).
            transports: ["rest", "mcp"],
            capabilities: {
              services: ["checkout", "delegate_payment"],
              // Discovery names an extension and its schema; a session that declares it says what it extends.
              extensions: [{ name: gift.name, schema: gift.schema }],
              supported_currencies: [
                ...new Set([...reference.country.values()].map((country) => country.currency.toLowerCase()))
              ].sort(),
              supported_locales: [...new Set([...reference.country.values()].map((country) => country.locale))].sort()
            }
          },
          // The protocol's recommended minimum: the document changes with a release, not per request.
          { headers: { "cache-control": "public, max-age=3600" } }
        )
      )
    )
  })
)

/** The gift extension's schema (docs/extensions/gift.schema.json); that of one version never changes. */
const ExtensionsLive = HttpApiBuilder.group(Api, "acpExtensions", (handlers) =>
  handlers.handle("acpGiftExtensionSchema", () =>
    Effect.succeed(HttpServerResponse.unsafeJson(giftSchema, { headers: { "cache-control": "public, max-age=86400" } }))
  )
)

/** Echoes the request's `Request-Id`, as the protocol asks. */
const echoed = (request: HttpServerRequest.HttpServerRequest): Record<string, string> => {
  const id = request.headers["request-id"]
  return id === undefined ? {} : { "request-id": id }
}

/** A POST under the protocol's idempotency (`keyedAnswer`), its `Idempotency-Key` required. */
const keyedPost = <E, R>(idempotency: AcpIdempotency, status: number, operation: Effect.Effect<unknown, E, R>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const key = request.headers["idempotency-key"]
    if (key === undefined || key === "") {
      return yield* new IdempotencyKeyRequired({
        message: "Idempotency-Key header is required on all POST requests"
      })
    }
    const body = yield* Effect.orDie(request.json)
    const { user } = yield* CurrentUser
    const answered = yield* keyedAnswer(
      idempotency,
      { userId: user.id, endpoint: `POST ${new URL(request.url, "http://ribbon").pathname}`, key, body },
      status,
      operation
    )
    return HttpServerResponse.unsafeJson(answered.body, {
      status: answered.status,
      headers: {
        "idempotency-key": key,
        ...(answered.replayed ? { "idempotent-replayed": "true" } : {}),
        ...echoed(request)
      }
    })
  })

const decodeDelegation = Schema.decodeUnknown(DelegatePaymentRequest, { errors: "all" })

/** Ribbon as the PSP: the card tokenized by the payment simulator; the body decoded here, a bad field `invalid_card`. */
const DelegatePaymentLive = HttpApiBuilder.group(Api, "acpDelegatePayment", (handlers) =>
  Effect.gen(function* () {
    const idempotency = yield* AcpIdempotency
    const vaultTokens = yield* AcpVaultTokens
    return handlers.handle("delegatePayment", ({ payload, headers }) =>
      Effect.gen(function* () {
        const { user } = yield* CurrentUser
        const request = yield* decodeDelegation(payload).pipe(
          Effect.mapError((error) => {
            const issues = plainIssues(error.issue).map(({ path, message }) =>
              FieldIssue.make({ path: formatPath(path), message })
            )
            return new InvalidCard({
              message: issues.map((issue) => `${issue.path}: ${issue.message}`).join("; "),
              errors: issues
            })
          })
        )
        return yield* keyedPost(idempotency, 201, vaultTokens.delegate(user, request, headers["idempotency-key"] ?? ""))
      })
    )
  })
)

const SessionsLive = HttpApiBuilder.group(Api, "acpCheckoutSessions", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* AcpSessions
    const idempotency = yield* AcpIdempotency
    const present = yield* sessionPresenter

    const keyed = <E, R>(status: number, operation: Effect.Effect<AcpSessionView, E, R>) =>
      keyedPost(idempotency, status, Effect.map(operation, present))

    return handlers
      .handle("createCheckoutSession", ({ payload }) =>
        Effect.flatMap(CurrentUser, ({ user, clientId }) => keyed(201, sessions.create(user, payload, clientId)))
      )
      .handle("updateCheckoutSession", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, ({ user }) => keyed(200, sessions.update(user, path.checkout_session_id, payload)))
      )
      .handle("getCheckoutSession", ({ path }) =>
        Effect.gen(function* () {
          const { user } = yield* CurrentUser
          const request = yield* HttpServerRequest.HttpServerRequest
          const view = yield* sessions.get(user.id, path.checkout_session_id)
          return HttpServerResponse.unsafeJson(present(view), { headers: echoed(request) })
        })
      )
      .handle("completeCheckoutSession", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          keyed(200, sessions.complete(user, path.checkout_session_id, payload.buyer, payload.payment_data))
        )
      )
      .handle("cancelCheckoutSession", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => keyed(200, sessions.cancel(user.id, path.checkout_session_id)))
      )
  })
)

const encodeEndpoint = Schema.encodeSync(AcpWebhookEndpoint)

/** An order webhook endpoint as the protocol's line shows it; `secret` only when it was just made. */
const presentEndpoint = (endpoint: AcpWebhookEndpointRecord, secret?: string) =>
  encodeEndpoint({
    id: endpoint.id,
    url: endpoint.url,
    events: ["order_create", "order_update"],
    created_at: endpoint.createdAt.toISOString(),
    ...(secret === undefined ? {} : { secret })
  })

/** The platform's order webhook endpoints: those of the bearer token's OAuth client. */
const WebhookEndpointsLive = HttpApiBuilder.group(Api, "acpWebhookEndpoints", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* AcpWebhooks
    const idempotency = yield* AcpIdempotency
    return handlers
      .handle("createAcpWebhookEndpoint", ({ payload }) =>
        Effect.flatMap(CurrentUser, ({ clientId }) =>
          keyedPost(
            idempotency,
            201,
            Effect.map(webhooks.register(clientId, payload.url), ({ endpoint, secret }) =>
              presentEndpoint(endpoint, secret)
            )
          )
        )
      )
      .handle("listAcpWebhookEndpoints", () =>
        Effect.flatMap(CurrentUser, ({ clientId }) =>
          Effect.map(webhooks.list(clientId), (endpoints) => ({
            data: endpoints.map((endpoint) => presentEndpoint(endpoint))
          }))
        )
      )
      .handle("deleteAcpWebhookEndpoint", ({ path }) =>
        Effect.flatMap(CurrentUser, ({ clientId }) => webhooks.remove(clientId, path.webhook_endpoint_id))
      )
  })
)

/**
 * The discovery document, the extensions' schemas, the checkout sessions, delegated payment and the order webhook
 * endpoints, with their middleware (Pricing: the one Quotes uses).
 */
export const AcpLive = Layer.mergeAll(
  DiscoveryLive,
  ExtensionsLive,
  SessionsLive,
  DelegatePaymentLive,
  WebhookEndpointsLive
).pipe(Layer.provide([AcpVersionLive, AcpBearerLive, Pricing.Default]))
