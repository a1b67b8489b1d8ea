import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import type { Environment } from "../../domain/company/Company.js"
import { plainIssues } from "../../domain/platform/IssueMessages.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { CompanyWebhooks } from "../../services/company/CompanyWebhooks.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import { CreateWebhookV3 } from "../company/WebhooksApi.js"
import { listOf } from "./DashboardApi.js"
import { dashboardErrorPage, notFoundPage } from "./pages.js"
import { environmentParam, pageNumber } from "./params.js"
import type { CurrentMember } from "./session.js"
import { makeDashboardAuth } from "./session.js"
import {
  confirmDeletePage,
  createdEndpointPage,
  deliveryHref,
  deliveryPage,
  endpointHref,
  endpointPage,
  endpointsPage,
  newEndpointPage
} from "./webhooksViews.js"

/** Rows per page of endpoints and of deliveries. */
const rowsPerPage = 20

/** Endpoint and delivery ids are 24 hexadecimal characters; anything else names nothing. */
const hexId = /^[0-9a-fA-F]{24}$/

const pageQuery = (page: number): V3Query => ({
  filters: {},
  include: [],
  fields: [],
  sort: [],
  page: { number: page, size: rowsPerPage, cursor: undefined }
})

/** A problem as a sentence: "the URL must be https" → "The URL must be https." */
const sentence = (text: string) => {
  const capital = `${text.charAt(0).toUpperCase()}${text.slice(1)}`
  return /[.!?]$/.test(capital) ? capital : `${capital}.`
}

const decodeCreate = Schema.decodeUnknownEither(CreateWebhookV3, { errors: "all" })

/** The form's fields as the API's body, or each field's first problem (`url`, `eventTypes`). */
const createInput = (url: string, eventTypes: string | ReadonlyArray<string>) => {
  const types = listOf(eventTypes)
  const errors: Record<string, string> = {}
  if (url === "") errors.url = "Enter the endpoint's URL."
  if (types.length === 0) errors.eventTypes = "Choose at least one event type."
  const decoded = decodeCreate({ url, eventTypes: types })
  if (Either.isLeft(decoded)) {
    for (const issue of plainIssues(decoded.left.issue)) {
      const field = String(issue.path[0] ?? "url")
      errors[field] ??= sentence(issue.message)
    }
  }
  return Either.isRight(decoded) && Object.keys(errors).length === 0 ? Either.right(decoded.right) : Either.left(errors)
}

/**
 * The webhooks section (docs/dashboard.md "Webhooks") for members holding `developer:manage`: every page and
 * form calls the `CompanyWebhooks` operation the `/public-api/v3/webhooks` handlers call, in the member's scope
 * from the Policy. An endpoint's pages find it in either environment (ids are unique), so their links need none.
 */
