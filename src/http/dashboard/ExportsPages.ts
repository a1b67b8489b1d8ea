import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormList, FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's catalog exports (docs/dashboard.md "Exports"): the company's exports in an environment, starting a
 * products or a collections export with the options the API takes, an export's status (followed live where
 * JavaScript runs), and its files, streamed as the API's signed links serve them.
 */

const Ndjson = HttpApiSchema.Text({ contentType: "application/x-ndjson" })

/** What both kinds of export take: the environment, the countries (one file each), and `include` and `fields`. */
const common = { environment: FormText, locations: FormText, include: FormList, fields: FormList }

const ExportPath = Schema.Struct({ exportId: Schema.String })

export class ExportsPages extends HttpApiGroup.make("dashboardExports")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/exports")
      .setUrlParams(Schema.Struct({ environment: FormText, page: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("startProducts", "/dashboard/exports/products")
      .setPayload(
        form({
          ...common,
          catalog: FormText,
          type: FormText,
          search: FormText,
          tagId: FormText,
          brandId: FormText,
          priceGte: FormText,
          priceLte: FormText
        })
      )
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("startCollections", "/dashboard/exports/collections")
      .setPayload(form({ ...common, collectionIds: FormList }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("export", "/dashboard/exports/:exportId").setPath(ExportPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.get("file", "/dashboard/exports/:exportId/files/:location")
      .setPath(Schema.Struct({ exportId: Schema.String, location: Schema.String }))
      .addSuccess(Ndjson)
  )
  .annotate(OpenApi.Exclude, true) {}
