import * as Fs from "node:fs"
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import type { CampaignRecord } from "../../domain/company/Campaigns.js"
import type { Environment } from "../../domain/company/Company.js"
import type { SendingMethod } from "../../domain/company/Gifts.js"
import { type GiftUploadRow, maxUploadBytes } from "../../domain/company/GiftUploads.js"
import { Catalog } from "../../services/catalog/Catalog.js"
import { Campaigns } from "../../services/company/Campaigns.js"
import { Gifts } from "../../services/company/Gifts.js"
import { GiftUploads } from "../../services/company/GiftUploads.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import { CreateCampaignV2 } from "../company/CampaignsApi.js"
import { followLiveRegion } from "./components.js"
import { csvOf } from "./csv.js"
import { dashboardPage } from "./layout.js"
import { notFoundPage } from "./pages.js"
import { environmentParam, pageNumber } from "./params.js"
import {
  CampaignFormBody,
  type FieldErrors,
  SendBody,
  type SendPageProps,
  sendingMethods,
  UploadBody
} from "./sendViews.js"
import { type CurrentMember, holds, makeDashboardAuth } from "./session.js"

/** Invalid rows per page of an upload's preview. */
const invalidPerPage = 50
/** Valid rows the preview shows before the confirm step. */
const validShown = 10
/** Active campaigns the picker offers, newest first. */
const campaignsShown = 100
/** Uploads the send page lists. */
const uploadsShown = 10

const section = "/dashboard/send" as const

const redirect = (to: string) => HttpServerResponse.redirect(to, { status: 303 })

const sendHref = (environment: Environment, campaignId?: string) =>
  `/dashboard/send?${new URLSearchParams({ environment, ...(campaignId === undefined ? {} : { campaignId }) })}`

const uploadHref = (uploadId: string) => `/dashboard/send/uploads/${encodeURIComponent(uploadId)}`

const methodOf = (text: string): SendingMethod =>
  sendingMethods.some(([method]) => method === text) ? (text as SendingMethod) : "email"

/** The campaign form's field each path of `POST /v2/campaigns` names. */
const campaignFieldOf = (path: string): string => {
  if (path.startsWith("name")) return "name"
  if (path.includes("budget.min")) return "budgetMin"
  if (path.includes("budget")) return "budgetMax"
  if (path.includes("productId")) return "productId"
  if (path.includes("collectionId")) return "collectionId"
  if (path.includes("expiration")) return "expiryDays"
  if (path.includes("message")) return "message"
  if (path.includes("selectedGiftType")) return "giftType"
  if (path.includes("swap")) return "swap"
  return "form"
}

const fieldLabels: Readonly<Record<string, string>> = {
  name: "Name",
  budgetMin: "Smallest gift",
  budgetMax: "Largest gift",
  productId: "Product id",
  collectionId: "Collection",
  expiryDays: "Days a gift stays open",
  message: "Message",
  giftType: "What recipients choose from",
  swap: "Swap",
  form: "Campaign",
  firstName: "First name",
  lastName: "Last name",
  email: "E-mail",
  phone: "Phone",
  externalId: "External id",
  country: "Country",
  key: "Key",
  row: "Recipient"
}

/** Problems by field, each message starting with its field's label, as the summary and the field both show. */
const labelled = (problems: ReadonlyArray<readonly [string, string]>): FieldErrors => {
  const errors: Record<string, string> = {}
  for (const [field, message] of problems) {
    if (errors[field] !== undefined) continue
    const text = message.replace(/, actual [\s\S]*$/, "")
    errors[field] = `${fieldLabels[field] ?? field}: ${text.charAt(0).toLowerCase()}${text.slice(1)}`
  }
  return errors
}

/** A number as the form gave it, or the text (so the API's schema names what is wrong with it). */
const numberOf = (text: string): number | string => {
  const trimmed = text.trim()
  return trimmed !== "" && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed
}

const decodeCampaign = Schema.decodeUnknownEither(CreateCampaignV2, { errors: "all" })

const resultHeader = ["line", "key", "gift_id", "gift_link", "outcome", "message"]

const resultRow = (row: GiftUploadRow) => [
  String(row.line),
  row.key,
  row.giftId,
  row.giftLink,
  row.problem !== null ? "invalid" : (row.outcome ?? "pending"),
  row.problem ?? row.message
]

