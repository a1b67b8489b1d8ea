import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Layer } from "effect"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { UcpSignatures } from "../../services/checkout/UcpSignatures.js"
import { contentDigest, signatureHeaders } from "../../services/platform/HttpSignatures.js"
import type { UcpKey } from "../../services/platform/UcpSigningKey.js"
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

/** Components of a signed answer: the REST binding's for responses. */
const RESPONSE_COMPONENTS = ["@status", "content-digest", "content-type"]

/** `body` as a JSON answer with `Content-Digest`, `Signature-Input` and `Signature` by Ribbon's UCP key. */
export const signedJson = (key: UcpKey, body: unknown, status: number) =>
  Effect.gen(function* () {
    const text = JSON.stringify(body)
    const contentType = "application/json"
    const fields: Record<string, string> = { "content-digest": contentDigest(text), "content-type": contentType }
    const created = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const signed = signatureHeaders({ status, header: (name) => fields[name] }, RESPONSE_COMPONENTS, {
      privateKey: key.privateKey,
      keyid: key.publicJwk.kid!,
      created
    })
    return HttpServerResponse.text(text, {
      status,
      contentType,
      headers: { "content-digest": fields["content-digest"]!, ...signed }
    })
  })
