import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { build } from "esbuild"
import openapiTS, { astToString } from "openapi-typescript"
import * as EffectClient from "../../../docs/examples/effect-client.js"
import * as FetchClient from "../../../docs/examples/openapi-fetch-client.js"
import { BaseUrl, issueTestToken, realPortServerOn } from "../../support/auth.js"
import { createCompany } from "../../support/company.js"
import { SeededTestDatabase } from "../../support/database.js"

describe("the API definition for typed clients (ribbon/api)", () => {
  it.effect("imports no server code: only the domain and the HttpApi, on effect and @effect/platform", () =>
    Effect.gen(function* () {
      const { metafile } = yield* Effect.promise(() =>
        build({
          entryPoints: ["src/http/Definition.ts"],
          bundle: true,
          write: false,
          metafile: true,
          platform: "neutral",
          format: "esm",
          packages: "external",
          logLevel: "silent"
        })
      )
      const files = Object.keys(metafile.inputs)
      expect(files).toContain("src/http/Api.ts")
      expect(files.filter((file) => !/^src\/(domain|http)\//.test(file))).toEqual([])
      const packages = new Set(
        Object.values(metafile.inputs).flatMap((input) => input.imports.filter((i) => i.external).map((i) => i.path))
      )
      expect([...packages].sort()).toEqual(["@effect/platform", "effect"])
    })
  )

  it("is what package.json exports as ribbon/api", () => {
    const manifest = JSON.parse(Fs.readFileSync("package.json", "utf8"))
    expect(manifest.exports["./api"]).toEqual({ types: "./src/http/Definition.ts", default: "./dist/api.mjs" })
  })

  it.effect("docs/examples/openapi.d.ts is what openapi-typescript generates from docs/openapi.json", () =>
    Effect.gen(function* () {
      const document = JSON.parse(Fs.readFileSync("docs/openapi.json", "utf8"))
      const generated = astToString(yield* Effect.promise(() => openapiTS(document)))
      expect(Fs.readFileSync("docs/examples/openapi.d.ts", "utf8")).toContain(generated.trim())
    })
  )
})

describe("the client examples of docs/clients.md, against a running server", () => {
  it.layer(realPortServerOn(SeededTestDatabase))((it) => {
    it.effect("the Effect client derived from ribbon/api calls both API families", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { accessToken } = yield* issueTestToken({}, baseUrl)
        const titles = yield* EffectClient.agentExample(baseUrl, accessToken)
        expect(titles.length).toBeGreaterThan(0)
        for (const title of titles) expect(title.toLowerCase()).toContain("mug")
        // A refused token arrives as the typed InvalidToken the example catches.
        expect(yield* EffectClient.agentExample(baseUrl, "not-a-token")).toEqual([])
        const company = yield* createCompany()
        expect(yield* EffectClient.companyExample(baseUrl, company.apiKey)).toHaveLength(1)
      })
    )

    it.effect("openapi-fetch with the generated types calls both API families", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { accessToken } = yield* issueTestToken({}, baseUrl)
        const titles = yield* Effect.promise(() => FetchClient.agentExample(baseUrl, accessToken))
        expect(titles).toEqual(yield* EffectClient.agentExample(baseUrl, accessToken))
        expect(titles.length).toBeGreaterThan(0)
        const refused = yield* Effect.promise(() =>
          FetchClient.agentExample(baseUrl, "not-a-token").then(
            () => "accepted",
            (error: Error) => error.message
          )
        )
        expect(refused).toMatch(/^401 invalid_token: /)
        const company = yield* createCompany()
        expect(yield* Effect.promise(() => FetchClient.companyExample(baseUrl, company.apiKey))).toHaveLength(1)
      })
    )
  })
})
