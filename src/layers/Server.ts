import {
  Etag,
  FileSystem,
  HttpApi,
  HttpApiBuilder,
  HttpApiScalar,
  type HttpApp,
  HttpIncomingMessage,
  HttpMiddleware,
  HttpPlatform,
  HttpRouter,
  HttpServer,
  OpenApi,
  Path
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, Option, Schedule, Scope } from "effect"
import { Api } from "../http/Api.js"
import { AcpLive } from "../http/acp/AcpLive.js"
import { OriginPolicy } from "../http/BrowserOrigins.js"
import { CatalogLive } from "../http/catalog/CatalogLive.js"
import { CatalogV2Live } from "../http/catalog/CatalogV2Live.js"
import { CatalogV3Live } from "../http/catalog/CatalogV3Live.js"
import { ExportFilesLive, ExportsV3Live } from "../http/catalog/ExportsLive.js"
import { ImagesLive } from "../http/catalog/ImagesLive.js"
import { exportLine } from "../http/catalog/v3.js"
import { AllowancePagesLive } from "../http/checkout/AllowancePagesLive.js"
import { AllowancesLive } from "../http/checkout/AllowancesLive.js"
import { CheckoutsLive } from "../http/checkout/CheckoutsLive.js"
import { PayLive } from "../http/checkout/PayLive.js"
import { CheckoutPresenterV1 } from "../http/checkout/v1.js"
import { AccountsV3Live } from "../http/company/AccountsLive.js"
import { apiKeyAuthLayers } from "../http/company/ApiKeyAuthLive.js"
import { ApiKeysV2Live, ApiKeysV3Live } from "../http/company/ApiKeysLive.js"
import { AuditEventsV3Live } from "../http/company/AuditLive.js"
import { CampaignsV2Live } from "../http/company/CampaignsLive.js"
import { GiftPageLive } from "../http/company/GiftPageLive.js"
import { GiftClaimsV2Live, GiftsV2Live } from "../http/company/GiftsLive.js"
import { OrderAddressesV3Live } from "../http/company/OrderAddressesLive.js"
import { OrdersV3Live } from "../http/company/OrdersLive.js"
import { RecipientsV2Live } from "../http/company/RecipientsLive.js"
import { WebhooksV3Live } from "../http/company/WebhooksLive.js"
import { AccountPagesLive } from "../http/dashboard/AccountPagesLive.js"
import { ApiKeysPagesLive } from "../http/dashboard/ApiKeysPagesLive.js"
import { AuditLogPagesLive } from "../http/dashboard/AuditLogPagesLive.js"
import { BillingPagesLive } from "../http/dashboard/BillingPagesLive.js"
import { CatalogPagesLive } from "../http/dashboard/CatalogPagesLive.js"
import { DashboardLive } from "../http/dashboard/DashboardLive.js"
import { ExportsPagesLive } from "../http/dashboard/ExportsPagesLive.js"
import { GiftsPagesLive } from "../http/dashboard/GiftsPagesLive.js"
import { MembersPagesLive } from "../http/dashboard/MembersPagesLive.js"
import { OrdersPagesLive } from "../http/dashboard/OrdersPagesLive.js"
import { OutboxPagesLive } from "../http/dashboard/OutboxPagesLive.js"
import { RecipientsPagesLive } from "../http/dashboard/RecipientsPagesLive.js"
import { SendPagesLive } from "../http/dashboard/SendPagesLive.js"
import { WebhooksPagesLive } from "../http/dashboard/WebhooksPagesLive.js"
import { BearerLive } from "../http/identity/BearerLive.js"
import { OAuthLive } from "../http/identity/OAuthLive.js"
import { ProfileLive } from "../http/identity/ProfileLive.js"
import { WellKnownLive } from "../http/identity/WellKnownLive.js"
import { requestMetrics } from "../http/Metrics.js"
import { ribbonMiddleware } from "../http/Middleware.js"
import { McpLive } from "../http/mcp/McpLive.js"
import { FaviconLive } from "../http/pages/favicon.js"
import { HealthLive } from "../http/platform/HealthLive.js"
import { routerConfig } from "../http/Routes.js"
import { UcpLive } from "../http/ucp/UcpLive.js"
import { Addresses } from "../services/catalog/Addresses.js"
import { Catalog, PublicUrl } from "../services/catalog/Catalog.js"
import { CatalogExports, ExpireCatalogExport, RunCatalogExport } from "../services/catalog/CatalogExports.js"
import { CatalogV3 } from "../services/catalog/CatalogV3.js"
import { LandedCatalog } from "../services/catalog/LandedCatalog.js"
import { Search } from "../services/catalog/Search.js"
import { Seed } from "../services/catalog/Seed.js"
import { StockAvailability, StockAvailabilityNotifierLive } from "../services/catalog/StockAvailability.js"
import { AcpIdempotency } from "../services/checkout/AcpIdempotency.js"
import { AcpSessions } from "../services/checkout/AcpSessions.js"
import { AcpVaultTokens } from "../services/checkout/AcpVaultTokens.js"
import { AcpWebhooks } from "../services/checkout/AcpWebhooks.js"
import { AgentOrders } from "../services/checkout/AgentOrders.js"
import { AllowancePayments } from "../services/checkout/AllowancePayments.js"
import { Allowances } from "../services/checkout/Allowances.js"
import { CheckoutPayments } from "../services/checkout/CheckoutPayments.js"
import { Checkouts, ExpireCheckout } from "../services/checkout/Checkouts.js"
import { Events } from "../services/checkout/Events.js"
import { Notifications, ProductionServer } from "../services/checkout/Notifications.js"
import { PaymentsInFlight, Placement } from "../services/checkout/Placement.js"
import { Quotes } from "../services/checkout/Quotes.js"
import { UcpOrders } from "../services/checkout/UcpOrders.js"
import { UcpSignatures } from "../services/checkout/UcpSignatures.js"
import { deliverWebhookHandler, WebhookDeliveries } from "../services/checkout/WebhookDeliveries.js"
import { Accounts } from "../services/company/Accounts.js"
import { Audit } from "../services/company/Audit.js"
import { Billing } from "../services/company/Billing.js"
import { Campaigns } from "../services/company/Campaigns.js"
import { Companies } from "../services/company/Companies.js"
import { CompanyOrders } from "../services/company/CompanyOrders.js"
import { CompanyWebhooks } from "../services/company/CompanyWebhooks.js"
import { DashboardAccounts } from "../services/company/DashboardAccounts.js"
import { DashboardSessions, MemberSessionsRevokerLive } from "../services/company/DashboardSessions.js"
import { Gifts } from "../services/company/Gifts.js"
import { GiftUploads } from "../services/company/GiftUploads.js"
import { KeyManagement } from "../services/company/KeyManagement.js"
import { KeyStore } from "../services/company/KeyStore.js"
import { Members } from "../services/company/Members.js"
import { CompanyPolicy } from "../services/company/Policy.js"
import { Recipients } from "../services/company/Recipients.js"
import { Fulfillment } from "../services/fulfillment/Fulfillment.js"
import { Authorizations } from "../services/identity/Authorizations.js"
import { Bearers } from "../services/identity/Bearers.js"
import { BrowserSessions } from "../services/identity/BrowserSessions.js"
import { Consents } from "../services/identity/Consents.js"
import { OAuthClients } from "../services/identity/OAuthClients.js"
import { Tokens } from "../services/identity/Tokens.js"
import { TwoFactor } from "../services/identity/TwoFactor.js"
import { Users } from "../services/identity/Users.js"
import { Jobs, WorkerConcurrency } from "../services/platform/Jobs.js"
import { OutboundPolicy } from "../services/platform/OutboundHttp.js"
import { RateLimits } from "../services/platform/RateLimits.js"
import { MigrationTarget, Readiness } from "../services/platform/Readiness.js"
import { SigningKeys } from "../services/platform/SigningKeys.js"
import { UcpSigningKey } from "../services/platform/UcpSigningKey.js"
import { FulfillmentSettings, FulfillmentSimulator } from "../services/simulators/FulfillmentSimulator.js"
import { PaymentSimulator } from "../services/simulators/PaymentSimulator.js"
import { AppConfig } from "./Config.js"
import { DatabaseLive, SignalsLive } from "./Database.js"
import { httpListener } from "./HttpListener.js"
import { latestMigrationId, MigrationsLive } from "./Migrations.js"
import { mtlsHttpServer, mtlsNodeServer, publicApiOnly } from "./Mtls.js"
import { RateLimiterLive } from "./Redis.js"
import { drainOnShutdown } from "./Shutdown.js"
import { TelemetryLive, traceRequests } from "./Telemetry.js"

