import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's gifts and campaigns (docs/dashboard.md "Gifts and campaigns"): the gifts, filtered by status,
 * campaign, dates and recipient; a gift's history, messages and order, and its cancel, new expiry and link sent
 * again; the campaigns, filtered by status and name, a campaign's settings and gifts, and pausing or activating it.
 */

const GiftPath = Schema.Struct({ giftId: Schema.String })
const CampaignPath = Schema.Struct({ campaignId: Schema.String })

export class GiftsPages extends HttpApiGroup.make("dashboardGifts")
  .add(
    HttpApiEndpoint.get("gifts", "/dashboard/gifts")
      .setUrlParams(
        Schema.Struct({
          environment: FormText,
          status: FormText,
          campaign: FormText,
          from: FormText,
          to: FormText,
          q: FormText,
          page: FormText
        })
      )
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("gift", "/dashboard/gifts/:giftId").setPath(GiftPath).addSuccess(Html))
  .add(HttpApiEndpoint.get("confirmCancel", "/dashboard/gifts/:giftId/cancel").setPath(GiftPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("cancel", "/dashboard/gifts/:giftId/cancel")
      .setPath(GiftPath)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("changeExpiry", "/dashboard/gifts/:giftId/expiry")
      .setPath(GiftPath)
      .setPayload(form({ expiresOn: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("resend", "/dashboard/gifts/:giftId/resend")
      .setPath(GiftPath)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.get("campaigns", "/dashboard/campaigns")
      .setUrlParams(Schema.Struct({ environment: FormText, status: FormText, q: FormText, page: FormText }))
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.get("campaign", "/dashboard/campaigns/:campaignId").setPath(CampaignPath).addSuccess(Html))
  .add(
    HttpApiEndpoint.post("campaignStatus", "/dashboard/campaigns/:campaignId/status")
      .setPath(CampaignPath)
      .setPayload(form({ status: FormText }))
      .addSuccess(Html)
  )
  .annotate(OpenApi.Exclude, true) {}
