// A typed client derived from Ribbon's HttpApi definition (`ribbon/api`), for Effect users: every
// operation, its parameters, its body and its errors are typed, and errors decode into the same classes
// the server fails with.
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "ribbon/api"

/** The agent API, acting for a signed-in person with an OAuth access token. */
export const agentExample = (baseUrl: string, accessToken: string) =>
  Effect.gen(function* () {
    const ribbon = yield* HttpApiClient.make(Api, {
      baseUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(accessToken))
    })
    const me = yield* ribbon.profile.me()
    const found = yield* ribbon.catalog.search({ urlParams: { q: "mug", limit: 3, country: me.user.defaultCountry } })
    return found.products.map((product) => product.title)
  }).pipe(
    // A typed error of the operation, by its tag.
    Effect.catchTag("InvalidToken", () => Effect.succeed([] as ReadonlyArray<string>)),
    Effect.provide(FetchHttpClient.layer)
  )

/** The company API (v3), with an API key. */
export const companyExample = (baseUrl: string, apiKey: string) =>
  Effect.gen(function* () {
    const ribbon = yield* HttpApiClient.make(Api, {
      baseUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", apiKey))
    })
    const page = yield* ribbon.apiKeysV3.list({ urlParams: { "page[size]": "10" } })
    return page.data.map((key) => key.name)
  }).pipe(Effect.provide(FetchHttpClient.layer))
