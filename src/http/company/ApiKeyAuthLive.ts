import type { IncomingMessage } from "node:http"
import type { TLSSocket } from "node:tls"
import {
  type HttpApi,
  type HttpApiGroup,
  HttpApp,
  HttpRouter,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Effect, FiberRef, HashMap, Layer, Option, Redacted, Schema } from "effect"
import { type Account, type ApiKeyRecord, CompanyId, RequestSource } from "../../domain/company/Company.js"
import { ApiKeyMissing, MtlsRequired } from "../../domain/company/Errors.js"
import { InvalidRequest, NotFound, RateLimited } from "../../domain/platform/Errors.js"
import { type AuthenticatedKey, KeyStore } from "../../services/company/KeyStore.js"
import { readModesOf } from "../../services/company/Masking.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { RateLimits, rateLimitHeaders } from "../../services/platform/RateLimits.js"
import { clientSource, makeAuthFailures } from "../AuthFailures.js"
import { actAs } from "../RequestActor.js"
import { ApiKeyAuthV2, ApiKeyAuthV3, type Caller, type OperationPolicy, operationsOf } from "./ApiKeyAuth.js"

const isRequestSource = Schema.is(RequestSource)
const isCompanyId = Schema.is(CompanyId)

/** Whether the request arrived on the mutual-TLS listener with a client certificate it verified. */
const overMtls = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const socket = (request as unknown as { readonly source?: IncomingMessage }).source?.socket as TLSSocket | undefined
  return socket?.encrypted === true && socket.authorized === true
}

/**
 * The API-key middleware of both company lines, for `api` (the Ribbon API, or a test fixture). Its steps, in
 * order: the key (401, or 429 after too many bad keys from the source), the company's rate limits (429; the
 * `RateLimit` headers go on every response), mTLS for `enforceMtls` keys (403), `Request-Source` (400), the
 * operation's permission (403), `companyId` (400/403), `Ribbon-Account-Id` (404, 403 across environments),
 * and for a sandbox control (`testKeysOnly`) a test key (404). The checks of access are the company Policy's
 * (src/services/company/Policy.ts). The caller it hands on carries how the request reads each resource's
 * personal data (`readModes`), so no handler works that out again. The key becomes the actor of the request's
 * fiber, which the handler runs in: whatever the request changes is recorded in the audit log as the key's doing.
 */