const untraced = new Set(["/health", "/ready"])

export interface AppOptions {
  /** Largest request body accepted, in bytes. */
  readonly maxBodyBytes: number
}

export interface ServeOptions extends AppOptions {
  /**
   * Whether requests are traced (all but /health and /ready) and counted in the request metrics. Default
   * on. `ServerLive` turns it off when no exporter is configured, since nothing would read either: the
   * platform's tracer middleware (a span, its attributes, trace context headers), `traceRequests` and
   * `requestMetrics` then never run, which is most of a small request's cost (docs/performance.md).
   */
  readonly telemetry?: boolean
  /** Serve only paths under this prefix, 404 elsewhere (the mutual-TLS listener serves `/public-api`). */
  readonly publicApiOnly?: boolean
}

/**
 * Scalar's light theme draws muted text and method names in greys and colours below WCAG AA contrast (4.5:1) on
 * its backgrounds; these darker ones meet it (test/e2e/platform/docs.test.ts checks `/docs` with axe-core).
 */
const docsContrastCss = `.light-mode {
  --scalar-color-2: #595959;
  --scalar-color-3: #636363;
  --scalar-color-blue: #005f9e;
  --scalar-color-green: #006b45;
  --scalar-color-yellow: #7a5c00;
  --scalar-color-orange: #a04a00;
  --scalar-color-red: #c20000;
  --scalar-color-purple: #6b3fa0;
}`

