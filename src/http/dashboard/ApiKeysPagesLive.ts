import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Either, Option, Schema } from "effect"
import {
  type AccountsAccess,
  ApiKeyName,
  allAccounts,
  type Environment,
  ExpirationInDays,
  expirationChoices,
  HexId,
  type Permission,
  permissions
} from "../../domain/company/Company.js"
import { principalOf } from "../../domain/company/Members.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { Accounts } from "../../services/company/Accounts.js"
import { KeyManagement } from "../../services/company/KeyManagement.js"
import { KeyStore } from "../../services/company/KeyStore.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import {
  confirmRevokePage,
  createdKeyPage,
  emptyKeyForm,
  type KeyFormErrors,
  type KeyFormValues,
  keyFormPage,
  keyListPage
} from "./apiKeysViews.js"
import { listOf } from "./DashboardApi.js"
import { notFoundPage } from "./pages.js"
import type { CurrentMember } from "./session.js"
import { makeDashboardAuth } from "./session.js"

/** Keys per page of the list. */
const keysPerPage = 20

/** Accounts offered by the creation form (and named in the list), the first by name. */
const accountsOffered = 100

const pageNumber = (text: string) => {
  const n = Number(text)
  return Number.isInteger(n) && n >= 1 && n <= 10_000 ? n : 1
}

const listQuery = (page: number, size: number, sort: V3Query["sort"] = []): V3Query => ({
  filters: {},
  include: [],
  fields: [],
  sort,
  page: { number: page, size, cursor: undefined }
})

/** The environment a page works in: the one asked for, live only for a live company; by default the company's. */
const environmentOf = (current: CurrentMember, asked: string): Environment =>
  asked === "test" || !current.company.live ? "test" : "live"

interface CreateFields {
  readonly environment: string
  readonly name: string
  readonly expirationInDays: string
  readonly permissions: string | ReadonlyArray<string>
  readonly accounts: string
  readonly accountIds: string | ReadonlyArray<string>
  readonly enforceMtls: string
}

/** What the key is to be, once the form's fields are each well formed. */
interface KeyRequest {
  readonly name: string
  readonly expirationInDays: number
  readonly permissions: ReadonlyArray<Permission>
  readonly accountsAccess: AccountsAccess
  readonly enforceMtls: boolean
}

const isPermission = Schema.is(Schema.Literal(...permissions))
const isHexId = Schema.is(HexId)

/**
 * The creation form as sent: its values (to show again) and each field's problem, or the key it asks for. The
 * rules on what the member may give are the Policy's, judged afterwards by `createKeyAs`.
 */
const readKeyForm = (
  fields: CreateFields,
  environment: Environment
): { readonly values: KeyFormValues; readonly errors: KeyFormErrors; readonly request?: KeyRequest } => {
  const picked = [...new Set(listOf(fields.permissions))]
  const accountIds = [...new Set(listOf(fields.accountIds).map((id) => id.toLowerCase()))]
  const values: KeyFormValues = {
    environment,
    name: fields.name,
    expirationInDays: fields.expirationInDays,
    permissions: picked,
    accounts: fields.accounts === "selected" ? "selected" : "all",
    accountIds,
    enforceMtls: fields.enforceMtls === "on"
  }
  const errors: Record<string, string> = {}
  const name = fields.name.trim()
  if (Either.isLeft(Schema.decodeEither(ApiKeyName)(name))) {
    errors.name = name === "" ? "Give the key a name." : "At most 100 characters."
  }
  const days = Number(fields.expirationInDays)
  if (fields.expirationInDays === "" || Either.isLeft(Schema.decodeEither(ExpirationInDays)(days))) {
    errors.expirationInDays = `Pick one of ${expirationChoices.join(", ")} days.`
  }
  const unknown = picked.find((permission) => !isPermission(permission))
  if (unknown !== undefined) errors.permissions = `There is no permission "${unknown}".`
  if (values.accounts === "selected") {
    if (accountIds.length === 0) errors.accounts = "Tick at least one account, or choose all accounts."
    else if (!accountIds.every(isHexId)) errors.accounts = "No such account in this company."
  }
  if (Object.keys(errors).length > 0) return { values, errors }
  return {
    values,
    errors,
    request: {
      name,
      expirationInDays: days,
      permissions: picked.filter(isPermission),
      accountsAccess: values.accounts === "all" ? allAccounts : { scope: "selected-accounts", ids: accountIds },
      enforceMtls: values.enforceMtls
    }
  }
}

/**
 * The API keys section (docs/dashboard.md, "API keys"), for members holding `developer:manage`. Creation and
 * revocation are the API's own (`KeyManagement`): the member is judged by the company Policy as a key holding
 * its role's permissions and accounts would be.
 */
