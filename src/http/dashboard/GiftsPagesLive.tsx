import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import type { CampaignRecord } from "../../domain/company/Campaigns.js"
import { CampaignStatus } from "../../domain/company/Campaigns.js"
import type { AccountScope, Environment } from "../../domain/company/Company.js"
import { type GiftRecord, GiftStatus, type GiftWithRecipient } from "../../domain/company/Gifts.js"
import { Campaigns } from "../../services/company/Campaigns.js"
import { CompanyOrders } from "../../services/company/CompanyOrders.js"
import { Gifts } from "../../services/company/Gifts.js"
import { readMode, readModesOf } from "../../services/company/Masking.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Recipients } from "../../services/company/Recipients.js"
import { nowDate } from "../../services/platform/Time.js"
import { Api } from "../Api.js"
import { money } from "./format.js"
import {
  CampaignBody,
  CampaignsBody,
  CancelGiftBody,
  campaignHref,
  GiftBody,
  type GiftRow,
  GiftsBody,
  giftHref,
  shownRecipient
} from "./giftsViews.js"
import { dashboardPage } from "./layout.js"
import { forbiddenPage, notFoundPage } from "./pages.js"
import { dateRangeOf, dayOf, environmentParam, pageNumber } from "./params.js"
import { type CurrentMember, holds, makeDashboardAuth } from "./session.js"

/** Gifts and campaigns per page. */
const rowsPerPage = 20
/** The campaigns the gift list's campaign filter offers (newest first). */
const campaignChoices = 100
/** The gifts a campaign's page shows. */
const campaignGifts = 10
/** The longest search text. */
const searchMaxLength = 100

const redirect = (to: string) => HttpServerResponse.redirect(to, { status: 303 })

/** Whether the member reads gifts at all: either gift read permission, as `GET /v2/gifts` asks. */
const readsGifts = (current: CurrentMember) => readMode(current.grant.permissions, "gifts") !== "none"

/** Whether recipients are masked to the member: as a v2 gift read's `recipient` expansion masks them. */
const masksRecipients = (current: CurrentMember) => readModesOf(current.grant.permissions).recipients === "masked"

const environmentsOf = (current: CurrentMember): ReadonlyArray<Environment> =>
  current.company.live ? ["live", "test"] : ["test"]

const rowOf =
  (masked: boolean) =>
  (row: GiftWithRecipient): GiftRow => ({
    gift: row,
    recipient: shownRecipient(
      {
        firstName: row.recipientFirstName,
        lastName: row.recipientLastName,
        email: row.recipientEmail,
        mobilePhone: row.recipientMobilePhone
      },
      masked
    )
  })

/**
 * The dashboard's gifts and campaigns (docs/dashboard.md "Gifts and campaigns"). Every read and change is the
 * operation the v2 API calls (`Gifts.get`, `Gifts.update`, `Gifts.cancel`, `Campaigns.page`, `Campaigns.update`),
 * under the member's scope and the same permissions; the list is `Gifts.pageWithRecipients`, filtered and paged in
 * SQL, recipients masked as a v2 read masks them. `Gifts.resend` sends an open gift's link again.
 */