/** The HttpApp every listener of one server serves. */
class ServedApp extends Context.Tag("ribbon/ServedApp")<
  ServedApp,
  HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>
>() {}

/**
 * An HttpApi as one HttpApp with everything every Ribbon route gets: `/openapi.json`, `/docs`, request ids,
 * the body limit and error rendering per API line. Build it once per server and serve it on each listener:
 * the layers of one build share one router and one middleware list (`HttpApiBuilder.Router.Live` and
 * `Middleware.layer` are memoized), so a second copy would declare `/openapi.json` twice and fail to start.
 */
const apiApp = <E, R>(apiLive: Layer.Layer<HttpApi.Api, E, R>, options: AppOptions) =>
  Layer.effect(ServedApp, HttpApiBuilder.httpApp).pipe(
    Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]),
    Layer.provide([
      Layer.merge(
        HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
        // Scalar's bundle is served inline; its default fonts would come from its CDN, which the page's policy refuses.
        HttpApiScalar.layer({ path: "/docs", scalar: { withDefaultFonts: false, customCss: docsContrastCss } })
      ).pipe(Layer.provide(servedAtPublicUrl)),
      ribbonMiddleware(options)
    ]),
    Layer.provide(apiLive),
    Layer.provide(HttpRouter.setRouterConfig(routerConfig))
  )

/**
 * The services a request's fiber starts with: the listener and its scope, the platform's own services
 * (`HttpRouter.DefaultServices`: files, ETags), and the body limit. Everything else a route uses it has
 * already: each handler group runs in the context its layer was built with (HttpApiBuilder merges it in
 * per call), and middleware captures its services when built. Without this, every request would start
 * with the whole server's context (some 55 services), and each service the platform adds to it per request
 * (the request, its route, its parameters, its scope, its span) copies all of them: 6–10 µs of a `/health`
 * request (docs/performance.md).
 */
type RequestServices =
  | HttpServer.HttpServer
  | Scope.Scope
  | HttpRouter.HttpRouter.DefaultServices
  | HttpIncomingMessage.MaxBodySize

