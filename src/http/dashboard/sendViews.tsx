import type { CampaignRecord, SwapSetting } from "../../domain/company/Campaigns.js"
import type { Environment } from "../../domain/company/Company.js"
import type { SendingMethod } from "../../domain/company/Gifts.js"
import {
  type GiftUploadProgress,
  type GiftUploadRecord,
  type GiftUploadRow,
  maxUploadBytes,
  maxUploadRows,
  uploadColumns
} from "../../domain/company/GiftUploads.js"
import { CsrfField, EmptyState, Field, FormError, type PageLinks, Table, When } from "./components.js"
import { money } from "./format.js"

/** The views of the dashboard's "Send gifts" (docs/dashboard.md "Send gifts"). */

export const sendingMethods: ReadonlyArray<readonly [SendingMethod, string]> = [
  ["email", "By e-mail"],
  ["sms", "By text message"],
  ["link", "As a link only (you hand it over)"]
]

const environmentNames: Readonly<Record<Environment, string>> = { test: "Test (sandbox)", live: "Live" }

/** Problems of a form, by field name. */
export type FieldErrors = Readonly<Record<string, string>>

const expiryOf = (campaign: CampaignRecord) =>
  campaign.expirationDate === null
    ? `${campaign.expirationDays} days after sending`
    : `on ${campaign.expirationDate.toISOString().slice(0, 10)}`

const MethodSelect = (props: { readonly id: string; readonly value: string }) => (
  <div class="field">
    <label htmlFor={props.id}>How each recipient gets the link</label>
    <select id={props.id} name="sendingMethod">
      {sendingMethods.map(([value, label]) => (
        <option value={value} selected={value === props.value} key={value}>
          {label}
        </option>
      ))}
    </select>
  </div>
)

const ErrorSummary = ({ errors, title }: { readonly errors: FieldErrors; readonly title: string }) =>
  Object.keys(errors).length === 0 ? null : (
    <FormError>
      <p>{title}</p>
      <ul>
        {Object.entries(errors).map(([field, message]) => (
          <li key={field}>{message}</li>
        ))}
      </ul>
    </FormError>
  )

export interface SendPageProps {
  readonly csrf: string
  readonly environment: Environment
  readonly environments: ReadonlyArray<Environment>
  readonly campaigns: ReadonlyArray<CampaignRecord>
  readonly campaign: CampaignRecord | undefined
  readonly destinations: ReadonlyArray<string>
  readonly canCreateCampaign: boolean
  readonly uploads: ReadonlyArray<GiftUploadRecord>
  /** The single-recipient form as sent, with its problems. */
  readonly one?: { readonly values: Readonly<Record<string, string>>; readonly errors: FieldErrors }
  /** Why the last file was refused. */
  readonly uploadError?: string
}

const CampaignPicker = (props: SendPageProps) => (
  <form class="filters" method="get" action="/dashboard/send" aria-label="Campaign">
    {props.environments.length > 1 ? (
      <div class="filter">
        <label htmlFor="pick-environment">Environment</label>
        <select id="pick-environment" name="environment">
          {props.environments.map((environment) => (
            <option value={environment} selected={environment === props.environment} key={environment}>
              {environmentNames[environment]}
            </option>
          ))}
        </select>
      </div>
    ) : null}
    <div class="filter">
      <label htmlFor="pick-campaign">Campaign</label>
      <select id="pick-campaign" name="campaignId">
        <option value="">Choose an active campaign</option>
        {props.campaigns.map((campaign) => (
          <option value={campaign.id} selected={campaign.id === props.campaign?.id} key={campaign.id}>
            {campaign.name}
          </option>
        ))}
      </select>
    </div>
    <button type="submit" class="secondary">
      Choose
    </button>
  </form>
)

