import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormText, Html } from "./DashboardApi.js"

/**
 * The dashboard's catalog (docs/dashboard.md "Catalog"): the marketplace and swag catalogs, searched and paged,
 * each product with what a gift of it costs sent to a chosen country (its landed price), or that it cannot be
 * sent there.
 */

export class CatalogPages extends HttpApiGroup.make("dashboardCatalog")
  .add(
    HttpApiEndpoint.get("products", "/dashboard/catalog")
      .setUrlParams(Schema.Struct({ catalog: FormText, search: FormText, country: FormText, page: FormText }))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
