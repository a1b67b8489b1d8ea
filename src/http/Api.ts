import { OpenApi } from "@effect/platform"
import { makeApi } from "./ApiBase.js"
import {
  AcpCheckoutSessionsApi,
  AcpDelegatePaymentApi,
  AcpDiscoveryApi,
  AcpExtensionsApi,
  AcpWebhookEndpointsApi
} from "./acp/AcpApi.js"
import { CatalogApi } from "./catalog/CatalogApi.js"
import { CatalogV2Api } from "./catalog/CatalogV2Api.js"
import { CatalogV3Api } from "./catalog/CatalogV3Api.js"
import { ExportFilesApi, ExportsV3Api } from "./catalog/ExportsApi.js"
import { ImagesApi } from "./catalog/ImagesApi.js"
import { AllowancePagesApi } from "./checkout/AllowancePagesApi.js"
import { AllowancesApi } from "./checkout/AllowancesApi.js"
import { AgentOrdersApi, CheckoutsApi, QuotesApi } from "./checkout/CheckoutsApi.js"
import { PayApi } from "./checkout/PayApi.js"
import { AccountsV3Api } from "./company/AccountsApi.js"
import { ApiKeysV2Api, ApiKeysV3Api } from "./company/ApiKeysApi.js"
import { AuditEventsV3Api } from "./company/AuditApi.js"
import { CampaignsV2Api } from "./company/CampaignsApi.js"
import { GiftPageApi } from "./company/GiftPageApi.js"
import { GiftClaimsV2Api, GiftsV2Api } from "./company/GiftsApi.js"
import { OrderAddressesV3Api } from "./company/OrderAddressesApi.js"
import { OrdersV3Api } from "./company/OrdersApi.js"
import { RecipientsV2Api } from "./company/RecipientsApi.js"
import { WebhooksV3Api } from "./company/WebhooksApi.js"
import { AccountPages } from "./dashboard/AccountPages.js"
import { ApiKeysPages } from "./dashboard/ApiKeysPages.js"
import { AuditLogPages } from "./dashboard/AuditLogPages.js"
import { BillingPages } from "./dashboard/BillingPages.js"
import { CatalogPages } from "./dashboard/CatalogPages.js"
import { DashboardApi } from "./dashboard/DashboardApi.js"
import { ExportsPages } from "./dashboard/ExportsPages.js"
import { GiftsPages } from "./dashboard/GiftsPages.js"
import { MembersPages } from "./dashboard/MembersPages.js"
import { OrdersPages } from "./dashboard/OrdersPages.js"
import { OutboxPages } from "./dashboard/OutboxPages.js"
import { RecipientsPages } from "./dashboard/RecipientsPages.js"
import { SendPages } from "./dashboard/SendPages.js"
import { WebhooksPages } from "./dashboard/WebhooksPages.js"
import { withRequestErrors } from "./ErrorLines.js"
import { OAuthApi } from "./identity/OAuthApi.js"
import { ProfileApi } from "./identity/ProfileApi.js"
import { WellKnownApi } from "./identity/WellKnownApi.js"
import { HealthApi } from "./platform/HealthApi.js"
import { UcpCheckoutSessionsApi, UcpOrdersApi, UcpProfileApi } from "./ucp/UcpApi.js"

/** The whole service: every route, `/openapi.json`, `/docs` and the typed client derive from this value. */
export class Api extends makeApi("ribbon")
  .add(HealthApi.pipe(withRequestErrors("v1")))
  .add(CatalogApi.pipe(withRequestErrors("v1")))
  .add(ImagesApi.pipe(withRequestErrors("v1")))
  .add(WellKnownApi.pipe(withRequestErrors("v1")))
  .add(OAuthApi.pipe(withRequestErrors("oauth")))
  .add(ProfileApi.pipe(withRequestErrors("v1")))
  .add(QuotesApi.pipe(withRequestErrors("v1")))
  .add(CheckoutsApi.pipe(withRequestErrors("v1")))
  .add(AgentOrdersApi.pipe(withRequestErrors("v1")))
  .add(AllowancesApi.pipe(withRequestErrors("v1")))
  .add(PayApi.pipe(withRequestErrors("v1")))
  .add(AcpDiscoveryApi.pipe(withRequestErrors("v1")))
  .add(AcpCheckoutSessionsApi.pipe(withRequestErrors("acp")))
  .add(AcpExtensionsApi.pipe(withRequestErrors("acp")))
  .add(UcpProfileApi.pipe(withRequestErrors("v1")))
  .add(UcpCheckoutSessionsApi.pipe(withRequestErrors("ucp")))
  .add(UcpOrdersApi.pipe(withRequestErrors("ucp")))
  .add(AcpDelegatePaymentApi.pipe(withRequestErrors("acp")))
  .add(AcpWebhookEndpointsApi.pipe(withRequestErrors("acp")))
  .add(AllowancePagesApi.pipe(withRequestErrors("v1")))
  .add(GiftPageApi.pipe(withRequestErrors("v1")))
  .add(ApiKeysV2Api.pipe(withRequestErrors("v2")))
  .add(ApiKeysV3Api.pipe(withRequestErrors("v3")))
  .add(AccountsV3Api.pipe(withRequestErrors("v3")))
  .add(OrdersV3Api.pipe(withRequestErrors("v3")))
  .add(OrderAddressesV3Api.pipe(withRequestErrors("v3")))
  .add(WebhooksV3Api.pipe(withRequestErrors("v3")))
  .add(AuditEventsV3Api.pipe(withRequestErrors("v3")))
  .add(CatalogV2Api.pipe(withRequestErrors("v2")))
  .add(CampaignsV2Api.pipe(withRequestErrors("v2")))
  .add(RecipientsV2Api.pipe(withRequestErrors("v2")))
  .add(GiftsV2Api.pipe(withRequestErrors("v2")))
  .add(GiftClaimsV2Api.pipe(withRequestErrors("v2")))
  .add(CatalogV3Api.pipe(withRequestErrors("v3")))
  .add(ExportsV3Api.pipe(withRequestErrors("v3")))
  .add(ExportFilesApi.pipe(withRequestErrors("v1")))
  .add(AccountPages)
  .add(ApiKeysPages)
  .add(WebhooksPages)
  .add(MembersPages)
  .add(AuditLogPages)
  .add(OutboxPages)
  .add(ExportsPages)
  .add(BillingPages)
  .add(RecipientsPages)
  .add(CatalogPages)
  .add(GiftsPages)
  .add(OrdersPages)
  .add(SendPages)
  .add(DashboardApi)
  .annotate(OpenApi.Title, "Ribbon")
  .annotate(OpenApi.Version, "1.0.0")
  // OpenAPI 3.1 asks for an SPDX `identifier` (or a URL) beside the name; the platform's type lists only `url`.
  .annotate(OpenApi.License, {
    name: "Proprietary",
    identifier: "LicenseRef-Ribbon-Proprietary"
  } as OpenApi.OpenAPISpecLicense)
  .annotate(
    OpenApi.Description,
    "The Ribbon gifting marketplace: the agent API (`/v1`, `/oauth`) and the company API (`/public-api/v2`, `/public-api/v3`)."
  ) {}
