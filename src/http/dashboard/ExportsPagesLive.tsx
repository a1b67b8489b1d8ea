import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import type { CollectionNotFound, ExportInProgress } from "../../domain/catalog/Errors.js"
import type { CatalogExport, ExportKind } from "../../domain/catalog/Exports.js"
import type { AccountScope, Environment, Permission } from "../../domain/company/Company.js"
import type { InvalidRequest } from "../../domain/platform/Errors.js"
import { plainIssues } from "../../domain/platform/IssueMessages.js"
import { CatalogExports } from "../../services/catalog/CatalogExports.js"
import { CatalogV3 } from "../../services/catalog/CatalogV3.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { nowDate } from "../../services/platform/Time.js"
import { Api } from "../Api.js"
import { CollectionExportBody, ProductExportBody } from "../catalog/ExportsApi.js"
import { seesPrices } from "../catalog/v3.js"
import { listOf } from "./DashboardApi.js"
import { expiredPage, exportHref, exportPage, exportsPage, type StartState } from "./exportsViews.js"
import { forbiddenPage, notFoundPage } from "./pages.js"
import { environmentParam, pageNumber } from "./params.js"
import { type CurrentMember, holds, makeDashboardAuth } from "./session.js"

/** Exports per page of the list. */
const exportsPerPage = 20
/** The most collections the collections form offers (the API's largest page of collections). */
const collectionsShown = 300

/** Export ids are 24 hexadecimal characters; anything else names nothing. */
const hexId = /^[0-9a-fA-F]{24}$/

/** What reading an export of each kind needs, as `GET /public-api/v3/{products|collections}/exports/{id}` does. */
const readPermission: Readonly<Record<ExportKind, Permission>> = {
  products: "products:read",
  collections: "collections:read"
}

/** A problem as a sentence: "must be one of x" → "Must be one of x." */
const sentence = (text: string) => {
  const capital = `${text.charAt(0).toUpperCase()}${text.slice(1)}`
  return /[.!?]$/.test(capital) ? capital : `${capital}.`
}

/** The form field a body path names: `filter.price.gte` → `priceGte`, `locations[2]` → `locations`. */
const fieldOf = (path: ReadonlyArray<PropertyKey>): string => {
  const [first, second, third] = path.map(String)
  if (first === "filter") return second === "price" ? (third === "lte" ? "priceLte" : "priceGte") : (second ?? "search")
  return first ?? "locations"
}

/** The countries field as the API's `locations`: codes separated by commas or spaces; none is the API's default. */
const locationsOf = (text: string) => {
  const codes = text.split(/[\s,]+/).filter((code) => code !== "")
  return codes.length === 0 ? {} : { locations: codes }
}

/** Each field's first problem, from a parse of the API's body. */
const errorsOf = (issue: Parameters<typeof plainIssues>[0]) => {
  const errors: Record<string, string> = {}
  for (const problem of plainIssues(issue)) errors[fieldOf(problem.path)] ??= sentence(problem.message)
  return errors
}

/** The service call a checked form makes, in the member's scope. */
type Starter = (
  scope: AccountScope
) => Effect.Effect<CatalogExport, InvalidRequest | CollectionNotFound | ExportInProgress>

const decodeProducts = Schema.decodeUnknownEither(ProductExportBody, { errors: "all" })
const decodeCollections = Schema.decodeUnknownEither(CollectionExportBody, { errors: "all" })

/**
 * The exports section (docs/dashboard.md "Exports") for members holding `developer:manage` (decision 0054): every
 * page and form calls the `CatalogExports` operation the `/public-api/v3/{products|collections}/exports` handlers
 * call, under the API's permissions (`products:read`, `collections:read`, and `products:read:prices` to read an
 * export written with prices), in the member's scope. An export's pages find it in either environment.
 */
