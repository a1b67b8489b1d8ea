import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { UcpSignatures } from "../../services/checkout/UcpSignatures.js"
import { UcpSignature } from "./UcpApi.js"

/**
 * UCP's message signatures on `/ucp` (docs/decisions/0087-ucp-message-signatures.md): requests verified when
 * signed, and the answers the protocol recommends signing signed with Ribbon's UCP key (decision 0081).
 */

/**
 * Verifies a signed request. `@authority` is Ribbon's public host (PUBLIC_URL), the one a platform addresses, so a
 * proxy that rewrites `Host` breaks no signature; the body is the request's text, which the payload is then
 * decoded from.
 */
export const UcpSignatureLive = Layer.effect(
  UcpSignature,
  Effect.gen(function* () {
    const signatures = yield* UcpSignatures
    const authority = new URL(yield* PublicUrl).host
    return Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (request.headers["signature-input"] === undefined && request.headers.signature === undefined) return
      const target = request.originalUrl
      const queryAt = target.indexOf("?")
      const body = yield* Effect.orElseSucceed(request.text, () => "")
      yield* signatures.verify({
        method: request.method,
        authority,
        path: queryAt < 0 ? target : target.slice(0, queryAt),
        query: queryAt < 0 ? undefined : target.slice(queryAt + 1),
        headers: request.headers,
        header: (name) => request.headers[name],
        body
      })
    })
  })
)