const OneRecipientForm = (props: SendPageProps & { readonly campaign: CampaignRecord }) => {
  const values = props.one?.values ?? {}
  const errors = props.one?.errors ?? {}
  return (
    <form method="post" action="/dashboard/send/recipient" aria-labelledby="one-recipient" novalidate>
      <h2 id="one-recipient">One recipient</h2>
      <ErrorSummary errors={errors} title="The gift was not sent:" />
      <CsrfField token={props.csrf} />
      <input type="hidden" name="campaignId" value={props.campaign.id} />
      <input type="hidden" name="environment" value={props.environment} />
      <Field name="firstName" label="First name" value={values.firstName} error={errors.firstName} maxLength={100} />
      <Field name="lastName" label="Last name" value={values.lastName} error={errors.lastName} maxLength={100} />
      <Field
        name="email"
        label="E-mail"
        type="email"
        value={values.email}
        error={errors.email}
        hint="Needed to send by e-mail; also the gift's key unless an external id is given."
        required={false}
      />
      <Field name="phone" label="Phone" value={values.phone} error={errors.phone} required={false} />
      <Field
        name="externalId"
        label="External id"
        value={values.externalId}
        error={errors.externalId}
        hint="Your own id for this person: the gift's key when given."
        required={false}
      />
      <Field
        name="country"
        label="Country"
        value={values.country}
        error={errors.country}
        hint={`A two-letter code of a country this campaign ships to: ${props.destinations.join(", ") || "none"}.`}
        maxLength={2}
      />
      <MethodSelect id="one-sendingMethod" value={values.sendingMethod ?? "email"} />
      <button type="submit">Send the gift</button>
    </form>
  )
}

const UploadForm = (props: SendPageProps & { readonly campaign: CampaignRecord }) => (
  <form method="post" action="/dashboard/send/uploads" encType="multipart/form-data" aria-labelledby="upload-csv">
    <h2 id="upload-csv">Many recipients: a CSV file</h2>
    {props.uploadError === undefined ? null : (
      <FormError>
        <p>{props.uploadError}</p>
      </FormError>
    )}
    <p>
      A header line naming the columns <code>{uploadColumns.join(",")}</code> (in any order; <code>phone</code> and{" "}
      <code>externalId</code> may be left out), then a row per recipient: at most {maxUploadRows.toLocaleString("en")}{" "}
      rows and {Math.round(maxUploadBytes / 1024).toLocaleString("en")} KB, UTF-8 (with or without a BOM), fields with
      commas or quotes in double quotes. Every row is checked first: nothing is sent until you confirm.
    </p>
    <CsrfField token={props.csrf} />
    <input type="hidden" name="campaignId" value={props.campaign.id} />
    <input type="hidden" name="environment" value={props.environment} />
    <div class="field">
      <label htmlFor="file">CSV file</label>
      <input id="file" name="file" type="file" accept=".csv,text/csv" required />
    </div>
    <MethodSelect id="upload-sendingMethod" value="email" />
    <button type="submit">Check the file</button>
  </form>
)

const uploadHref = (upload: GiftUploadRecord) => `/dashboard/send/uploads/${encodeURIComponent(upload.id)}`

const statusNames: Readonly<Record<GiftUploadRecord["status"], string>> = {
  validated: "Checked, not sent",
  sending: "Sending",
  sent: "Sent"
}

const UploadsTable = ({ uploads }: { readonly uploads: ReadonlyArray<GiftUploadRecord> }) => (
  <Table
    caption="Recent uploads"
    columns={[
      { header: "File", cell: (upload: GiftUploadRecord) => <a href={uploadHref(upload)}>{upload.fileName}</a> },
      { header: "Rows", cell: (upload: GiftUploadRecord) => upload.rowCount.toLocaleString("en") },
      { header: "Invalid", cell: (upload: GiftUploadRecord) => upload.invalidCount.toLocaleString("en") },
      { header: "Status", cell: (upload: GiftUploadRecord) => statusNames[upload.status] },
      { header: "Uploaded", cell: (upload: GiftUploadRecord) => <When at={upload.createdAt} /> }
    ]}
    rows={uploads}
    rowKey={(upload) => upload.id}
    links={{ path: "/dashboard/send", params: {}, page: 1, hasNext: false }}
    empty={<EmptyState title="No files uploaded yet." />}
  />
)

