import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Effect, Layer, Option, Schema } from "effect"
import { InvalidRequest } from "../../src/domain/platform/Errors.js"
import { makeApi } from "../../src/http/ApiBase.js"
import { ApiKeyAuthV2, ApiKeyAuthV3, CurrentCaller, Operation } from "../../src/http/company/ApiKeyAuth.js"
import { apiKeyAuthLayers } from "../../src/http/company/ApiKeyAuthLive.js"
import { lineError } from "../../src/http/ErrorLines.js"
import { RateLimiterMemoryLive } from "../../src/layers/Redis.js"
import { RateLimits, type TokenBuckets } from "../../src/services/platform/RateLimits.js"
import { CompanyServicesLive } from "./company.js"
import { serveForTest } from "./http.js"

/**
 * A fixture company API behind the real API-key middleware: one operation per kind the later areas will
 * add (a marketplace read needing `products:read`, an administration write needing `accounts:create`, an
 * authentication write), on both lines. Handlers echo what the middleware resolved.
 */

const Echo = Schema.Struct({
  companyId: Schema.String,
  environment: Schema.String,
  accountId: Schema.NullOr(Schema.String),
  requestSource: Schema.NullOr(Schema.String)
})

const group = <const Name extends string>(name: Name, line: "v2" | "v3") =>
  HttpApiGroup.make(name)
    .add(
      HttpApiEndpoint.get("products", "/products")
        .addSuccess(Echo)
        .annotate(Operation, { permission: "products:read", rateClass: "marketplace:read" })
    )
    .add(
      HttpApiEndpoint.post("accounts", "/accounts")
        .addSuccess(Echo)
        .annotate(Operation, { permission: "accounts:create", rateClass: "administration:write" })
    )
    .add(
      HttpApiEndpoint.post("keys", "/keys")
        .addSuccess(Echo)
        .annotate(Operation, { permission: null, rateClass: "authentication:write" })
    )
    .addError(lineError(line, InvalidRequest))
    .prefix(line === "v2" ? "/public-api/v2/fixture" : "/public-api/v3/fixture")

const v2Group = group("fixtureV2", "v2").middleware(ApiKeyAuthV2)
const v3Group = group("fixtureV3", "v3").middleware(ApiKeyAuthV3)

export const FixtureCompanyApi = makeApi("companyFixture").add(v2Group).add(v3Group)

const echo = Effect.map(CurrentCaller, (caller) => ({
  companyId: caller.key.companyId,
  environment: caller.key.environment,
  accountId: Option.getOrNull(Option.map(caller.account, (a) => a.id)),
  requestSource: caller.requestSource
}))

const handlers = (name: "fixtureV2" | "fixtureV3") =>
  HttpApiBuilder.group(FixtureCompanyApi, name, (h) =>
    h
      .handle("products", () => echo)
      .handle("accounts", () => echo)
      .handle("keys", () => echo)
  )

export const FixtureCompanyLive = HttpApiBuilder.api(FixtureCompanyApi).pipe(
  Layer.provide([handlers("fixtureV2"), handlers("fixtureV3")]),
  // The backoff after bad keys counts on its own memory store here (test/http/company/authFailures.test.ts tests it).
  Layer.provide(apiKeyAuthLayers(FixtureCompanyApi).pipe(Layer.provide(RateLimiterMemoryLive)))
)

/** RateLimits on a given store of token buckets. */
export const rateLimitsOn = (store: Layer.Layer<TokenBuckets, unknown>) => RateLimits.Default.pipe(Layer.provide(store))

/** The fixture served on a test port, with the company services and the given rate-limit store. */
export const serveFixture = (store: Layer.Layer<TokenBuckets, unknown>) =>
  serveForTest(FixtureCompanyLive).pipe(Layer.provide([CompanyServicesLive, rateLimitsOn(store)]))
