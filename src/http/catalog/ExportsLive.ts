import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { CatalogExport, ExportKind } from "../../domain/catalog/Exports.js"
import { CatalogExports } from "../../services/catalog/CatalogExports.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "../company/ApiKeyAuth.js"
import { requireAccount } from "./CatalogV3Live.js"
import { exportV3, seesPrices } from "./v3.js"

export const ExportsV3Live = HttpApiBuilder.group(Api, "exportsV3", (handlers) =>
  Effect.gen(function* () {
    const exports = yield* CatalogExports
    const present = (exported: CatalogExport) =>
      Effect.map(exports.downloadUrls(exported), (urls) => ({ data: exportV3(exported, urls) }))
    const read = (kind: ExportKind, exportId: string) =>
      Effect.flatMap(CurrentCaller, (caller) => Effect.flatMap(exports.find(caller.scope, kind, exportId), present))
    return handlers
      .handle("startProducts", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const { price, ...named } = payload.filter
          // The list's filter names: `price][gte` and `price][lte` for the nested price bounds.
          const filters = Object.fromEntries(
            Object.entries({ ...named, "price][gte": price?.gte, "price][lte": price?.lte }).filter(
              (entry): entry is [string, string] => entry[1] !== undefined
            )
          )
          const started = yield* exports.startProducts(caller.scope, {
            filters,
            collectionIds: [],
            locations: payload.locations,
            include: payload.include,
            fields: payload.fields,
            prices: seesPrices(caller.key.permissions)
          })
          return yield* present(started)
        })
      )
      .handle("getProducts", ({ path }) => read("products", path.exportId))
      .handle("startCollections", ({ payload }) =>
        Effect.gen(function* () {
          yield* requireAccount
          const caller = yield* CurrentCaller
          const started = yield* exports.startCollections(caller.scope, {
            filters: {},
            collectionIds: payload.collectionIds,
            locations: payload.locations,
            include: payload.include,
            fields: payload.fields,
            prices: seesPrices(caller.key.permissions)
          })
          return yield* present(started)
        })
      )
      .handle("getCollections", ({ path }) => Effect.flatMap(requireAccount, () => read("collections", path.exportId)))
  })
)

export const ExportFilesLive = HttpApiBuilder.group(Api, "exportFiles", (handlers) =>
  Effect.gen(function* () {
    const exports = yield* CatalogExports
    return handlers.handleRaw("file", ({ path, urlParams }) =>
      Effect.map(exports.file(path.exportId, path.location, urlParams.expires, urlParams.signature), (lines) =>
        HttpServerResponse.stream(lines, {
          contentType: "application/x-ndjson",
          headers: {
            "content-disposition": `attachment; filename="export-${path.exportId.toLowerCase()}-${path.location}.ndjson"`,
            "cache-control": "private, no-store"
          }
        })
      )
    )
  })
)
