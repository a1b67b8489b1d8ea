import type { IncomingMessage } from "node:http"
import type { TLSSocket } from "node:tls"
import { type HttpApi, HttpApp, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, FiberRef, HashMap, Layer, Option, Redacted, Schema } from "effect"
import { CompanyId, RequestSource } from "../../domain/company/Company.js"
import { ApiKeyMissing, CompanyMismatch, MtlsRequired, PermissionDenied } from "../../domain/company/Errors.js"
import { InvalidRequest, RateLimited } from "../../domain/platform/Errors.js"
import { Companies } from "../../services/company/Companies.js"
import { KeyStore } from "../../services/company/KeyStore.js"
import { RateLimits, rateLimitHeaders } from "../../services/platform/RateLimits.js"
import { ApiKeyAuthV2, ApiKeyAuthV3, type Caller, type OperationPolicy, operationsOf } from "./ApiKeyAuth.js"

const isRequestSource = Schema.is(RequestSource)
const isCompanyId = Schema.is(CompanyId)

/** Whether the request arrived on the mutual-TLS listener with a client certificate it verified. */
const overMtls = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const socket = (request as unknown as { readonly source?: IncomingMessage }).source?.socket as TLSSocket | undefined
  return socket?.encrypted === true && socket.authorized === true
}

/**
 * The API-key middleware of both company lines, for `api` (the Ribbon API, or a test fixture). In order:
 * the key (401), the company's rate limits (429; the `RateLimit` headers go on every response), mTLS for
 * `enforceMtls` keys (403), `Request-Source` (400), the operation's permission (403), `companyId` (400/403)
 * and `Ribbon-Account-Id` (404, 403 across environments).
 */
export const makeApiKeyAuth = (api: HttpApi.HttpApi.Any) =>
  Effect.gen(function* () {
    const keys = yield* KeyStore
    const companies = yield* Companies
    const limits = yield* RateLimits
    const policies = new Map<string, OperationPolicy>(
      operationsOf(api).map((row) => [`${row.method} ${row.path}`, row])
    )

    return (presented: string) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const route = yield* HttpRouter.RouteContext
        const policy = policies.get(`${route.route.method} ${route.route.path}`)
        if (policy === undefined) return yield* Effect.dieMessage(`No Operation for ${route.route.path}`)

        if (presented === "") {
          return yield* new ApiKeyMissing({ message: "The X-Api-Key header is required." })
        }
        const { key, rateLimits } = yield* keys
          .authenticate(presented)
          .pipe(
            Effect.tapError((error) =>
              Effect.logDebug("API key refused").pipe(Effect.annotateLogs("reason", error._tag))
            )
          )
        // The rest of the request's logs and spans name the key by its id, never by its value.
        yield* FiberRef.update(FiberRef.currentLogAnnotations, (annotations) =>
          HashMap.set(HashMap.set(annotations, "apiKeyId", key.id as unknown), "companyId", key.companyId as unknown)
        )
        yield* Effect.annotateCurrentSpan({ "ribbon.api_key.id": key.id, "ribbon.company.id": key.companyId })
        yield* Effect.logDebug("API key accepted")

        const decision = yield* limits.consume(key.companyId, policy.rateClass, rateLimits)
        const headers = rateLimitHeaders(decision)
        yield* HttpApp.appendPreResponseHandler((_, response) =>
          Effect.succeed(HttpServerResponse.setHeaders(response, headers))
        )
        if (!decision.allowed) {
          return yield* new RateLimited({
            message: `Rate limit exceeded (${decision.binding.scope}); retry after ${decision.retryAfterSeconds} s.`,
            retryAfterSeconds: decision.retryAfterSeconds
          })
        }

        if (key.enforceMtls && !overMtls(request)) {
          return yield* new MtlsRequired({
            message:
              "This API key requires mutual TLS: call the mTLS root (/public-api on the mutual-TLS listener) with your client certificate."
          })
        }

        const source = request.headers["request-source"]
        if (source !== undefined && !isRequestSource(source)) {
          return yield* InvalidRequest.field(
            "Request-Source",
            `Unknown request source "${source}"; expected api_native, api_zapier, api_salesforce, api_ftp or api_make.`
          )
        }

        if (policy.permission !== null && !key.permissions.includes(policy.permission)) {
          return yield* new PermissionDenied({
            message: `This API key lacks the ${policy.permission} permission.`,
            permission: policy.permission
          })
        }

        const params = yield* HttpServerRequest.ParsedSearchParams
        const companyId = params.companyId
        if (companyId !== undefined) {
          if (typeof companyId !== "string" || !isCompanyId(companyId)) {
            return yield* InvalidRequest.field("companyId", "Expected a company id matching ^[A-Za-z0-9]{8,}$.")
          }
          if (companyId.toLowerCase() !== key.companyId) {
            return yield* new CompanyMismatch({ message: "companyId names a company other than this API key's." })
          }
        }

        const accountId = request.headers["ribbon-account-id"]
        const account =
          accountId === undefined ? Option.none() : Option.some(yield* companies.resolveAccount(key, accountId))

        return { key, account, requestSource: source ?? null } satisfies Caller
      })
  })

/**
 * Both lines' middleware layers for `api`; they need KeyStore, Companies and RateLimits. `bypass` skips
 * authentication and rate limiting and hands every request that caller: only `npm run bench:auth` uses it,
 * as the baseline the real middleware is measured against.
 */
export const apiKeyAuthLayers = (api: HttpApi.HttpApi.Any, options: { readonly bypass?: Caller } = {}) =>
  Layer.unwrapEffect(
    Effect.map(makeApiKeyAuth(api), (authenticate) => {
      const bypass = options.bypass
      const apiKey = (key: Redacted.Redacted<string>) =>
        bypass === undefined ? authenticate(Redacted.value(key)) : Effect.succeed(bypass)
      return Layer.mergeAll(
        Layer.succeed(ApiKeyAuthV2, { apiKey } as any),
        Layer.succeed(ApiKeyAuthV3, { apiKey } as any)
      )
    })
  )