export const GiftsPagesLive = HttpApiBuilder.group(Api, "dashboardGifts", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const gifts = yield* Gifts
    const campaigns = yield* Campaigns
    const recipients = yield* Recipients
    const orders = yield* CompanyOrders
    const policy = yield* CompanyPolicy

    const scopeOf = (current: CurrentMember, environment: Environment) =>
      Effect.orDie(policy.scopeForMember(current.member, environment))

    /** A gift in whichever of the company's environments the member reaches it, with that scope; none: 404. */
    const findGift = (current: CurrentMember, giftId: string) =>
      Effect.firstSuccessOf(
        environmentsOf(current).map((environment) =>
          Effect.flatMap(scopeOf(current, environment), (scope) =>
            Effect.map(gifts.get(scope, giftId), (gift) => ({ scope, gift }))
          )
        )
      ).pipe(Effect.option)

    /** A campaign likewise. */
    const findCampaign = (current: CurrentMember, campaignId: string) =>
      Effect.firstSuccessOf(
        environmentsOf(current).map((environment) =>
          Effect.flatMap(scopeOf(current, environment), (scope) =>
            Effect.map(campaigns.get(scope, campaignId), (campaign) => ({ scope, campaign }))
          )
        )
      ).pipe(Effect.option)

    const recipientOf = (current: CurrentMember, scope: AccountScope, recipientId: string) =>
      Effect.map(Effect.orDie(recipients.get(scope, recipientId, { includeDeleted: true })), (recipient) =>
        shownRecipient(recipient, masksRecipients(current))
      )

    const giftPage = (current: CurrentMember, scope: AccountScope, gift: GiftRecord) =>
      Effect.gen(function* () {
        const campaign = yield* Effect.orDie(campaigns.get(scope, gift.campaignId))
        const recipient = yield* recipientOf(current, scope, gift.recipientId)
        const messages = yield* Effect.orDie(gifts.messagesOf(scope, gift.id))
        const order = gift.orderId === null ? null : yield* Effect.orDie(orders.get(scope, gift.orderId))
        const undeliverable = yield* gifts.undeliverableCountries(gift)
        const today = (yield* nowDate).toISOString().slice(0, 10)
        return dashboardPage(
          `Gift to ${recipient.name}`,
          current,
          <GiftBody
            csrf={current.csrf}
            gift={gift}
            link={gifts.linkOf(gift)}
            campaign={campaign}
            recipient={recipient}
            messages={messages}
            masked={masksRecipients(current)}
            order={order}
            undeliverable={undeliverable}
            canChange={holds(current.grant, "gifts:update")}
            today={today}
          />,
          { section: "/dashboard/gifts" }
        )
      })

    /** A gift form's change: the gift found (404 otherwise), then `change`, whose message is flashed on the gift. */
    const changeGift = (
      current: CurrentMember,
      giftId: string,
      change: (
        scope: AccountScope,
        giftId: string
      ) => Effect.Effect<{ readonly kind: "success" | "error"; readonly text: string }>
    ) =>
      Effect.gen(function* () {
        const found = yield* findGift(current, giftId)
        if (Option.isNone(found)) return notFoundPage(current)
        const { scope, gift } = found.value
        const message = yield* change(scope, gift.id)
        return auth.withFlash(redirect(giftHref(gift.id)), message)
      })

    const refused = (error: { readonly message: string }) =>
      Effect.succeed({ kind: "error" as const, text: error.message })

    return handlers
      .handle("gifts", ({ request, urlParams }) =>
        auth.page(request, {}, (current) =>
          Effect.gen(function* () {
            if (!readsGifts(current)) return forbiddenPage(current)
            const environment = environmentParam(urlParams.environment, current)
            const scope = yield* scopeOf(current, environment)
            const read = dateRangeOf(urlParams)
            const problems = [...read.problems]
            const status = urlParams.status.trim()
            if (status !== "" && !(GiftStatus.literals as ReadonlyArray<string>).includes(status)) {
              problems.push(`Status: expected one of ${GiftStatus.literals.join(", ")}.`)
            }
            const masked = masksRecipients(current)
            const q = urlParams.q.trim()
            if (q !== "" && masked) {
              problems.push("Recipient: your role reads recipients masked, so it does not search them.")
            } else if (q.length > searchMaxLength) {
              problems.push(`Recipient: at most ${searchMaxLength} characters.`)
            }
            const campaign = urlParams.campaign.trim()
            const page = pageNumber(urlParams.page)
            const choices = yield* Effect.orDie(campaigns.page(scope, { skip: 0, limit: campaignChoices }))
            const rows =
              problems.length > 0
                ? []
                : yield* gifts.pageWithRecipients(scope, {
                    skip: (page - 1) * rowsPerPage,
                    limit: rowsPerPage + 1,
                    statuses: status === "" ? [] : [status as GiftStatus],
                    campaignIds: campaign === "" ? [] : [campaign],
                    keys: [],
                    createdBefore: read.until ?? undefined,
                    createdAfter: undefined,
                    createdFrom: read.from ?? undefined,
                    search: q === "" ? undefined : q
                  })
            const filters = { environment, status, campaign, from: read.filters.from, to: read.filters.to, q }
            const params = { ...filters, environment: current.company.live ? environment : "" }
            return dashboardPage(
              "Gifts",
              current,
              <GiftsBody
                live={current.company.live}
                filters={filters}
                searchable={!masked}
                problems={problems}
                campaigns={choices}
                rows={rows.slice(0, rowsPerPage).map(rowOf(masked))}
                links={{ path: "/dashboard/gifts", params, page, hasNext: rows.length > rowsPerPage }}
              />,
              { section: "/dashboard/gifts", status: problems.length === 0 ? 200 : 400 }
            )
          })
        )
      )
      .handle("gift", ({ request, path }) =>
        auth.page(request, {}, (current) =>
          Effect.gen(function* () {
            if (!readsGifts(current)) return forbiddenPage(current)
            const found = yield* findGift(current, path.giftId)
            if (Option.isNone(found)) return notFoundPage(current)
            return yield* giftPage(current, found.value.scope, found.value.gift)
          })
        )
      )
      .handle("confirmCancel", ({ request, path }) =>
        auth.page(request, { require: "gifts:update" }, (current) =>
          Effect.gen(function* () {
            const found = yield* findGift(current, path.giftId)
            if (Option.isNone(found)) return notFoundPage(current)
            const { scope, gift } = found.value
            const recipient = yield* recipientOf(current, scope, gift.recipientId)
            return dashboardPage(
              "Cancel the gift",
              current,
              <CancelGiftBody csrf={current.csrf} gift={gift} recipient={recipient} />,
              { section: "/dashboard/gifts" }
            )
          })
        )
      )
      .handle("cancel", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, { require: "gifts:update" }, (current) =>
          changeGift(current, path.giftId, (scope, giftId) =>
            Effect.gen(function* () {
              const before = yield* gifts.get(scope, giftId)
              yield* gifts.cancel(scope, giftId)
              return {
                kind: "success" as const,
                text: `The gift is cancelled: ${money(before.reserved, before.currency)} is credited back to its billing method.`
              }
            }).pipe(Effect.catchTags({ GiftClosed: refused, GiftNotFound: refused }))
          )
        )
      )
      .handle("changeExpiry", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, { require: "gifts:update" }, (current) =>
          changeGift(current, path.giftId, (scope, giftId) => {
            const day = dayOf(payload.expiresOn.trim())
            if (day === undefined) {
              return Effect.succeed({
                kind: "error" as const,
                text: "New expiry date: expected a date as YYYY-MM-DD. Nothing was changed."
              })
            }
            // The end of that day in UTC, as a campaign's expiry date is read.
            const expirationDate = new Date(day.getTime() + 86_400_000 - 1000)
            return gifts.update(scope, giftId, { expirationDate }).pipe(
              Effect.map((changed) => ({
                kind: "success" as const,
                text: `The gift now expires at ${changed.expiresAt.toISOString().slice(0, 19).replace("T", " ")} UTC.`
              })),
              Effect.catchTags({
                InvalidRequest: (error) =>
                  Effect.succeed({
                    kind: "error" as const,
                    text: `${error.errors[0]?.message ?? error.message} Nothing was changed.`
                  }),
                GiftClosed: refused,
                GiftNotFound: refused
              })
            )
          })
        )
      )
      .handle("resend", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, { require: "gifts:update" }, (current) =>
          changeGift(current, path.giftId, (scope, giftId) =>
            gifts.resend(scope, giftId).pipe(
              Effect.map((sent) =>
                sent
                  ? { kind: "success" as const, text: "The gift's link was sent again to its recipient." }
                  : {
                      kind: "error" as const,
                      text: "Nothing was sent: the gift goes by its link alone, or its recipient has no address for it."
                    }
              ),
              Effect.catchTags({ GiftClosed: refused, GiftNotFound: refused })
            )
          )
        )
      )
      .handle("campaigns", ({ request, urlParams }) =>
        auth.page(request, { require: "campaigns:read" }, (current) =>
          Effect.gen(function* () {
            const environment = environmentParam(urlParams.environment, current)
            const scope = yield* scopeOf(current, environment)
            const status = urlParams.status.trim()
            const q = urlParams.q.trim()
            const problems: Array<string> = []
            if (status !== "" && !(CampaignStatus.literals as ReadonlyArray<string>).includes(status)) {
              problems.push(`Status: expected one of ${CampaignStatus.literals.join(", ")}.`)
            }
            if (q.length > searchMaxLength) problems.push(`Name or id: at most ${searchMaxLength} characters.`)
            const page = pageNumber(urlParams.page)
            const rows: ReadonlyArray<CampaignRecord> =
              problems.length > 0
                ? []
                : yield* Effect.orDie(
                    campaigns.page(scope, {
                      skip: (page - 1) * rowsPerPage,
                      limit: rowsPerPage + 1,
                      statuses: status === "" ? [] : [status as CampaignStatus],
                      search: q
                    })
                  )
            const filters = { environment, status, q }
            const params = { ...filters, environment: current.company.live ? environment : "" }
            return dashboardPage(
              "Campaigns",
              current,
              <CampaignsBody
                live={current.company.live}
                filters={filters}
                problems={problems}
                campaigns={rows.slice(0, rowsPerPage)}
                links={{ path: "/dashboard/campaigns", params, page, hasNext: rows.length > rowsPerPage }}
              />,
              { section: "/dashboard/campaigns", status: problems.length === 0 ? 200 : 400 }
            )
          })
        )
      )
      .handle("campaign", ({ request, path }) =>
        auth.page(request, { require: "campaigns:read" }, (current) =>
          Effect.gen(function* () {
            const found = yield* findCampaign(current, path.campaignId)
            if (Option.isNone(found)) return notFoundPage(current)
            const { scope, campaign } = found.value
            const masked = masksRecipients(current)
            const rows = readsGifts(current)
              ? yield* gifts.pageWithRecipients(scope, {
                  skip: 0,
                  limit: campaignGifts + 1,
                  statuses: [],
                  campaignIds: [campaign.id],
                  keys: [],
                  createdBefore: undefined,
                  createdAfter: undefined
                })
              : undefined
            return dashboardPage(
              campaign.name,
              current,
              <CampaignBody
                csrf={current.csrf}
                campaign={campaign}
                canChange={holds(current.grant, "campaigns:update")}
                gifts={rows?.slice(0, campaignGifts).map(rowOf(masked))}
                moreGifts={(rows?.length ?? 0) > campaignGifts}
              />,
              { section: "/dashboard/campaigns" }
            )
          })
        )
      )
      .handle("campaignStatus", ({ request, path, payload }) =>
        auth.form(request, payload.csrf, { require: "campaigns:update" }, (current) =>
          Effect.gen(function* () {
            const found = yield* findCampaign(current, path.campaignId)
            if (Option.isNone(found)) return notFoundPage(current)
            const { scope, campaign } = found.value
            const back = campaignHref(campaign.id)
            const status = payload.status
            if (status !== "active" && status !== "paused") {
              return auth.withFlash(redirect(back), {
                kind: "error",
                text: "Status: a campaign is paused or activated here."
              })
            }
            const outcome = yield* campaigns.update(scope, campaign.id, { status }).pipe(
              Effect.map((changed) => ({
                kind: "success" as const,
                text: changed.status === "paused" ? "The campaign is paused." : "The campaign is active."
              })),
              Effect.catchAll((error) => Effect.succeed({ kind: "error" as const, text: error.message }))
            )
            return auth.withFlash(redirect(back), outcome)
          })
        )
      )
  })
)