/**
 * The dashboard's "Send gifts" (docs/dashboard.md "Send gifts"), for members with `gifts:create` (creating a campaign
 * needs `campaigns:create`): the campaign picker (`Campaigns.page`, active ones), `Campaigns.create` (as
 * `POST /v2/campaigns`), one recipient through `Gifts.create` (as `POST /v2/gifts`), and CSV uploads
 * (`GiftUploads`), judged with the same recipient schema and sent through the same `Gifts.create`.
 */
export const SendPagesLive = HttpApiBuilder.group(Api, "dashboardSend", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const policy = yield* CompanyPolicy
    const campaigns = yield* Campaigns
    const gifts = yield* Gifts
    const uploads = yield* GiftUploads
    const catalog = yield* Catalog

    const environmentsOf = (current: CurrentMember): ReadonlyArray<Environment> =>
      current.company.live ? ["test", "live"] : ["test"]

    const scopeOf = (current: CurrentMember, environment: Environment) =>
      Effect.orDie(policy.scopeForMember(current.member, environment))

    /** The send page for a campaign (if it is an active one the member reaches), with a form's state. */
    const sendPage = (
      current: CurrentMember,
      environmentText: string,
      campaignId: string,
      extra: Pick<SendPageProps, "one" | "uploadError"> = {},
      status = 200
    ) =>
      Effect.gen(function* () {
        const environment = environmentParam(environmentText, current)
        const scope = yield* scopeOf(current, environment)
        const active = yield* Effect.orDie(
          campaigns.page(scope, { skip: 0, limit: campaignsShown, statuses: ["active"] })
        )
        const campaign: CampaignRecord | undefined =
          campaignId === "" ? undefined : active.find((candidate) => candidate.id === campaignId.toLowerCase())
        const destinations = campaign === undefined ? [] : [...(yield* gifts.destinationsOf(campaign))].sort()
        const recent = yield* uploads.recent(scope, uploadsShown)
        const props: SendPageProps = {
          csrf: current.csrf,
          environment,
          environments: environmentsOf(current),
          campaigns: active,
          campaign,
          destinations,
          canCreateCampaign: holds(current.grant, "campaigns:create"),
          uploads: recent,
          ...extra
        }
        return dashboardPage("Send gifts", current, <SendBody {...props} />, { section, status })
      })

    const campaignForm = (
      current: CurrentMember,
      environmentText: string,
      values: Readonly<Record<string, string>>,
      errors: FieldErrors,
      status: number
    ) =>
      Effect.gen(function* () {
        const environment = environmentParam(environmentText, current)
        // Any country the catalog prices for: the list is of collections, not of prices.
        const [country] = yield* gifts.destinations()
        // A catalog without prices yet lists no collection: the product id still works.
        const collections = yield* catalog
          .collections({ limit: 100, country })
          .pipe(Effect.catchTag("InvalidRequest", () => Effect.succeed([])))
        return dashboardPage(
          "Create a campaign",
          current,
          <CampaignFormBody
            csrf={current.csrf}
            environment={environment}
            collections={collections}
            values={values}
            errors={errors}
          />,
          { section, status }
        )
      })

    /** An upload the member reaches, with its campaign; none: the 404 page. */
    const uploadOf = (current: CurrentMember, uploadId: string) =>
      Effect.gen(function* () {
        for (const environment of environmentsOf(current)) {
          const found = yield* uploads.find(yield* scopeOf(current, environment), uploadId)
          if (Option.isSome(found)) return found
        }
        return Option.none()
      })

    return handlers
      .handle("send", ({ request, urlParams }) =>
        auth.page(request, { require: "gifts:create" }, (current) =>
          sendPage(current, urlParams.environment, urlParams.campaignId)
        )
      )
      .handle("newCampaign", ({ request, urlParams }) =>
        auth.page(request, { require: "campaigns:create" }, (current) =>
          campaignForm(current, urlParams.environment, {}, {}, 200)
        )
      )
      .handle("createCampaign", ({ request, payload }) =>
        auth.form(request, payload.csrf, { require: "campaigns:create" }, (current) =>
          Effect.gen(function* () {
            const { csrf: _, ...values } = payload
            const environment = environmentParam(payload.environment, current)
            const giftType = payload.giftType === "product" ? "product" : "collection"
            const candidate = {
              name: payload.name.trim(),
              status: "active",
              hideRecipientAddress: payload.hideAddress === "on",
              customization: {
                giftProperties: {
                  selectedGiftType: giftType,
                  ...(giftType === "product"
                    ? { productId: payload.productId.trim(), ...(payload.swap === "" ? {} : { swap: payload.swap }) }
                    : { collectionId: payload.collectionId.trim() }),
                  budget: { min: numberOf(payload.budgetMin), max: numberOf(payload.budgetMax) },
                  expiration: { daysFromSend: numberOf(payload.expiryDays) }
                },
                notificationPolicy: {
                  sendingChannels: ["email", "sms", "link"],
                  disableReminders: payload.reminders !== "on"
                },
                message: payload.message.trim() === "" ? null : payload.message.trim()
              }
            }
            const formValues = {
              ...values,
              reminders: payload.reminders === "on" ? "on" : "off",
              hideAddress: payload.hideAddress === "on" ? "on" : "off"
            }
            const decoded = decodeCampaign(candidate)
            if (Either.isLeft(decoded)) {
              const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
              const errors = labelled(
                issues.map((issue) => [campaignFieldOf(issue.path.join(".")), issue.message] as const)
              )
              return yield* campaignForm(current, environment, formValues, errors, 400)
            }
            const body = decoded.right
            const scope = yield* scopeOf(current, environment)
            const created = yield* Effect.either(
              campaigns.create(
                { scope, account: Option.none(), source: null },
                {
                  name: body.name,
                  status: body.status,
                  giftProperties: body.customization.giftProperties,
                  notificationPolicy: body.customization.notificationPolicy,
                  message: body.customization.message,
                  hideRecipientAddress: body.hideRecipientAddress
                }
              )
            )
            if (Either.isLeft(created)) {
              const error = created.left
              const problems: ReadonlyArray<readonly [string, string]> =
                error._tag === "InvalidRequest"
                  ? error.errors.map((issue) => [campaignFieldOf(issue.path), issue.message] as const)
                  : error._tag === "ProductNotFound"
                    ? [["productId", "No product of the catalog has this id."]]
                    : error._tag === "CollectionNotFound"
                      ? [["collectionId", "No collection of the catalog has this id."]]
                      : [["form", error.message]]
              return yield* campaignForm(current, environment, formValues, labelled(problems), 400)
            }
            return auth.withFlash(redirect(sendHref(environment, created.right.id)), {
              kind: "success",
              text: `Campaign ${created.right.name} created: it is active, ready to send gifts from.`
            })
          })
        )
      )
      .handle("sendOne", ({ request, payload }) =>
        auth.form(request, payload.csrf, { require: "gifts:create" }, (current) =>
          Effect.gen(function* () {
            const { csrf: _, ...values } = payload
            const environment = environmentParam(payload.environment, current)
            const scope = yield* scopeOf(current, environment)
            const sent = yield* Effect.either(
              uploads.sendOne(
                { scope, userId: current.user.id },
                {
                  campaignId: payload.campaignId,
                  sendingMethod: methodOf(payload.sendingMethod),
                  fields: {
                    firstName: payload.firstName,
                    lastName: payload.lastName,
                    email: payload.email,
                    phone: payload.phone,
                    externalId: payload.externalId,
                    country: payload.country
                  }
                }
              )
            )
            if (Either.isLeft(sent)) {
              return auth.withFlash(redirect(sendHref(environment)), { kind: "error", text: sent.left.message })
            }
            const outcome = sent.right
            if ("problems" in outcome) {
              const errors = labelled(outcome.problems.map((problem) => [problem.column, problem.message] as const))
              return yield* sendPage(current, environment, payload.campaignId, { one: { values, errors } }, 400)
            }
            const { result, link } = outcome
            const who = `${payload.firstName.trim()} ${payload.lastName.trim()}`
            if (!result.success) {
              const errors = labelled([["row", result.message]])
              return yield* sendPage(current, environment, payload.campaignId, { one: { values, errors } }, 422)
            }
            return auth.withFlash(redirect(sendHref(environment, payload.campaignId)), {
              kind: "success",
              text: result.created
                ? `Gift sent to ${who}: ${link}`
                : `${who} already had a gift of this campaign (key ${result.gift.key}): ${link}`
            })
          })
        )
      )
      .handle("uploadFile", ({ request, payload }) =>
        auth.form(request, payload.csrf, { require: "gifts:create" }, (current) =>
          Effect.gen(function* () {
            const environment = environmentParam(payload.environment, current)
            const refused = (message: string, status: number) =>
              sendPage(current, environment, payload.campaignId, { uploadError: message }, status)
            const size = yield* Effect.promise(() => Fs.promises.stat(payload.file.path).then((stat) => stat.size))
            if (size > maxUploadBytes) {
              return yield* refused(
                `The file is larger than ${Math.round(maxUploadBytes / 1024)} KB: split it and upload each part.`,
                413
              )
            }
            const scope = yield* scopeOf(current, environment)
            const made = yield* Effect.either(
              uploads.upload(
                { scope, userId: current.user.id },
                {
                  campaignId: payload.campaignId,
                  sendingMethod: methodOf(payload.sendingMethod),
                  fileName: payload.file.name === "" ? "upload.csv" : payload.file.name,
                  bytes: Fs.createReadStream(payload.file.path)
                }
              )
            )
            if (Either.isLeft(made)) {
              const error = made.left
              if (error._tag === "GiftUploadRefused") return yield* refused(error.message, 400)
              return auth.withFlash(redirect(sendHref(environment)), { kind: "error", text: error.message })
            }
            return redirect(uploadHref(made.right.id))
          })
        )
      )
      .handle("upload", ({ request, path, urlParams }) =>
        auth.page(request, { require: "gifts:create" }, (current) =>
          Effect.gen(function* () {
            const found = yield* uploadOf(current, path.uploadId)
            if (Option.isNone(found)) return notFoundPage(current)
            const { upload, campaign } = found.value
            const page = pageNumber(urlParams.page)
            const [progress, invalid, firstValid] = yield* Effect.all([
              uploads.progress(upload),
              uploads.rows(upload, "invalid", { offset: (page - 1) * invalidPerPage, limit: invalidPerPage + 1 }),
              uploads.rows(upload, "valid", { offset: 0, limit: validShown })
            ])
            return dashboardPage(
              `Upload ${upload.fileName}`,
              current,
              <UploadBody
                csrf={current.csrf}
                upload={upload}
                campaign={campaign}
                progress={progress}
                invalidRows={invalid.slice(0, invalidPerPage)}
                invalidLinks={{
                  path: uploadHref(upload.id),
                  params: {},
                  page,
                  hasNext: invalid.length > invalidPerPage
                }}
                firstValidRows={firstValid}
                canSend={true}
              />,
              { section, ...(upload.status === "sending" ? { script: followLiveRegion("send-progress-region") } : {}) }
            )
          })
        )
      )
      .handle("confirm", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, { require: "gifts:create" }, (current) =>
          Effect.gen(function* () {
            const found = yield* uploadOf(current, path.uploadId)
            if (Option.isNone(found)) return notFoundPage(current)
            const { upload } = found.value
            const started = yield* uploads.confirm(upload)
            const valid = upload.rowCount - upload.invalidCount
            return auth.withFlash(
              redirect(uploadHref(upload.id)),
              started
                ? { kind: "success", text: `Sending ${valid.toLocaleString("en")} gifts.` }
                : valid === 0
                  ? { kind: "error", text: "No row of this file can be sent." }
                  : { kind: "success", text: "This upload was confirmed already." }
            )
          })
        )
      )
      .handle("result", ({ request, path }) =>
        auth.page(request, { require: "gifts:create" }, (current) =>
          Effect.gen(function* () {
            const found = yield* uploadOf(current, path.uploadId)
            if (Option.isNone(found)) return notFoundPage(current)
            const { upload } = found.value
            const rows = yield* uploads.rows(upload, "all", { offset: 0, limit: upload.rowCount })
            return HttpServerResponse.text(csvOf(resultHeader, rows.map(resultRow)), {
              contentType: "text/csv; charset=utf-8",
              headers: { "content-disposition": `attachment; filename="gifts-${upload.id}.csv"` }
            })
          })
        )
      )
  })
)