const requestContext = (context: Context.Context<RequestServices>): Context.Context<RequestServices> =>
  Context.pick(
    HttpServer.HttpServer,
    Scope.Scope,
    HttpPlatform.HttpPlatform,
    Etag.Generator,
    FileSystem.FileSystem,
    Path.Path,
    HttpIncomingMessage.MaxBodySize
  )(context)

/** Serves the `ServedApp` on the HttpServer in context: one listener. */
const serveApp = (options: ServeOptions) =>
  Layer.unwrapEffect(
    Effect.map(ServedApp, (app) =>
      Layer.scopedDiscard(
        // Inside the server span and after error rendering: tracing details and metrics see the response as sent.
        HttpServer.serveEffect(app, (whole) => {
          const served = options.publicApiOnly === true ? publicApiOnly(whole) : whole
          return options.telemetry === false ? served : requestMetrics(traceRequests(served))
        }).pipe(Effect.mapInputContext(requestContext))
      )
    )
  ).pipe(
    HttpMiddleware.withTracerDisabledWhen(
      options.telemetry === false ? () => true : (request) => untraced.has(request.url)
    ),
    // The body limit, once for the listener: every request's fiber starts with it in its context.
    Layer.provide(Layer.succeed(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(options.maxBodyBytes))))
  )

/** Serves an HttpApi on the HttpServer in context, as `apiApp` builds it. Tests serve their own fixture APIs through it. */
export const serveApi = <E, R>(apiLive: Layer.Layer<HttpApi.Api, E, R>, options: ServeOptions) =>
  serveApp(options).pipe(Layer.provide(apiApp(apiLive, options)))

/** The root URL of the mutual-TLS listener, where there is one: `/openapi.json` names it beside the public URL. */
export class MtlsRootUrl extends Context.Tag("ribbon/MtlsRootUrl")<MtlsRootUrl, string>() {}

/**
 * The API as `/openapi.json` and `/docs` describe it: with the public URL and the mutual-TLS root, those that
 * are in context, as its servers. A fixture API served by a test may have neither.
 */
const servedAtPublicUrl = Layer.effect(
  HttpApi.Api,
  Effect.gen(function* () {
    const served = yield* HttpApi.Api
    const servers = [
      ...Option.toArray(yield* Effect.serviceOption(PublicUrl)).map((url) => ({ url, description: "This server" })),
      ...Option.toArray(yield* Effect.serviceOption(MtlsRootUrl)).map((url) => ({
        url,
        description: "Mutual TLS: `/public-api` only, with a client certificate (`enforceMtls` keys)"
      }))
    ]
    return servers.length === 0 ? served : { ...served, api: served.api.annotate(OpenApi.Servers, servers) }
  })
)

/** The mutual-TLS listener's root: the public URL's host, over HTTPS, on MTLS_PORT. */
export const mtlsRootUrl = (publicUrl: string, mtlsPort: number): string =>
  `https://${new URL(publicUrl).hostname}:${mtlsPort}`

/**
 * Every service the routes and the worker call; they need the database, Signals, the public URL, the
 * callback settings, and the payment provider and fulfillment partner (`ProvidersLive`, or in tests
 * `SimulatorsLive`).
 */
