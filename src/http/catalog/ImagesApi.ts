import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFound } from "../../domain/platform/Errors.js"
import { lineError } from "../ErrorLines.js"

/** `1.svg` and the like; an older catalog's `.jpg` names are served the same way. */
const ImageName = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,64}(\.(svg|jpg))?$/))
const Id = Schema.String.pipe(Schema.maxLength(64))
const Svg = HttpApiSchema.Text({ contentType: "image/svg+xml" })

/** The catalog's images (`imageUrl` and `images` of products, variants and collections). No scope needed. */
export class ImagesApi extends HttpApiGroup.make("images")
  .add(
    HttpApiEndpoint.get("productImage", "/images/products/:productId/:name")
      .setPath(Schema.Struct({ productId: Id, name: ImageName }))
      .addSuccess(Svg)
      .annotate(OpenApi.Summary, "A product or variant image")
  )
  .add(
    HttpApiEndpoint.get("collectionImage", "/images/collections/:name")
      .setPath(Schema.Struct({ name: ImageName }))
      .addSuccess(Svg)
      .annotate(OpenApi.Summary, "A collection image")
  )
  .addError(lineError("v1", NotFound))
  .annotate(OpenApi.Title, "Images")
  .annotate(OpenApi.Description, "Catalog images, as SVG.") {}