export const ApiKeysPagesLive = HttpApiBuilder.group(Api, "dashboardApiKeys", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const keys = yield* KeyStore
    const management = yield* KeyManagement
    const accounts = yield* Accounts
    const policy = yield* CompanyPolicy
    const publicUrl = (yield* PublicUrl).replace(/\/$/, "")
    const guard = { require: "developer:manage" } as const

    /** The accounts of `environment` the member reaches, the first `accountsOffered` by name. */
    const reachableAccounts = (current: CurrentMember, environment: Environment) =>
      Effect.gen(function* () {
        // No account named, so none to refuse: the scope cannot fail.
        const scope = yield* Effect.orDie(policy.scopeForMember(current.member, environment))
        return yield* accounts.page(scope, listQuery(1, accountsOffered, [{ field: "name", descending: false }]))
      })

    const namesOf = (found: { readonly rows: ReadonlyArray<{ readonly id: string; readonly name: string }> }) =>
      new Map(found.rows.map((account) => [account.id, account.name] as const))

    const formPage = (current: CurrentMember, values: KeyFormValues, errors: KeyFormErrors, status = 200) =>
      Effect.map(reachableAccounts(current, values.environment), (found) =>
        keyFormPage(current, { values, errors, accounts: found.rows, moreAccounts: found.hasNext }, status)
      )

    return handlers
      .handle("list", ({ request, urlParams }) =>
        auth.page(request, guard, (current) =>
          Effect.gen(function* () {
            const environment = environmentOf(current, urlParams.environment)
            const page = pageNumber(urlParams.page)
            const [found, reachable, now] = yield* Effect.all([
              keys.page(current.company.id, environment, listQuery(page, keysPerPage)),
              reachableAccounts(current, environment),
              Clock.currentTimeMillis
            ])
            return keyListPage(current, {
              environment,
              keys: found.rows,
              accountNames: namesOf(reachable),
              links: { path: "/dashboard/api-keys", params: { environment }, page, hasNext: found.hasNext },
              now
            })
          })
        )
      )
      .handle("new", ({ request, urlParams }) =>
        auth.page(request, guard, (current) => {
          const environment = environmentOf(current, urlParams.environment)
          return formPage(current, emptyKeyForm(environment), {})
        })
      )
      .handle("create", ({ request, payload }) =>
        auth.form(request, payload.csrf, guard, (current) =>
          Effect.gen(function* () {
            if (payload.environment === "live" && !current.company.live) {
              const values = emptyKeyForm("test")
              return yield* formPage(
                current,
                values,
                { form: "The company is not live yet: it has test keys only." },
                400
              )
            }
            const environment: Environment = payload.environment === "live" ? "live" : "test"
            const { values, errors, request: wanted } = readKeyForm(payload, environment)
            if (wanted === undefined) return yield* formPage(current, values, errors, 400)
            const created = yield* Effect.either(
              management.create(principalOf(current.member, environment), { ...wanted, requestSource: null })
            )
            if (Either.isLeft(created)) {
              const error = created.left
              switch (error._tag) {
                case "PermissionDenied":
                  return yield* formPage(current, values, { permissions: error.message }, 403)
                case "AccountsAccessDenied":
                  return yield* formPage(current, values, { accounts: error.message }, 403)
                case "ApiKeyLimitReached":
                  return yield* formPage(current, values, { form: error.message }, 422)
                case "InvalidRequest": {
                  const byField: Record<string, string> = {}
                  for (const issue of error.errors) {
                    const field =
                      issue.path === "name" ? "name" : issue.path.startsWith("accountsAccess") ? "accounts" : "form"
                    byField[field] ??= issue.message
                  }
                  return yield* formPage(current, values, byField, 400)
                }
                // Only a rotation names another key: none here.
                case "ApiKeyNotFound":
                case "EnvironmentMismatch":
                  return yield* Effect.die(error)
              }
            }
            const { record, apiKey } = created.right
            const reachable = yield* reachableAccounts(current, environment)
            return createdKeyPage(current, { keyRecord: record, apiKey, accountNames: namesOf(reachable), publicUrl })
          })
        )
      )
      .handle("confirmRevoke", ({ request, path }) =>
        auth.page(request, guard, (current) =>
          Effect.gen(function* () {
            const found = yield* keys.find(current.company.id, path.apiKeyId)
            if (Option.isNone(found)) return notFoundPage(current)
            const key = found.value
            // Said before the button rather than after it: a key beyond the member's reach is not offered.
            const allowed = yield* Effect.either(
              policy.canManageKey(principalOf(current.member, key.environment), key, "revoke")
            )
            return Either.isLeft(allowed)
              ? confirmRevokePage(current, { keyRecord: key, refusal: allowed.left.message }, 403)
              : confirmRevokePage(current, { keyRecord: key })
          })
        )
      )
      .handle("revoke", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, guard, (current) =>
          Effect.gen(function* () {
            const found = yield* keys.find(current.company.id, path.apiKeyId)
            if (Option.isNone(found)) return notFoundPage(current)
            const key = found.value
            const revoked = yield* Effect.either(
              management.revoke(principalOf(current.member, key.environment), key.id)
            )
            if (Either.isLeft(revoked)) {
              const error = revoked.left
              return error._tag === "PermissionDenied" || error._tag === "AccountsAccessDenied"
                ? confirmRevokePage(current, { keyRecord: key, refusal: error.message }, 403)
                : // Revoked meanwhile.
                  notFoundPage(current)
            }
            return auth.withFlash(
              HttpServerResponse.redirect(`/dashboard/api-keys?environment=${key.environment}`, { status: 303 }),
              { kind: "success", text: `The key “${key.name}” is revoked: requests with it are now refused.` }
            )
          })
        )
      )
  })
)