export const ServicesLive = Layer.mergeAll(
  // platform (Jobs is provided to all, below)
  Readiness.Default.pipe(Layer.provide(Layer.succeed(MigrationTarget, latestMigrationId))),
  SigningKeys.Default,
  // catalog
  Search.Default,
  Catalog.Default,
  CatalogV3.Default,
  CatalogExports.Default,
  LandedCatalog.Default,
  Addresses.Default,
  // identity
  Users.Default,
  OAuthClients.Default,
  Authorizations.Default,
  BrowserSessions.Default,
  Consents.Default,
  Tokens.Default,
  Bearers.Default,
  TwoFactor.Default,
  // company
  Companies.Default,
  CompanyPolicy.Default,
  KeyStore.Default,
  KeyManagement.Default,
  Accounts.Default,
  Audit.Default,
  Billing.Default,
  CompanyOrders.Default,
  CompanyWebhooks.Default,
  Campaigns.Default,
  Recipients.Default,
  Gifts.Default,
  // A removed member's dashboard sessions end with the membership.
  Members.Default.pipe(Layer.provide(MemberSessionsRevokerLive)),
  // Reads the member who confirmed an upload: the same Members, with the same revoker.
  GiftUploads.Default.pipe(Layer.provide(MemberSessionsRevokerLive)),
  DashboardSessions.Default,
  DashboardAccounts.Default,
  StockAvailability.Default,
  // checkout, its events and callbacks showing the /v1 resources
  Layer.mergeAll(
    Quotes.Default,
    Checkouts.Default,
    CheckoutPayments.Default,
    Allowances.Default,
    AllowancePayments.Default,
    Placement.Default,
    AgentOrders.Default,
    Events.Default,
    Notifications.Default,
    WebhookDeliveries.Default,
    AcpSessions.Default,
    AcpVaultTokens.Default,
    AcpIdempotency.Default,
    AcpWebhooks.Default,
    UcpSignatures.Default,
    UcpOrders.Default
  ).pipe(Layer.provideMerge(CheckoutPresenterV1)),
  // fulfillment: the orders placed with the fulfillment partner
  Fulfillment.Default
).pipe(Layer.provideMerge(Jobs.Default))

/**
 * The shipped adapters of the two ports, the simulators (src/services/simulators), on the fulfillment
 * simulator's settings: the payment provider and the fulfillment partner, and the simulators themselves for
 * the tests' controls.
 */
export const SimulatorsLive = Layer.merge(FulfillmentSimulator.partner, PaymentSimulator.provider)

/** The fulfillment partner adapters by their FULFILLMENT_PARTNER names, and the payment providers by PAYMENT_PROVIDER's. */
const fulfillmentPartners = { simulator: FulfillmentSimulator.partner }
const paymentProviders = { simulator: PaymentSimulator.provider }

/**
 * The payment provider and the fulfillment partner the configuration names (docs/operations.md, "Payment and
 * fulfillment providers"); AppConfig refuses any name not listed here, so the start fails before anything runs.
 */
export const ProvidersLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(fulfillmentPartners[config.fulfillmentPartner], paymentProviders[config.paymentProvider])
  )
)

/**
 * The rate limiter on the memory store or Redis (REDIS_URL): the company API's token buckets (RateLimits)
 * and the OAuth endpoints' windows (src/http/identity/AuthRateLimits.ts) share it, so every instance counts alike.
 */
export const RateLimitsLive = RateLimits.Default.pipe(Layer.provideMerge(RateLimiterLive))

/**
 * The handlers of every group of the Ribbon API, with the middleware they use: the bearer token on `/v1`,
 * and `companyAuth` (the API-key middleware; `bench:auth` swaps it) on the company API.
 */
export const makeHandlersLive = (companyAuth = apiKeyAuthLayers(Api)) =>
  Layer.mergeAll(
    HealthLive,
    CatalogLive,
    ImagesLive,
    WellKnownLive,
    OAuthLive,
    ProfileLive,
    CheckoutsLive,
    AllowancesLive,
    AllowancePagesLive,
    PayLive,
    AcpLive,
    UcpLive,
    GiftPageLive,
    AccountPagesLive,
    MembersPagesLive,
    DashboardLive,
    ApiKeysPagesLive,
    WebhooksPagesLive,
    AuditLogPagesLive,
    OutboxPagesLive,
    ExportsPagesLive,
    BillingPagesLive,
    RecipientsPagesLive,
    CatalogPagesLive,
    GiftsPagesLive,
    OrdersPagesLive,
    SendPagesLive,
    Layer.mergeAll(
      ApiKeysV2Live,
      ApiKeysV3Live,
      AccountsV3Live,
      OrderAddressesV3Live,
      OrdersV3Live,
      WebhooksV3Live,
      AuditEventsV3Live,
      CatalogV2Live,
      CampaignsV2Live,
      RecipientsV2Live,
      GiftsV2Live,
      GiftClaimsV2Live,
      CatalogV3Live,
      ExportsV3Live
    ).pipe(Layer.provide(companyAuth)),
    ExportFilesLive
  ).pipe(Layer.provide(BearerLive))

