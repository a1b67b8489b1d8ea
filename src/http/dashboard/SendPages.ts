import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, Multipart, OpenApi } from "@effect/platform"
import { Option, Schema } from "effect"
import { maxUploadBytes } from "../../domain/company/GiftUploads.js"
import { FormText, form, Html } from "./DashboardApi.js"

/**
 * The dashboard's "Send gifts" (docs/dashboard.md "Send gifts"): pick or create a campaign, then send its gift to one
 * recipient from a form or to the rows of a CSV file: the file is judged row by row and previewed, sent once
 * confirmed, followed while it sends, and its result downloaded as CSV.
 */

const Csv = HttpApiSchema.Text({ contentType: "text/csv" })

const UploadPath = Schema.Struct({ uploadId: Schema.String })

/**
 * The upload form: a file (`multipart/form-data`), saved to a temporary file as it arrives. Its body may be larger
 * than the server's limit for other bodies: the file's own cap, and room for the form's few short fields (a file
 * between the cap and this limit is refused by the page, naming the cap).
 */
const UploadForm = HttpApiSchema.Multipart(
  Schema.Struct({
    csrf: FormText,
    campaignId: FormText,
    environment: FormText,
    sendingMethod: FormText,
    file: Multipart.SingleFileSchema
  }),
  { maxTotalSize: Option.some(maxUploadBytes + 64 * 1024) }
)

export class SendPages extends HttpApiGroup.make("dashboardSend")
  .add(
    HttpApiEndpoint.get("send", "/dashboard/send")
      .setUrlParams(Schema.Struct({ environment: FormText, campaignId: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.get("newCampaign", "/dashboard/send/campaigns/new")
      .setUrlParams(Schema.Struct({ environment: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("createCampaign", "/dashboard/send/campaigns")
      .setPayload(
        form({
          environment: FormText,
          name: FormText,
          budgetMin: FormText,
          budgetMax: FormText,
          giftType: FormText,
          swap: FormText,
          collectionId: FormText,
          productId: FormText,
          message: FormText,
          expiryDays: FormText,
          reminders: FormText,
          hideAddress: FormText
        })
      )
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("sendOne", "/dashboard/send/recipient")
      .setPayload(
        form({
          environment: FormText,
          campaignId: FormText,
          sendingMethod: FormText,
          firstName: FormText,
          lastName: FormText,
          email: FormText,
          phone: FormText,
          externalId: FormText,
          country: FormText
        })
      )
      .addSuccess(Html)
  )
  .add(HttpApiEndpoint.post("uploadFile", "/dashboard/send/uploads").setPayload(UploadForm).addSuccess(Html))
  .add(
    HttpApiEndpoint.get("upload", "/dashboard/send/uploads/:uploadId")
      .setPath(UploadPath)
      .setUrlParams(Schema.Struct({ page: FormText }))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.post("confirm", "/dashboard/send/uploads/:uploadId/confirm")
      .setPath(UploadPath)
      .setPayload(form({}))
      .addSuccess(Html)
  )
  .add(
    HttpApiEndpoint.get("result", "/dashboard/send/uploads/:uploadId/result.csv").setPath(UploadPath).addSuccess(Csv)
  )
  .annotate(OpenApi.Exclude, true) {}