export const makeApiKeyAuth = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  Effect.gen(function* () {
    const keys = yield* KeyStore
    const policy = yield* CompanyPolicy
    const limits = yield* RateLimits
    const failures = yield* makeAuthFailures
    const operations = new Map<string, OperationPolicy>(
      operationsOf(api).map((row) => [`${row.method} ${row.path}`, row])
    )

    /** The operation the route serves, as its endpoint declared it. */
    const operationOf = Effect.gen(function* () {
      const route = yield* HttpRouter.RouteContext
      const operation = operations.get(`${route.route.method} ${route.route.path}`)
      if (operation === undefined) return yield* Effect.dieMessage(`No Operation for ${route.route.path}`)
      return operation
    })

    /**
     * The key presented (401), named by its id in the rest of the request's logs and spans, never by its value.
     * Bad keys are counted per source; a source that presented too many waits (429) before its next key is
     * even looked up, whoever's key it is (docs/company-api.md).
     */
    const authenticate = (presented: string) =>
      Effect.gen(function* () {
        if (presented === "") return yield* new ApiKeyMissing({ message: "The X-Api-Key header is required." })
        const authenticated = yield* failures.guard(
          { kind: "api-key", source: yield* clientSource },
          keys
            .authenticate(presented)
            .pipe(
              Effect.tapError((error) =>
                Effect.logDebug("API key refused").pipe(Effect.annotateLogs("reason", error._tag))
              )
            ),
          () => true // every refusal of KeyStore.authenticate is a bad key
        )
        const { key } = authenticated
        yield* FiberRef.update(FiberRef.currentLogAnnotations, (annotations) =>
          HashMap.set(HashMap.set(annotations, "apiKeyId", key.id as unknown), "companyId", key.companyId as unknown)
        )
        yield* Effect.annotateCurrentSpan({ "ribbon.api_key.id": key.id, "ribbon.company.id": key.companyId })
        yield* Effect.logDebug("API key accepted")
        return authenticated
      })

    /** One token from the global bucket and one from the operation's class (429); headers on every response. */
    const rateLimit = (authenticated: AuthenticatedKey, operation: OperationPolicy) =>
      Effect.gen(function* () {
        const decision = yield* limits.consume(
          authenticated.key.companyId,
          operation.rateClass,
          authenticated.rateLimits
        )
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
      })

    /** An `enforceMtls` key only over the mutual-TLS listener (403). */
    const requireMtls = (key: ApiKeyRecord, request: HttpServerRequest.HttpServerRequest) =>
      key.enforceMtls && !overMtls(request)
        ? Effect.fail(
            new MtlsRequired({
              message:
                "This API key requires mutual TLS: call the mTLS root (/public-api on the mutual-TLS listener) with your client certificate."
            })
          )
        : Effect.void

    /** `Request-Source`, one of the known sources (400); recorded on what the request creates. */
    const requestSourceOf = (request: HttpServerRequest.HttpServerRequest) => {
      const source = request.headers["request-source"]
      if (source === undefined) return Effect.succeed(null)
      return isRequestSource(source)
        ? Effect.succeed(source)
        : InvalidRequest.field(
            "Request-Source",
            `Unknown request source "${source}"; expected api_native, api_zapier, api_salesforce, api_ftp or api_make.`
          )
    }

    /** A `companyId` parameter, well formed (400) and the key's own company (403). */
    const checkCompanyParam = (key: ApiKeyRecord) =>
      Effect.gen(function* () {
        const { companyId } = yield* HttpServerRequest.ParsedSearchParams
        if (companyId === undefined) return
        if (typeof companyId !== "string" || !isCompanyId(companyId)) {
          return yield* InvalidRequest.field("companyId", "Expected a company id matching ^[A-Za-z0-9]{8,}$.")
        }
        yield* policy.canActFor(key, companyId)
      })

    /** The account `Ribbon-Account-Id` names, if any (404 out of reach, 403 across environments). */
    const namedAccount = (key: ApiKeyRecord, request: HttpServerRequest.HttpServerRequest) => {
      const accountId = request.headers["ribbon-account-id"]
      return accountId === undefined
        ? Effect.succeed(Option.none<Account>())
        : Effect.map(policy.canAccessAccount(key, accountId), Option.some)
    }

    /** A sandbox control answers a live key as if it were not there (404). */
    const requireTestKey = (key: ApiKeyRecord, operation: OperationPolicy) =>
      operation.testKeysOnly === true && key.environment !== "test"
        ? Effect.fail(new NotFound({ message: "The sandbox control is for test keys only." }))
        : Effect.void

    return (presented: string) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const operation = yield* operationOf
        const authenticated = yield* authenticate(presented)
        const { key } = authenticated
        yield* rateLimit(authenticated, operation)
        yield* requireMtls(key, request)
        const requestSource = yield* requestSourceOf(request)
        yield* policy.canPerform(key, operation.permission)
        yield* checkCompanyParam(key)
        const account = yield* namedAccount(key, request)
        yield* requireTestKey(key, operation)
        yield* actAs({ type: "key", id: key.id, name: key.name })
        return {
          key,
          account,
          scope: policy.scopeOf(key, account),
          requestSource,
          readModes: readModesOf(key.permissions)
        } satisfies Caller
      })
  })

/**
 * Both lines' middleware layers for `api`; they need KeyStore, the company Policy and RateLimits. `bypass`
 * skips authentication and rate limiting and hands every request that caller: only `npm run bench:auth`
 * uses it, as the baseline the real middleware is measured against.
 */
export const apiKeyAuthLayers = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  options: { readonly bypass?: Caller } = {}
) =>
  Layer.unwrapEffect(
    Effect.map(makeApiKeyAuth(api), (authenticate) => {
      const bypass = options.bypass
      // A test-keys-only operation's `NotFound` is not among the middleware's declared failures (declaring it
      // there would add a 404 to every operation's document): each such operation declares it itself, which
      // `operationsOf` checks at start.
      const apiKey = (key: Redacted.Redacted<string>) =>
        bypass === undefined
          ? (authenticate(Redacted.value(key)) as Effect.Effect<
              Caller,
              Exclude<Effect.Effect.Error<ReturnType<typeof authenticate>>, NotFound>
            >)
          : Effect.succeed(bypass)
      return Layer.mergeAll(
        Layer.succeed(ApiKeyAuthV2, ApiKeyAuthV2.of({ apiKey })),
        Layer.succeed(ApiKeyAuthV3, ApiKeyAuthV3.of({ apiKey }))
      )
    })
  )
