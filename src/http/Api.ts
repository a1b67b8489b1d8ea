import { OpenApi } from "@effect/platform"
import { makeApi } from "./ApiBase.js"
import { CatalogApi } from "./catalog/CatalogApi.js"
import { ImagesApi } from "./catalog/ImagesApi.js"
import { CheckoutsApi, OrdersApi, QuotesApi } from "./checkout/CheckoutsApi.js"
import { PayApi } from "./checkout/PayApi.js"
import { ApiKeysV2Api, ApiKeysV3Api } from "./company/ApiKeysApi.js"
import { OAuthApi } from "./identity/OAuthApi.js"
import { ProfileApi } from "./identity/ProfileApi.js"
import { WellKnownApi } from "./identity/WellKnownApi.js"
import { HealthApi } from "./platform/HealthApi.js"

/** The whole service: every route, `/openapi.json`, `/docs` and the typed client derive from this value. */
export class Api extends makeApi("ribbon")
  .add(HealthApi)
  .add(CatalogApi)
  .add(ImagesApi)
  .add(WellKnownApi)
  .add(OAuthApi)
  .add(ProfileApi)
  .add(QuotesApi)
  .add(CheckoutsApi)
  .add(OrdersApi)
  .add(PayApi)
  .add(ApiKeysV2Api)
  .add(ApiKeysV3Api)
  .annotate(OpenApi.Title, "Ribbon")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "The Ribbon gifting marketplace: the agent API (`/v1`, `/oauth`) and the company API (`/public-api/v2`, `/public-api/v3`)."
  ) {}