export const HandlersLive = makeHandlersLive()

/**
 * The Ribbon API with its handlers, and `/mcp` (src/http/mcp/McpLive.ts) and `/favicon.ico`
 * (src/http/pages/favicon.ts) on the same router; needs the services, RateLimits and the OriginPolicy (which
 * the middleware's CORS headers use too).
 */
export const ApiLive = Layer.merge(McpLive, FaviconLive).pipe(
  Layer.provideMerge(HttpApiBuilder.api(Api).pipe(Layer.provide(HandlersLive)))
)

/** The demo catalog, seeded on first start (a no-op afterwards). */
const DemoCatalogLive = Layer.effectDiscard(Effect.flatMap(Seed, (seed) => seed.ensureDemoCatalog())).pipe(
  Layer.provide(Seed.Default)
)

/** The demo user, outside production: created once, and printed with its password on every start. */
const DemoUserLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const { environment } = yield* AppConfig
    if (environment === "production") return
    const demo = yield* Effect.flatMap(Users, (users) => users.ensureDemoUser())
    yield* Effect.logInfo(`Demo user: ${demo.email} / password ${demo.password}`)
  })
).pipe(Layer.provide(Users.Default))

/**
 * Hourly, rows that can no longer be used are deleted: the OAuth codes, tokens, sessions and client assertion jtis,
 * and the agent protocols' idempotency keys past their 24 hours (with the answers they kept).
 */
const ExpiredRowsPurgeLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const tokens = yield* Tokens
    const idempotency = yield* AcpIdempotency
    const purge = (what: string, run: Effect.Effect<unknown>) =>
      Effect.catchAllCause(run, (cause) => Effect.logWarning(`Purging expired ${what} failed`, cause))
    yield* Effect.all([
      purge("OAuth rows", tokens.purgeExpired()),
      purge("idempotency keys", idempotency.purgeExpired())
    ]).pipe(Effect.repeat(Schedule.spaced("1 hour")), Effect.forkScoped)
  })
)

/**
 * The background worker: placement, order progress, checkout expiry, catalog exports and callbacks, claimed
 * from the `jobs` table by every instance (docs/decisions/0052-scale-out.md), and the stock-availability notifier.
 */
export const WorkerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const placement = yield* Placement
    const orders = yield* AgentOrders
    const checkouts = yield* Checkouts
    const companyOrders = yield* CompanyOrders
    const exports = yield* CatalogExports
    const gifts = yield* Gifts
    const giftUploads = yield* GiftUploads
    const ucpOrders = yield* UcpOrders
    const jobsWorker = Jobs.layerWorker([
      placement.handler,
      orders.handler,
      companyOrders.handler,
      ExpireCheckout.handle(({ checkoutId }) => checkouts.expire(checkoutId)),
      RunCatalogExport.handle(({ exportId }, job) => exports.run(exportId, job.attempt >= job.maxAttempts, exportLine)),
      ExpireCatalogExport.handle(({ exportId }) => exports.expire(exportId)),
      ...gifts.handlers,
      giftUploads.handler,
      ucpOrders.handler,
      deliverWebhookHandler
    ])
    return Layer.merge(jobsWorker, StockAvailabilityNotifierLive)
  })
)

/**
 * Ribbon's UCP key, UCP_SIGNING_KEY's when set: the same for the `/ucp` handlers and the delivery engine (order
 * webhooks); without it, the key made for this process.
 */
const UcpSigningKeyLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.ucpSigningKey, { onNone: () => Layer.empty, onSome: UcpSigningKey.fromPem })
  )
)

