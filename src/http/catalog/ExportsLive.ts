import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { CatalogExport, ExportKind } from "../../domain/catalog/Exports.js"
import { PermissionDenied } from "../../domain/company/Errors.js"
import { CatalogExports } from "../../services/catalog/CatalogExports.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "../company/ApiKeyAuth.js"
import { exportV3, requireAccount, seesPrices } from "./v3.js"

export const ExportsV3Live = HttpApiBuilder.group(Api, "exportsV3", (handlers) =>
  Effect.gen(function* () {
    const exports = yield* CatalogExports
    const policy = yield* CompanyPolicy
    const present = (exported: CatalogExport) =>
      Effect.map(exports.downloadUrls(exported), (urls) => ({ data: exportV3(exported, urls) }))
    /**
     * The files are written once, with the starting key's view, and their links need no key: so a reader
     * must hold every permission the lines were written with (403 otherwise), or its links would show it
     * what its own key may not see.
     */
    const read = (kind: ExportKind, exportId: string) =>
      Effect.gen(function* () {
        const caller = yield* CurrentCaller
        const exported = yield* exports.find(caller.scope, kind, exportId)
        if (exported.request.prices) {
          const allowed: Effect.Effect<void, PermissionDenied> = policy.canPerform(caller.key, "products:read:prices")
          yield* Effect.mapError(
            allowed,
            (denied) =>
              new PermissionDenied({
                message: `Export ${exported.id} was written with prices; reading it needs the ${denied.permission} permission, which this API key lacks.`,
                permission: denied.permission
              })
          )
        }
        return yield* present(exported)
      })
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