export const SendBody = (props: SendPageProps) => (
  <>
    <h1>Send gifts</h1>
    <p>
      Pick an active campaign, then send its gift to one recipient or to every row of a CSV file.
      {props.canCreateCampaign ? (
        <>
          {" "}
          Or <a href={`/dashboard/send/campaigns/new?environment=${props.environment}`}>create a campaign</a>.
        </>
      ) : null}
    </p>
    <CampaignPicker {...props} />
    {props.campaigns.length === 0 ? (
      <EmptyState title="No active campaign on the accounts you reach." />
    ) : props.campaign === undefined ? null : (
      <>
        <dl class="facts">
          <dt>Campaign</dt>
          <dd>{props.campaign.name}</dd>
          <dt>Budget</dt>
          <dd>
            {money(props.campaign.budgetMin, props.campaign.currency)} to{" "}
            {money(props.campaign.budgetMax, props.campaign.currency)} a gift
          </dd>
          <dt>Gifts expire</dt>
          <dd>{expiryOf(props.campaign)}</dd>
        </dl>
        <OneRecipientForm {...props} campaign={props.campaign} />
        <UploadForm {...props} campaign={props.campaign} />
      </>
    )}
    <h2>Uploads</h2>
    <UploadsTable uploads={props.uploads} />
  </>
)

export interface CampaignFormProps {
  readonly csrf: string
  readonly environment: Environment
  readonly collections: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly values: Readonly<Record<string, string>>
  readonly errors: FieldErrors
}

/** The campaign form's swap choices (docs/gifting.md, "Swap"). */
const swapOptions: ReadonlyArray<readonly [SwapSetting, string]> = [
  ["within_budget", "Within the budget"],
  ["disabled", "Off"]
]

