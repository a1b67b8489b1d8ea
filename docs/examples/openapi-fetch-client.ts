// A typed client generated from the OpenAPI document with openapi-typescript, called with openapi-fetch:
//   npx openapi-typescript http://localhost:3000/openapi.json -o openapi.d.ts
import createClient from "openapi-fetch"
import type { paths } from "./openapi.js"

/** The agent API, acting for a signed-in person with an OAuth access token. */
export const agentExample = async (baseUrl: string, accessToken: string) => {
  const ribbon = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${accessToken}` } })
  const { data, error, response } = await ribbon.GET("/v1/search", {
    params: { query: { q: "mug", limit: 3 } }
  })
  // Errors are typed per status: `/v1` sends problem+json with a stable `code`.
  if (error !== undefined) throw new Error(`${response.status} ${error.code}: ${error.detail}`)
  return data.products.map((product) => product.title)
}

/** The company API (v3), with an API key. */
export const companyExample = async (baseUrl: string, apiKey: string) => {
  const ribbon = createClient<paths>({ baseUrl, headers: { "x-api-key": apiKey } })
  const { data, error } = await ribbon.GET("/public-api/v3/authentication/api-keys", {
    params: { query: { "page[size]": 10 } }
  })
  // Every v3 error body has a `message`; most have a structured `errorCode` such as `401_PBLC_001`.
  if (error !== undefined) throw new Error(error.message)
  return data.data.map((key) => key.name)
}