export const WebhooksPagesLive = HttpApiBuilder.group(Api, "dashboardWebhooks", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const webhooks = yield* CompanyWebhooks
    const policy = yield* CompanyPolicy
    const require = { require: "developer:manage" } as const

    /** The member's scope in an environment; naming no account, it cannot be refused. */
    const scopeIn = (current: CurrentMember, environment: Environment) =>
      Effect.orDie(policy.scopeForMember(current.member, environment))

    /** The member's company's endpoint `webhookId`, in whichever environment it is, with that scope; none else. */
    const locate = (current: CurrentMember, webhookId: string) =>
      Effect.gen(function* () {
        if (!hexId.test(webhookId)) return Option.none()
        const first = environmentParam("", current)
        for (const environment of [first, first === "live" ? "test" : "live"] as const) {
          const scope = yield* scopeIn(current, environment)
          const found = yield* Effect.option(webhooks.find(scope, webhookId))
          if (Option.isSome(found)) return Option.some({ scope, endpoint: found.value })
        }
        return Option.none()
      })

    const redirect = (to: string, kind: "success" | "error", text: string) =>
      auth.withFlash(HttpServerResponse.redirect(to, { status: 303 }), { kind, text })

    /** Runs `action` on the located endpoint; the 404 page when it is not the member's company's (or gone since). */
    const onEndpoint = <E extends { readonly _tag: string }, R>(
      current: CurrentMember,
      webhookId: string,
      action: (
        located: Option.Option.Value<Effect.Effect.Success<ReturnType<typeof locate>>>
      ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      Effect.gen(function* () {
        const located = yield* locate(current, webhookId)
        if (Option.isNone(located)) return notFoundPage(current)
        return yield* action(located.value).pipe(
          Effect.catchIf(
            (error): error is E => error._tag === "WebhookEndpointNotFound" || error._tag === "WebhookDeliveryNotFound",
            () => Effect.succeed(notFoundPage(current))
          )
        )
      })

    return handlers
      .handle("list", ({ request, urlParams }) =>
        auth.page(request, require, (current) =>
          Effect.gen(function* () {
            const environment = environmentParam(urlParams.environment, current)
            const page = pageNumber(urlParams.page)
            const found = yield* webhooks.page(yield* scopeIn(current, environment), pageQuery(page))
            return endpointsPage(current, {
              environment,
              endpoints: found.rows,
              links: { path: "/dashboard/webhooks", params: { environment }, page, hasNext: found.hasNext }
            })
          })
        )
      )
      .handle("newEndpoint", ({ request, urlParams }) =>
        auth.page(request, require, (current) =>
          Effect.succeed(newEndpointPage(current, { environment: environmentParam(urlParams.environment, current) }))
        )
      )
      .handle("create", ({ request, payload }) =>
        auth.form(request, payload.csrf, require, (current) =>
          Effect.gen(function* () {
            const environment = environmentParam(payload.environment, current)
            const url = payload.url.trim()
            const ticked = listOf(payload.eventTypes)
            const again = (errors: Record<string, string> | undefined, status: number, error?: string) =>
              newEndpointPage(
                current,
                {
                  environment,
                  url,
                  eventTypes: ticked,
                  ...(errors === undefined ? {} : { errors }),
                  ...(error === undefined ? {} : { error })
                },
                status
              )
            if (payload.environment !== "test" && payload.environment !== "live") {
              return again({}, 400, "Choose the environment: test or live.")
            }
            const input = createInput(url, payload.eventTypes)
            if (Either.isLeft(input)) return again(input.left, 400)
            const created = yield* Effect.either(webhooks.create(yield* scopeIn(current, environment), input.right))
            if (Either.isLeft(created)) {
              const error = created.left
              if (error._tag === "WebhookEndpointLimitReached") return again(undefined, 422, error.message)
              const errors = Object.fromEntries(error.errors.map((issue) => [issue.path, sentence(issue.message)]))
              return again(errors, 400)
            }
            return createdEndpointPage(current, created.right.endpoint, created.right.secret)
          })
        )
      )
      .handle("endpoint", ({ request, path, urlParams }) =>
        auth.page(request, require, (current) =>
          onEndpoint(current, path.webhookId, ({ scope, endpoint }) =>
            Effect.gen(function* () {
              const page = pageNumber(urlParams.page)
              const found = yield* webhooks.deliveries(scope, endpoint.id, pageQuery(page))
              return endpointPage(current, {
                endpoint,
                deliveries: found.rows,
                latencies: found.latencies,
                links: { path: endpointHref(endpoint.id), params: {}, page, hasNext: found.hasNext }
              })
            })
          )
        )
      )
      .handle("sendTest", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, require, (current) =>
          onEndpoint(current, path.webhookId, ({ scope, endpoint }) =>
            webhooks.sendTest(scope, endpoint.id).pipe(
              Effect.map(() =>
                redirect(endpointHref(endpoint.id), "success", "A test event is on its way: see it under Deliveries.")
              ),
              Effect.catchTag("WebhookEndpointDisabled", (error) =>
                Effect.succeed(redirect(endpointHref(endpoint.id), "error", error.message))
              )
            )
          )
        )
      )
      .handle("setStatus", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, require, (current) =>
          onEndpoint(current, path.webhookId, ({ scope, endpoint }) => {
            const status = payload.status
            if (status !== "active" && status !== "disabled") {
              return Effect.succeed(dashboardErrorPage(400, "The status must be active or disabled; nothing changed."))
            }
            return Effect.map(webhooks.setStatus(scope, endpoint.id, status), () =>
              redirect(
                endpointHref(endpoint.id),
                "success",
                status === "active"
                  ? "Endpoint enabled: later events are sent to it."
                  : "Endpoint disabled: events are recorded but not sent."
              )
            )
          })
        )
      )
      .handle("confirmDelete", ({ request, path }) =>
        auth.page(request, require, (current) =>
          onEndpoint(current, path.webhookId, ({ endpoint }) => Effect.succeed(confirmDeletePage(current, endpoint)))
        )
      )
      .handle("delete", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, require, (current) =>
          onEndpoint(current, path.webhookId, ({ scope, endpoint }) =>
            Effect.map(webhooks.remove(scope, endpoint.id), () =>
              redirect(`/dashboard/webhooks?environment=${endpoint.environment}`, "success", "Endpoint deleted.")
            )
          )
        )
      )
      .handle("delivery", ({ request, path }) =>
        auth.page(request, require, (current) =>
          onEndpoint(current, path.webhookId, ({ scope, endpoint }) =>
            Effect.gen(function* () {
              if (!hexId.test(path.deliveryId)) return notFoundPage(current)
              const found = yield* webhooks.delivery(scope, endpoint.id, path.deliveryId)
              return deliveryPage(current, { endpoint, delivery: found.delivery, attempts: found.attempts })
            })
          )
        )
      )
      .handle("resend", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, require, (current) =>
          onEndpoint(current, path.webhookId, ({ scope, endpoint }) =>
            Effect.gen(function* () {
              if (!hexId.test(path.deliveryId)) return notFoundPage(current)
              const here = deliveryHref(endpoint.id, path.deliveryId.toLowerCase())
              return yield* webhooks.resend(scope, endpoint.id, path.deliveryId).pipe(
                Effect.map(() => redirect(here, "success", "Resent: a new attempt is on its way.")),
                Effect.catchTag("WebhookEndpointDisabled", (error) =>
                  Effect.succeed(redirect(here, "error", error.message))
                )
              )
            })
          )
        )
      )
  })
)