export const CampaignFormBody = (props: CampaignFormProps) => {
  const { values, errors } = props
  const giftType = values.giftType === "product" ? "product" : "collection"
  return (
    <>
      <p>
        <a href={`/dashboard/send?environment=${props.environment}`}>Send gifts</a>
      </p>
      <h1>Create a campaign</h1>
      <ErrorSummary errors={errors} title="The campaign was not created:" />
      <form method="post" action="/dashboard/send/campaigns" novalidate>
        <CsrfField token={props.csrf} />
        <input type="hidden" name="environment" value={props.environment} />
        <Field name="name" label="Name" value={values.name} error={errors.name} maxLength={100} />
        <Field
          name="budgetMin"
          label="Smallest gift (USD)"
          value={values.budgetMin ?? "1"}
          error={errors.budgetMin}
          hint="From 1 to 20,000, judged against the landed total."
          inputMode="text"
        />
        <Field
          name="budgetMax"
          label="Largest gift (USD)"
          value={values.budgetMax}
          error={errors.budgetMax}
          hint="Held on the billing method for each gift until it is claimed, expires or is cancelled."
          inputMode="text"
        />
        <fieldset class={errors.giftType === undefined ? "choices" : "choices invalid"}>
          <legend>What recipients choose from</legend>
          <div class="choice">
            <input
              type="radio"
              id="giftType-collection"
              name="giftType"
              value="collection"
              checked={giftType === "collection"}
            />
            <label htmlFor="giftType-collection">A collection</label>
          </div>
          <div class="field">
            <label htmlFor="collectionId">Collection</label>
            <select
              id="collectionId"
              name="collectionId"
              aria-invalid={errors.collectionId === undefined ? undefined : "true"}
              aria-describedby={errors.collectionId === undefined ? undefined : "collectionId-error"}
            >
              {props.collections.map((collection) => (
                <option value={collection.id} selected={collection.id === values.collectionId} key={collection.id}>
                  {collection.name}
                </option>
              ))}
            </select>
            {errors.collectionId === undefined ? null : (
              <p class="field-error" id="collectionId-error">
                {errors.collectionId}
              </p>
            )}
          </div>
          <div class="choice">
            <input
              type="radio"
              id="giftType-product"
              name="giftType"
              value="product"
              checked={giftType === "product"}
            />
            <label htmlFor="giftType-product">One product</label>
          </div>
          <Field
            name="productId"
            label="Product id"
            value={values.productId}
            error={errors.productId}
            hint="The product's id in the catalog (24 hexadecimal characters)."
            required={false}
          />
          <div class={errors.swap === undefined ? "field" : "field invalid"}>
            <label htmlFor="swap">Swap</label>
            <p class="hint" id="swap-hint">
              For one product: whether its recipient may take another product that lands within the budget in their
              country. A collection's recipient already chooses.
            </p>
            <select
              id="swap"
              name="swap"
              aria-describedby={errors.swap === undefined ? "swap-hint" : "swap-hint swap-error"}
              aria-invalid={errors.swap === undefined ? undefined : "true"}
            >
              {swapOptions.map(([value, label]) => (
                <option value={value} selected={(values.swap ?? "within_budget") === value} key={value}>
                  {label}
                </option>
              ))}
            </select>
            {errors.swap === undefined ? null : (
              <p class="field-error" id="swap-error">
                {errors.swap}
              </p>
            )}
          </div>
        </fieldset>
        <div class={errors.message === undefined ? "field" : "field invalid"}>
          <label htmlFor="message">
            Message <span class="optional">(optional)</span>
          </label>
          <p class="hint" id="message-hint">
            Your note on the gift page, at most 1,000 characters.
          </p>
          <textarea
            id="message"
            name="message"
            rows={3}
            aria-describedby={errors.message === undefined ? "message-hint" : "message-hint message-error"}
            aria-invalid={errors.message === undefined ? undefined : "true"}
          >
            {values.message ?? ""}
          </textarea>
          {errors.message === undefined ? null : (
            <p class="field-error" id="message-error">
              {errors.message}
            </p>
          )}
        </div>
        <Field
          name="expiryDays"
          label="Days a gift stays open"
          value={values.expiryDays ?? "30"}
          error={errors.expiryDays}
          hint="From 1 to 365 days after it is sent; then it expires and its budget is released."
          inputMode="numeric"
        />
        <div class="choice">
          <input
            type="checkbox"
            id="reminders"
            name="reminders"
            value="on"
            checked={values.reminders === undefined || values.reminders === "on"}
          />
          <label htmlFor="reminders">Remind recipients halfway to expiry if they have not chosen</label>
        </div>
        <div class="choice">
          <input
            type="checkbox"
            id="hideAddress"
            name="hideAddress"
            value="on"
            aria-describedby="hideAddress-hint"
            checked={values.hideAddress === undefined || values.hideAddress === "on"}
          />
          <label htmlFor="hideAddress">Hide recipients' street addresses</label>
          <p class="hint" id="hideAddress-hint">
            Your team and your API keys then see only the city, region and country a recipient gives, whatever their
            permissions; the carrier still gets the full address.
          </p>
        </div>
        <button type="submit">Create the campaign</button>
      </form>
    </>
  )
}

export interface UploadPageProps {
  readonly csrf: string
  readonly upload: GiftUploadRecord
  readonly campaign: CampaignRecord
  readonly progress: GiftUploadProgress
  readonly invalidRows: ReadonlyArray<GiftUploadRow>
  readonly invalidLinks: PageLinks
  readonly firstValidRows: ReadonlyArray<GiftUploadRow>
  readonly canSend: boolean
}

const nameOf = (row: GiftUploadRow) => `${row.firstName ?? ""} ${row.lastName ?? ""}`.trim()