/** The providers, the simulator's settings and those of outbound callbacks, from AppConfig. */
const SettingsLive = Layer.mergeAll(
  Layer.effect(
    PublicUrl,
    Effect.map(AppConfig, (config) => config.publicUrl)
  ),
  ProvidersLive.pipe(
    Layer.provideMerge(
      Layer.unwrapEffect(Effect.map(AppConfig, (config) => FulfillmentSettings.layer(config.fulfillment)))
    )
  ),
  Layer.effect(
    PaymentsInFlight,
    Effect.map(AppConfig, (config) => config.paymentsInFlight)
  ),
  Layer.effect(
    WorkerConcurrency,
    Effect.map(AppConfig, (config) => config.workerConcurrency)
  ),
  Layer.unwrapEffect(
    Effect.map(AppConfig, (config) => OutboundPolicy.layer({ allowLoopback: config.webhooksAllowLoopback }))
  ),
  UcpSigningKeyLive
)

/** The callback signing key, made at start (once per database) rather than by the first callback. */
const SigningKeyLive = Layer.effectDiscard(Effect.flatMap(SigningKeys, (keys) => keys.current()))

/** The migrated, seeded database, and the services on it. */
export const AppLive = Layer.provideMerge(
  Layer.mergeAll(ExpiredRowsPurgeLive, WorkerLive, SigningKeyLive),
  Layer.merge(ServicesLive, RateLimitsLive)
).pipe(
  Layer.provide(SettingsLive),
  Layer.provide(SignalsLive),
  Layer.provideMerge(DemoCatalogLive),
  Layer.provideMerge(DemoUserLive),
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(DatabaseLive)
)

/**
 * The whole server: config, telemetry, database, migrations, services and HTTP on PORT. `host` narrows
 * the listening address (the benchmark binds loopback only); by default every interface.
 */
export const makeServerLive = (listen: { readonly host?: string } = {}) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const config = yield* AppConfig
      const server = httpListener()
      // Without an exporter, spans and metrics would only be made to be dropped: no request telemetry, and
      // the tracer off for everything below (requests, services, SQL, background fibers).
      const telemetry = Option.isSome(config.otlpEndpoint)
      const { maxBodyBytes } = config
      const plain = serveApp({ maxBodyBytes, telemetry }).pipe(
        HttpServer.withLogAddress,
        Layer.provide(NodeHttpServer.layer(() => server, { port: config.port, ...listen }))
      )
      // The second listener, for `enforceMtls` keys: the same app, `/public-api` only.
      const mtlsServer = Option.map(config.mtls, mtlsNodeServer)
      const mtls = Option.match(Option.all([config.mtls, mtlsServer]), {
        onNone: () => Layer.empty,
        onSome: ([options, server]) =>
          serveApp({ maxBodyBytes, telemetry, publicApiOnly: true }).pipe(
            HttpServer.withLogAddress,
            Layer.provide(mtlsHttpServer(server, { ...options, ...listen }))
          )
      })
      // Built over the listeners, so that on shutdown the drain runs while they still answer requests.
      return drainOnShutdown([server, ...Option.toArray(mtlsServer)]).pipe(
        Layer.provideMerge(Layer.merge(plain, mtls)),
        Layer.provide(
          apiApp(ApiLive, { maxBodyBytes }).pipe(
            // What `/openapi.json` names as its servers (AppLive keeps its settings to itself).
            Layer.provide(Layer.succeed(PublicUrl, config.publicUrl)),
            Layer.provide(UcpSigningKeyLive),
            // Where the dashboard's outbox shows (docs/dashboard.md "Outbox").
            Layer.provide(Layer.succeed(ProductionServer, config.environment === "production")),
            Layer.provide(
              Option.match(config.mtls, {
                onNone: () => Layer.empty,
                onSome: ({ port }) => Layer.succeed(MtlsRootUrl, mtlsRootUrl(config.publicUrl, port))
              })
            )
          )
        ),
        Layer.provide(
          OriginPolicy.layer({
            publicUrl: config.publicUrl,
            allowedOrigins: config.allowedOrigins,
            localPort: config.environment === "development" ? config.port : undefined
          })
        ),
        Layer.provide(AppLive),
        Layer.provide(telemetry ? Layer.empty : Layer.setTracerEnabled(false))
      )
    })
  ).pipe(Layer.provide(TelemetryLive), Layer.provide(AppConfig.Default))

/** The whole server on every interface, as `npm start` runs it. */
export const ServerLive = makeServerLive()
