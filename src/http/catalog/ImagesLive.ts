import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { NotFound } from "../../domain/platform/Errors.js"
import { Catalog } from "../../services/catalog/Catalog.js"
import { Api } from "../Api.js"
import { placeholderImage } from "./placeholderImage.js"

const stem = (name: string) => name.replace(/\.\w+$/, "")

export const ImagesLive = HttpApiBuilder.group(Api, "images", (handlers) =>
  Effect.gen(function* () {
    const catalog = yield* Catalog
    const image = (kind: "product" | "collection", id: string, path: string, label: string) =>
      catalog.imageSubject(kind, id).pipe(
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(new NotFound({ message: `No image at ${path}.` })),
            onSome: (title) =>
              Effect.succeed(
                HttpServerResponse.text(placeholderImage({ path, title, label }), {
                  contentType: "image/svg+xml",
                  headers: { "cache-control": "public, max-age=86400" }
                })
              )
          })
        )
      )
    return handlers
      .handleRaw("productImage", ({ path }) =>
        image(
          "product",
          path.productId,
          `/images/products/${path.productId}/${stem(path.name)}`,
          stem(path.name).replace(/[-_]/g, " ")
        )
      )
      .handleRaw("collectionImage", ({ path }) =>
        image("collection", stem(path.name), `/images/collections/${stem(path.name)}`, "")
      )
  })
)
