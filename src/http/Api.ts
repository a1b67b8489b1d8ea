import { OpenApi } from "@effect/platform"
import { makeApi } from "./ApiBase.js"
import { ApiKeysV2Api, ApiKeysV3Api } from "./groups/ApiKeysApi.js"
import { CatalogApi } from "./groups/CatalogApi.js"
import { CheckoutsApi, OrdersApi, QuotesApi } from "./groups/CheckoutsApi.js"
import { HealthApi } from "./groups/HealthApi.js"
import { ImagesApi } from "./groups/ImagesApi.js"
import { OAuthApi } from "./groups/OAuthApi.js"
import { PayApi } from "./groups/PayApi.js"
import { ProfileApi } from "./groups/ProfileApi.js"
import { WellKnownApi } from "./groups/WellKnownApi.js"

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