export const UploadBody = (props: UploadPageProps) => {
  const { upload, progress } = props
  const valid = upload.rowCount - upload.invalidCount
  const done = progress.created + progress.existing + progress.failed
  const href = uploadHref(upload)
  return (
    <>
      <p>
        <a href={`/dashboard/send?environment=${upload.environment}&campaignId=${upload.campaignId}`}>Send gifts</a>
      </p>
      <h1>{upload.fileName}</h1>
      <dl class="facts">
        <dt>Campaign</dt>
        <dd>{props.campaign.name}</dd>
        <dt>Rows</dt>
        <dd>
          {upload.rowCount.toLocaleString("en")}: {valid.toLocaleString("en")} to send,{" "}
          {upload.invalidCount.toLocaleString("en")} that will not be sent
        </dd>
        <dt>Status</dt>
        <dd>{statusNames[upload.status]}</dd>
        <dt>Uploaded</dt>
        <dd>
          <When at={upload.createdAt} />
        </dd>
      </dl>
      {upload.status === "validated" ? (
        valid === 0 ? (
          <FormError>
            <p>No row of this file can be sent: correct the rows below and upload it again.</p>
          </FormError>
        ) : props.canSend ? (
          <section class="confirm" aria-labelledby="confirm-title">
            <h2 id="confirm-title">Send {valid.toLocaleString("en")} gifts?</h2>
            <p>
              Each valid row becomes a gift of {props.campaign.name}, its budget held on the campaign's billing method.
              A row whose key the campaign already has a gift for gets that gift again: nothing is sent twice.
            </p>
            <form method="post" action={`${href}/confirm`}>
              <CsrfField token={props.csrf} />
              <button type="submit">Send {valid.toLocaleString("en")} gifts</button>
              <a class="cancel" href="/dashboard/send">
                Cancel
              </a>
            </form>
          </section>
        ) : null
      ) : (
        <section
          id="send-progress-region"
          aria-live="polite"
          aria-labelledby="progress-title"
          data-running={upload.status === "sending" ? "" : undefined}
        >
          <h2 id="progress-title">{upload.status === "sent" ? "Sent" : "Sending…"}</h2>
          <progress id="send-progress" max={String(valid)} value={String(done)} aria-labelledby="progress-title">
            {done} of {valid}
          </progress>
          <p>
            {progress.created.toLocaleString("en")} new gifts, {progress.existing.toLocaleString("en")} already sent
            before, {progress.failed.toLocaleString("en")} failed, {progress.remaining.toLocaleString("en")} to go.
          </p>
          {upload.status === "sending" ? (
            <p>
              The gifts are being sent. <a href={href}>Refresh</a> to see how far it has got.
            </p>
          ) : null}
          {upload.status === "sent" ? (
            <p>
              <a href={`${href}/result.csv`} download="">
                Download the result as CSV
              </a>{" "}
              (each row's line, key, gift id and link, and outcome).
            </p>
          ) : null}
        </section>
      )}
      <h2>Rows that will not be sent</h2>
      <Table
        caption="Invalid rows"
        columns={[
          { header: "Line", cell: (row: GiftUploadRow) => String(row.line) },
          { header: "Problem", cell: (row: GiftUploadRow) => row.problem }
        ]}
        rows={props.invalidRows}
        rowKey={(row) => String(row.line)}
        links={props.invalidLinks}
        empty={<EmptyState title="Every row can be sent." />}
      />
      {upload.status === "validated" ? (
        <>
          <h2>Rows to send</h2>
          <Table
            caption="The first rows to send"
            columns={[
              { header: "Line", cell: (row: GiftUploadRow) => String(row.line) },
              { header: "Name", cell: nameOf },
              { header: "E-mail", cell: (row: GiftUploadRow) => row.email ?? "—" },
              { header: "Country", cell: (row: GiftUploadRow) => row.country },
              { header: "Key", cell: (row: GiftUploadRow) => row.key }
            ]}
            rows={props.firstValidRows}
            rowKey={(row) => String(row.line)}
            links={{ path: href, params: {}, page: 1, hasNext: false }}
            empty={<EmptyState title="No row to send." />}
          />
          {valid > props.firstValidRows.length ? (
            <p>And {(valid - props.firstValidRows.length).toLocaleString("en")} more.</p>
          ) : null}
        </>
      ) : null}
    </>
  )
}