export const ExportsPagesLive = HttpApiBuilder.group(Api, "dashboardExports", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const exports = yield* CatalogExports
    const catalog = yield* CatalogV3
    const policy = yield* CompanyPolicy
    const require = { require: "developer:manage" } as const

    const environmentsOf = (current: CurrentMember): ReadonlyArray<Environment> =>
      current.company.live ? ["live", "test"] : ["test"]

    /** The member's scope in an environment; naming no account, it cannot be refused. */
    const scopeIn = (current: CurrentMember, environment: Environment) =>
      Effect.orDie(policy.scopeForMember(current.member, environment))

    /** The list page of an environment, with a form sent again beside it when there is one. */
    const listPage = (
      current: CurrentMember,
      environment: Environment,
      page: number,
      sent?: StartState,
      status = 200
    ) =>
      Effect.gen(function* () {
        const found = yield* exports.page(yield* scopeIn(current, environment), page, exportsPerPage)
        // The whole list of collections, unnarrowed: it cannot be refused.
        const collections = yield* Effect.orDie(
          catalog.collections({
            filters: {},
            include: [],
            fields: [],
            sort: [],
            page: { number: 1, size: collectionsShown, cursor: undefined }
          })
        )
        return exportsPage(
          current,
          {
            environment,
            exports: found.rows,
            links: { path: "/dashboard/exports", params: { environment }, page, hasNext: found.hasNext },
            collections: collections.rows,
            now: yield* nowDate,
            ...(sent === undefined ? {} : { sent })
          },
          status
        )
      })

    /** The member's company's export `exportId`, in whichever environment and of whichever kind it is; none else. */
    const locate = (current: CurrentMember, exportId: string) =>
      Effect.gen(function* () {
        if (!hexId.test(exportId)) return Option.none<CatalogExport>()
        for (const environment of environmentsOf(current)) {
          const scope = yield* scopeIn(current, environment)
          for (const kind of ["products", "collections"] as const) {
            const found = yield* Effect.option(exports.find(scope, kind, exportId))
            if (Option.isSome(found)) return found
          }
        }
        return Option.none<CatalogExport>()
      })

    /**
     * Runs `body` on the located export: the 404 page when it is not the company's; the 403 page when the role
     * may not read it, as the API refuses a key (an export written with prices needs `products:read:prices`).
     */
    const onExport = (
      current: CurrentMember,
      exportId: string,
      body: (exported: CatalogExport) => Effect.Effect<HttpServerResponse.HttpServerResponse>
    ) =>
      Effect.gen(function* () {
        const found = yield* locate(current, exportId)
        if (Option.isNone(found)) return notFoundPage(current)
        const exported = found.value
        const reads =
          holds(current.grant, readPermission[exported.kind]) &&
          (!exported.request.prices || holds(current.grant, "products:read:prices"))
        return reads ? yield* body(exported) : forbiddenPage(current)
      })

    /** The service's refusals as the form's problems; another export running as the whole form's. */
    const refused = (effect: ReturnType<Starter>) =>
      Effect.either(effect).pipe(
        Effect.map(
          Either.mapLeft((error) => {
            switch (error._tag) {
              case "InvalidRequest":
                return {
                  errors: Object.fromEntries(
                    error.errors.map((issue) => [issue.path.split(/[.[]/)[0] ?? "locations", sentence(issue.message)])
                  ),
                  status: 400
                }
              case "CollectionNotFound":
                return { errors: { collectionIds: sentence(error.message) }, status: 404 }
              case "ExportInProgress":
                return { errors: {}, status: 409, exportId: error.exportId }
            }
          })
        )
      )

    /**
     * Starts an export: `prepare` checks the form (each field's problem, nothing stored) and gives the service call;
     * the service's own refusals (an unsupported country, an unknown collection, another export running) are shown
     * with the form again.
     */
    const startWith = (
      current: CurrentMember,
      kind: ExportKind,
      sent: Omit<StartState, "errors" | "error">,
      environmentText: string,
      prepare: () => Either.Either<Starter, Record<string, string>>
    ) => {
      if (!holds(current.grant, readPermission[kind])) return Effect.succeed(forbiddenPage(current))
      const environment = environmentParam(environmentText, current)
      if (!environmentsOf(current).includes(environment)) return Effect.succeed(notFoundPage(current))
      return Effect.gen(function* () {
        const again = (errors: Record<string, string>, status: number, error?: StartState["error"]) =>
          listPage(current, environment, 1, { ...sent, errors, ...(error === undefined ? {} : { error }) }, status)
        const prepared = prepare()
        if (Either.isLeft(prepared)) return yield* again(prepared.left, 400)
        const started = yield* refused(prepared.right(yield* scopeIn(current, environment)))
        if (Either.isLeft(started)) {
          const problem = started.left
          if ("exportId" in problem && problem.exportId !== undefined) {
            return yield* again(
              {},
              409,
              <>
                Another export of the company is still running: one runs at a time.{" "}
                <a href={exportHref({ id: problem.exportId })}>Follow it</a>, then start this one.
              </>
            )
          }
          return yield* again(problem.errors, problem.status)
        }
        return auth.withFlash(HttpServerResponse.redirect(exportHref(started.right), { status: 303 }), {
          kind: "success",
          text: `The ${kind} export has started.`
        })
      })
    }

    return handlers
      .handle("list", ({ request, urlParams }) =>
        auth.page(request, require, (current) =>
          listPage(current, environmentParam(urlParams.environment, current), pageNumber(urlParams.page))
        )
      )
      .handle("startProducts", ({ request, payload }) =>
        auth.form(request, payload.csrf, require, (current) => {
          const sent = {
            kind: "products" as const,
            values: {
              locations: payload.locations,
              catalog: payload.catalog,
              type: payload.type,
              search: payload.search,
              tagId: payload.tagId,
              brandId: payload.brandId,
              priceGte: payload.priceGte,
              priceLte: payload.priceLte
            },
            include: listOf(payload.include),
            fields: listOf(payload.fields),
            collectionIds: []
          }
          const given = (text: string) => (text.trim() === "" ? undefined : text.trim())
          const price = { gte: given(payload.priceGte), lte: given(payload.priceLte) }
          const body = {
            filter: Object.fromEntries(
              Object.entries({
                catalog: given(payload.catalog),
                type: given(payload.type),
                search: given(payload.search),
                tagId: given(payload.tagId),
                brandId: given(payload.brandId),
                price: price.gte === undefined && price.lte === undefined ? undefined : price
              }).filter(([, value]) => value !== undefined)
            ),
            ...locationsOf(payload.locations),
            include: sent.include,
            fields: sent.fields
          }
          return startWith(current, "products", sent, payload.environment, () => {
            const decoded = decodeProducts(body)
            if (Either.isLeft(decoded)) return Either.left(errorsOf(decoded.left.issue))
            const { price: bounds, ...named } = decoded.right.filter
            // The list's filter names, as the API's handler gives them: `price][gte` and `price][lte`.
            const filters = Object.fromEntries(
              Object.entries({ ...named, "price][gte": bounds?.gte, "price][lte": bounds?.lte }).filter(
                (entry): entry is [string, string] => entry[1] !== undefined
              )
            )
            return Either.right<Starter>((scope) =>
              exports.startProducts(scope, {
                filters,
                collectionIds: [],
                locations: decoded.right.locations,
                include: decoded.right.include,
                fields: decoded.right.fields,
                prices: seesPrices(current.grant.permissions)
              })
            )
          })
        })
      )
      .handle("startCollections", ({ request, payload }) =>
        auth.form(request, payload.csrf, require, (current) => {
          const sent = {
            kind: "collections" as const,
            values: { locations: payload.locations },
            include: listOf(payload.include),
            fields: listOf(payload.fields),
            collectionIds: listOf(payload.collectionIds)
          }
          return startWith(current, "collections", sent, payload.environment, () => {
            if (sent.collectionIds.length === 0) {
              return Either.left({ collectionIds: "Choose at least one collection." })
            }
            const decoded = decodeCollections({
              collectionIds: sent.collectionIds,
              ...locationsOf(payload.locations),
              include: sent.include,
              fields: sent.fields
            })
            if (Either.isLeft(decoded)) return Either.left(errorsOf(decoded.left.issue))
            return Either.right<Starter>((scope) =>
              exports.startCollections(scope, {
                filters: {},
                collectionIds: decoded.right.collectionIds,
                locations: decoded.right.locations,
                include: decoded.right.include,
                fields: decoded.right.fields,
                prices: seesPrices(current.grant.permissions)
              })
            )
          })
        })
      )
      .handle("export", ({ request, path }) =>
        auth.page(request, require, (current) =>
          onExport(current, path.exportId, (exported) =>
            Effect.map(nowDate, (now) => exportPage(current, exported, now))
          )
        )
      )
      .handle("file", ({ request, path }) =>
        auth.page(request, require, (current) =>
          onExport(current, path.exportId, (exported) =>
            exports.fileOf(exported, path.location).pipe(
              Effect.map((lines) =>
                HttpServerResponse.stream(lines, {
                  contentType: "application/x-ndjson",
                  headers: {
                    "content-disposition": `attachment; filename="export-${exported.id}-${path.location}.ndjson"`,
                    "cache-control": "no-store",
                    "x-content-type-options": "nosniff"
                  }
                })
              ),
              Effect.catchTags({
                ExportNotFound: () => Effect.succeed(notFoundPage(current)),
                ExportExpired: () => Effect.succeed(expiredPage(current, exported))
              })
            )
          )
        )
      )
  })
)
