import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"

/**
 * `/favicon.ico`, which browsers ask for on every page they open: a small wrapped gift, as SVG (which
 * browsers take at that path by its content type), cached for a day. On the API's router beside the
 * operations, but not one of them: it is not part of the API the OpenAPI document describes.
 */

export const faviconSvg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect x="4" y="13" width="24" height="16" rx="2" fill="#b3261e"/>
<rect x="2" y="8" width="28" height="6" rx="1.5" fill="#d9473f"/>
<rect x="14" y="8" width="4" height="21" fill="#f6d365"/>
<path d="M16 8C13 3 7 3 8 7c1 2 5 1 8 1zm0 0c3-5 9-5 8-1-1 2-5 1-8 1z" fill="#f6d365"/>
</svg>
`

export const FaviconLive = HttpApiBuilder.Router.use((router) =>
  router.get(
    "/favicon.ico",
    Effect.succeed(
      HttpServerResponse.text(faviconSvg, {
        contentType: "image/svg+xml",
        headers: { "cache-control": "public, max-age=86400" }
      })
    )
  )
).pipe(Layer.provide(HttpApiBuilder.Router.Live))
