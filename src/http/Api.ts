import { OpenApi } from "@effect/platform"
import { makeApi } from "./ApiBase.js"
import { CatalogApi } from "./groups/CatalogApi.js"
import { HealthApi } from "./groups/HealthApi.js"

/** The whole service: every route, `/openapi.json`, `/docs` and the typed client derive from this value. */
export class Api extends makeApi("ribbon")
  .add(HealthApi)
  .add(CatalogApi)
  .annotate(OpenApi.Title, "Ribbon")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "The Ribbon gifting marketplace: the agent API (`/v1`, `/oauth`) and the company API (`/public-api/v2`, `/public-api/v3`)."
  ) {}
