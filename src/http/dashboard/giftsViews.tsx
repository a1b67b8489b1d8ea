import type { CompanyOutboxMessage } from "../../domain/checkout/Notifications.js"
import { type CampaignRecord, CampaignStatus, type SwapSetting } from "../../domain/company/Campaigns.js"
import type { Environment } from "../../domain/company/Company.js"
import {
  type GiftRecord,
  GiftStatus,
  isOpenGift,
  thankYouNoteEditableUntil,
  thankYouNoteOf
} from "../../domain/company/Gifts.js"
import type { CompanyOrderRecord } from "../../domain/company/Orders.js"
import { maskEmail, maskName, maskPhone } from "../../services/company/Masking.js"
import {
  Badge,
  ConfirmStep,
  CsrfField,
  EmptyState,
  Field,
  type FilterField,
  FilterForm,
  FormError,
  type PageLinks,
  Table,
  When
} from "./components.js"
import { money } from "./format.js"
import { environmentNames } from "./pages.js"

/**
 * The views of the dashboard's gifts and campaigns (GiftsPagesLive.tsx): lists with their filters, a gift's page with
 * its history, messages, order and actions, the cancel confirm step, and a campaign's page.
 */

/** A recipient as the member may read them: masked unless the role reads recipients unmasked (as v2's expansion). */
export interface ShownRecipient {
  readonly name: string
  readonly email: string | null
  readonly mobilePhone: string | null
}

export const shownRecipient = (
  recipient: {
    readonly firstName: string | null
    readonly lastName: string | null
    readonly email: string | null
    readonly mobilePhone: string | null
  },
  masked: boolean
): ShownRecipient => {
  const name = [recipient.firstName, recipient.lastName].filter((part) => part !== null).join(" ")
  return {
    name: name === "" ? "(deleted recipient)" : masked ? maskName(name) : name,
    email: recipient.email === null ? null : masked ? maskEmail(recipient.email) : recipient.email,
    mobilePhone:
      recipient.mobilePhone === null ? null : masked ? maskPhone(recipient.mobilePhone) : recipient.mobilePhone
  }
}

export const giftHref = (giftId: string) => `/dashboard/gifts/${encodeURIComponent(giftId)}`
export const campaignHref = (campaignId: string) => `/dashboard/campaigns/${encodeURIComponent(campaignId)}`

const statusNames: Readonly<Record<GiftStatus, string>> = {
  unopened: "Unopened",
  opened: "Opened",
  unwrapped: "Unwrapped",
  claimed: "Claimed",
  expired: "Expired",
  cancelled: "Cancelled"
}

const campaignStatusNames: Readonly<Record<CampaignStatus, string>> = {
  draft: "Draft",
  active: "Active",
  paused: "Paused",
  completed: "Completed",
  archived: "Archived"
}

/** What a campaign's `swap` lets the recipient do, in the dashboard's words. */
export const swapLabels: Readonly<Record<SwapSetting, string>> = {
  within_budget: "Within the budget: the recipient may take another product that lands within it",
  disabled: "Off: the recipient takes the campaign's gift"
}

const budgetOf = (item: { readonly budgetMin: number; readonly budgetMax: number; readonly currency: string }) =>
  `${money(item.budgetMin, item.currency)} to ${money(item.budgetMax, item.currency)}`

/** A list's problems with its filters, above it. */
const FilterProblems = ({ problems }: { readonly problems: ReadonlyArray<string> }) =>
  problems.length === 0 ? null : (
    <FormError>
      <p>These filters cannot be used:</p>
      <ul>
        {problems.map((problem) => (
          <li key={problem}>{problem}</li>
        ))}
      </ul>
    </FormError>
  )

const environmentFilter = (live: boolean, environment: Environment): ReadonlyArray<FilterField> =>
  live
    ? [
        {
          name: "environment",
          label: "Environment",
          value: environment,
          options: (["live", "test"] as const).map((name) => [name, environmentNames[name]] as const)
        }
      ]
    : []

/** One row of the gift list: the gift with its recipient as the member may read them. */
export interface GiftRow {
  readonly gift: GiftRecord
  readonly recipient: ShownRecipient
}

export interface GiftFilters {
  readonly environment: Environment
  readonly status: string
  readonly campaign: string
  readonly from: string
  readonly to: string
  readonly q: string
}

export const GiftsBody = (props: {
  readonly live: boolean
  readonly filters: GiftFilters
  readonly searchable: boolean
  readonly problems: ReadonlyArray<string>
  readonly campaigns: ReadonlyArray<CampaignRecord>
  readonly rows: ReadonlyArray<GiftRow>
  readonly links: PageLinks
}) => {
  const { filters } = props
  const campaignNames = new Map(props.campaigns.map((campaign) => [campaign.id, campaign.name]))
  const campaignOptions: ReadonlyArray<readonly [string, string]> = [
    ["", "Any campaign"],
    ...props.campaigns.map((campaign) => [campaign.id, campaign.name] as const),
    ...(filters.campaign !== "" && !campaignNames.has(filters.campaign)
      ? [[filters.campaign, filters.campaign] as const]
      : [])
  ]
  const filtered = Object.entries(filters).some(([name, value]) => name !== "environment" && value !== "")
  return (
    <>
      <h1>Gifts</h1>
      <p>
        The gifts of the accounts you reach, newest first. Open one for its history, the messages its recipient was sent
        and its order.
      </p>
      <FilterProblems problems={props.problems} />
      <FilterForm
        path="/dashboard/gifts"
        fields={[
          ...environmentFilter(props.live, filters.environment),
          {
            name: "status",
            label: "Status",
            value: filters.status,
            options: [
              ["", "Any status"],
              ...GiftStatus.literals.map((status) => [status, statusNames[status]] as const)
            ]
          },
          { name: "campaign", label: "Campaign", value: filters.campaign, options: campaignOptions },
          { name: "from", label: "Sent from (UTC)", value: filters.from, type: "date" },
          { name: "to", label: "Sent to (UTC)", value: filters.to, type: "date" },
          ...(props.searchable ? [{ name: "q", label: "Recipient name or e-mail", value: filters.q }] : [])
        ]}
      />
      {props.problems.length > 0 ? null : (
        <Table
          caption="Gifts"
          columns={[
            {
              header: "Recipient",
              cell: (row: GiftRow) => (
                <>
                  <a href={giftHref(row.gift.id)}>{row.recipient.name}</a>
                  {row.recipient.email === null ? null : (
                    <>
                      <br />
                      {row.recipient.email}
                    </>
                  )}
                </>
              )
            },
            { header: "Status", cell: (row: GiftRow) => <Badge>{statusNames[row.gift.status]}</Badge> },
            {
              header: "Campaign",
              cell: (row: GiftRow) => (
                <a href={campaignHref(row.gift.campaignId)}>
                  {campaignNames.get(row.gift.campaignId) ?? row.gift.campaignId}
                </a>
              )
            },
            { header: "Budget", cell: (row: GiftRow) => budgetOf(row.gift) },
            { header: "Sent", cell: (row: GiftRow) => <When at={row.gift.createdAt} /> },
            { header: "Expires", cell: (row: GiftRow) => <When at={row.gift.expiresAt} /> }
          ]}
          rows={props.rows}
          rowKey={(row) => row.gift.id}
          links={props.links}
          empty={<EmptyState title={filtered ? "No gifts match these filters." : "No gifts yet."} />}
        />
      )}
    </>
  )
}

/** The gift's statuses in the order it reached them, each with its time (every step has its own column). */
export const historyOf = (gift: GiftRecord): ReadonlyArray<{ readonly label: string; readonly at: Date }> => {
  const steps: Array<{ label: string; at: Date | null }> = [
    { label: "Sent (unopened)", at: gift.createdAt },
    { label: "Opened: the link was visited", at: gift.openedAt },
    { label: "Unwrapped: the choices were viewed", at: gift.unwrappedAt },
    { label: "Claimed: an order was placed", at: gift.claimedAt },
    { label: gift.status === "expired" ? "Expired" : "Cancelled", at: gift.closedAt }
  ]
  return steps.filter((step): step is { label: string; at: Date } => step.at !== null)
}

const messageKinds: Readonly<Record<string, string>> = {
  "gift.sent": "Gift sent",
  "gift.reminder": "Reminder",
  "gift.last-reminder": "Last reminder (48 hours before expiry)",
  "gift.resent": "Link sent again"
}

export interface GiftPageProps {
  readonly csrf: string
  readonly gift: GiftRecord
  readonly link: string
  readonly campaign: CampaignRecord
  readonly recipient: ShownRecipient
  readonly messages: ReadonlyArray<CompanyOutboxMessage>
  readonly masked: boolean
  readonly order: CompanyOrderRecord | null
  /** The countries the recipient chose where nothing could reach them, not even a digital gift. */
  readonly undeliverable: ReadonlyArray<{ readonly countryCode: string; readonly createdAt: Date }>
  readonly canChange: boolean
  readonly today: string
}

/** A swapped gift's order: what the recipient swapped (the campaign's product), as a row of facts; none otherwise. */
export const SwappedFrom = ({ order }: { readonly order: CompanyOrderRecord }) =>
  order.swappedFromProductId === null ? null : (
    <>
      <dt>Swapped from</dt>
      <dd>
        {order.swappedFromTitle ?? order.swappedFromProductId} (<code>{order.swappedFromProductId}</code>)
      </dd>
    </>
  )

const countryNames = new Intl.DisplayNames(["en"], { type: "region", fallback: "code" })

/** Where the recipient found nothing the gift could send them, not even a digital gift within its budget. */
const UndeliverableSection = ({ countries }: { readonly countries: GiftPageProps["undeliverable"] }) => (
  <section aria-labelledby="gift-undeliverable">
    <h2 id="gift-undeliverable">Could not be delivered</h2>
    <p>
      The recipient chose a country that nothing in this gift can reach, not even a digital gift within its budget.
      Change the campaign's gift or budget, or contact the recipient.
    </p>
    <ul>
      {countries.map((country) => (
        <li key={country.countryCode}>
          {countryNames.of(country.countryCode) ?? country.countryCode} (<code>{country.countryCode}</code>):{" "}
          <When at={country.createdAt} />
        </li>
      ))}
    </ul>
  </section>
)

const OrderSection = ({ order }: { readonly order: CompanyOrderRecord }) => (
  <section aria-labelledby="gift-order">
    <h2 id="gift-order">Order and shipment</h2>
    <dl class="facts">
      <dt>Order</dt>
      <dd>
        <a href={`/dashboard/orders/${encodeURIComponent(order.id)}`}>{order.title}</a> (<code>{order.id}</code>)
      </dd>
      <SwappedFrom order={order} />
      <dt>Status</dt>
      <dd>{order.status}</dd>
      <dt>Shipment</dt>
      <dd>{order.shipmentStatus}</dd>
      <dt>Carrier</dt>
      <dd>{order.carrier ?? "—"}</dd>
      <dt>Tracking</dt>
      <dd>
        {order.trackingUrl === null ? (
          (order.trackingNumber ?? "—")
        ) : (
          <a href={order.trackingUrl}>{order.trackingNumber ?? order.trackingUrl}</a>
        )}
      </dd>
      <dt>Shipped</dt>
      <dd>
        <When at={order.shippedAt} />
      </dd>
      <dt>Delivered</dt>
      <dd>
        <When at={order.deliveredAt} />
      </dd>
    </dl>
  </section>
)

/**
 * The recipient's thank-you note (docs/decisions/0070-gift-thank-you-notes.md): its text as written, when it was
 * written and last changed, and until when the recipient may still change it.
 */
const ThankYouSection = ({ gift }: { readonly gift: GiftRecord }) => {
  const note = thankYouNoteOf(gift)
  return (
    <section aria-labelledby="gift-thank-you">
      <h2 id="gift-thank-you">Thank-you note</h2>
      {note === null ? (
        <p>
          {gift.status === "claimed"
            ? "The recipient has not written a thank-you note."
            : "The recipient can write a thank-you note on the gift page once the gift is claimed."}
        </p>
      ) : (
        <>
          <blockquote class="note" id="thank-you-note">
            {note.message}
          </blockquote>
          <dl class="facts">
            <dt>Written</dt>
            <dd>
              <When at={note.createdAt} />
            </dd>
            <dt>Last changed</dt>
            <dd>{note.updatedAt.getTime() === note.createdAt.getTime() ? "—" : <When at={note.updatedAt} />}</dd>
            <dt>Can be changed until</dt>
            <dd>
              <When at={thankYouNoteEditableUntil(note.createdAt)} />
            </dd>
          </dl>
        </>
      )}
    </section>
  )
}

const GiftActions = (props: GiftPageProps) => {
  const { gift } = props
  const base = giftHref(gift.id)
  return (
    <section aria-labelledby="gift-actions">
      <h2 id="gift-actions">Change the gift</h2>
      {gift.sendingMethod === "link" ? (
        <p>This gift goes by its link alone: hand the link above to the recipient again.</p>
      ) : (
        <form method="post" action={`${base}/resend`} class="actions">
          <CsrfField token={props.csrf} />
          <button type="submit" class="secondary">
            {gift.sendingMethod === "email" ? "Send the link again by e-mail" : "Send the link again by text message"}
          </button>
        </form>
      )}
      <form method="post" action={`${base}/expiry`} aria-labelledby="gift-expiry">
        <h3 id="gift-expiry">Expiry</h3>
        <CsrfField token={props.csrf} />
        <Field
          name="expiresOn"
          label="New expiry date (UTC)"
          type="date"
          hint={`The gift then expires at the end of that day: after today (${props.today}) and at most 365 days ahead.`}
          required
        />
        <button type="submit">Change the expiry</button>
      </form>
      <h3>Cancel</h3>
      <p>
        <a class="button" href={`${base}/cancel`}>
          Cancel this gift…
        </a>
      </p>
    </section>
  )
}

export const GiftBody = (props: GiftPageProps) => {
  const { gift, campaign, recipient } = props
  const reminders = props.messages.filter(
    (message) => message.kind === "gift.reminder" || message.kind === "gift.last-reminder"
  ).length
  return (
    <>
      <p>
        <a href="/dashboard/gifts">All gifts</a>
      </p>
      <h1>Gift to {recipient.name}</h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Badge>{statusNames[gift.status]}</Badge>
        </dd>
        <dt>Recipient</dt>
        <dd>
          {recipient.name}
          {recipient.email === null ? null : <>, {recipient.email}</>}
          {recipient.mobilePhone === null ? null : <>, {recipient.mobilePhone}</>}
        </dd>
        <dt>Campaign</dt>
        <dd>
          <a href={campaignHref(campaign.id)}>{campaign.name}</a>
        </dd>
        <dt>Budget</dt>
        <dd>{budgetOf(gift)}</dd>
        <dt>Held on the billing method</dt>
        <dd>{money(gift.reserved, gift.currency)}</dd>
        <dt>Sent by</dt>
        <dd>{gift.sendingMethod === "sms" ? "text message" : gift.sendingMethod === "email" ? "e-mail" : "link"}</dd>
        <dt>Link</dt>
        <dd>
          <a href={props.link}>{props.link}</a>
        </dd>
        <dt>Key</dt>
        <dd>
          <code>{gift.key}</code>
        </dd>
        <dt>Expires</dt>
        <dd>
          <When at={gift.expiresAt} />
        </dd>
        <dt>Environment</dt>
        <dd>{environmentNames[gift.environment]}</dd>
      </dl>
      <section aria-labelledby="gift-history">
        <h2 id="gift-history">Status history</h2>
        <ol>
          {historyOf(gift).map((step) => (
            <li key={step.label}>
              {step.label}: <When at={step.at} />
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="gift-messages">
        <h2 id="gift-messages">Messages to the recipient</h2>
        <p>
          {reminders === 0
            ? "No reminder sent."
            : reminders === 1
              ? "1 reminder sent."
              : `${reminders} reminders sent.`}
        </p>
        <Table
          caption="Messages to the recipient"
          columns={[
            { header: "Message", cell: (message: CompanyOutboxMessage) => messageKinds[message.kind] ?? message.kind },
            {
              header: "Channel",
              cell: (message: CompanyOutboxMessage) => (message.channel === "email" ? "E-mail" : "Text message")
            },
            {
              header: "To",
              cell: (message: CompanyOutboxMessage) => (
                <code>
                  {props.masked
                    ? message.channel === "email"
                      ? maskEmail(message.recipient)
                      : maskPhone(message.recipient)
                    : message.recipient}
                </code>
              )
            },
            { header: "Time", cell: (message: CompanyOutboxMessage) => <When at={message.createdAt} /> }
          ]}
          rows={props.messages}
          rowKey={(message) => message.id}
          links={{ path: giftHref(gift.id), params: {}, page: 1, hasNext: false }}
          empty={
            <EmptyState
              title={gift.sendingMethod === "link" ? "None: this gift goes by its link alone." : "No messages."}
            />
          }
        />
      </section>
      {props.undeliverable.length === 0 ? null : <UndeliverableSection countries={props.undeliverable} />}
      {props.order === null ? null : <OrderSection order={props.order} />}
      <ThankYouSection gift={gift} />
      {props.canChange && isOpenGift(gift.status) ? <GiftActions {...props} /> : null}
    </>
  )
}

export const CancelGiftBody = (props: {
  readonly csrf: string
  readonly gift: GiftRecord
  readonly recipient: ShownRecipient
}) => (
  <>
    <p>
      <a href={giftHref(props.gift.id)}>Back to the gift</a>
    </p>
    <h1>Cancel the gift to {props.recipient.name}</h1>
    <ConfirmStep
      title="Cancel this gift?"
      action={`${giftHref(props.gift.id)}/cancel`}
      csrf={props.csrf}
      confirmLabel="Cancel the gift"
      cancelHref={giftHref(props.gift.id)}
    >
      <p>
        Its link stops working at once and it can no longer be claimed. The{" "}
        {money(props.gift.reserved, props.gift.currency)} it holds is credited back to its billing method. This cannot
        be undone.
      </p>
    </ConfirmStep>
  </>
)

export interface CampaignFilters {
  readonly environment: Environment
  readonly status: string
  readonly q: string
}

export const CampaignsBody = (props: {
  readonly live: boolean
  readonly filters: CampaignFilters
  readonly problems: ReadonlyArray<string>
  readonly campaigns: ReadonlyArray<CampaignRecord>
  readonly links: PageLinks
}) => {
  const filtered = props.filters.status !== "" || props.filters.q !== ""
  return (
    <>
      <h1>Campaigns</h1>
      <p>The campaigns of the accounts you reach, newest first: what their gifts are made from.</p>
      <FilterProblems problems={props.problems} />
      <FilterForm
        path="/dashboard/campaigns"
        fields={[
          ...environmentFilter(props.live, props.filters.environment),
          {
            name: "status",
            label: "Status",
            value: props.filters.status,
            options: [
              ["", "Any status"],
              ...CampaignStatus.literals.map((status) => [status, campaignStatusNames[status]] as const)
            ]
          },
          { name: "q", label: "Name or id", value: props.filters.q }
        ]}
      />
      {props.problems.length > 0 ? null : (
        <Table
          caption="Campaigns"
          columns={[
            {
              header: "Name",
              cell: (campaign: CampaignRecord) => <a href={campaignHref(campaign.id)}>{campaign.name}</a>
            },
            {
              header: "Status",
              cell: (campaign: CampaignRecord) => <Badge>{campaignStatusNames[campaign.status]}</Badge>
            },
            { header: "Budget", cell: (campaign: CampaignRecord) => budgetOf(campaign) },
            { header: "Channels", cell: (campaign: CampaignRecord) => campaign.sendingChannels.join(", ") },
            { header: "Created", cell: (campaign: CampaignRecord) => <When at={campaign.createdAt} /> }
          ]}
          rows={props.campaigns}
          rowKey={(campaign) => campaign.id}
          links={props.links}
          empty={<EmptyState title={filtered ? "No campaigns match these filters." : "No campaigns yet."} />}
        />
      )}
    </>
  )
}

/** The status a campaign's button moves it to: pause an active one, activate a paused or draft one. */
export const nextCampaignStatus = (status: CampaignStatus): "paused" | "active" | undefined =>
  status === "active" ? "paused" : status === "paused" || status === "draft" ? "active" : undefined

export const CampaignBody = (props: {
  readonly csrf: string
  readonly campaign: CampaignRecord
  readonly canChange: boolean
  readonly gifts: ReadonlyArray<GiftRow> | undefined
  readonly moreGifts: boolean
}) => {
  const { campaign } = props
  const next = nextCampaignStatus(campaign.status)
  const giftsOf = `/dashboard/gifts?${new URLSearchParams({ environment: campaign.environment, campaign: campaign.id })}`
  return (
    <>
      <p>
        <a href="/dashboard/campaigns">All campaigns</a>
      </p>
      <h1>{campaign.name}</h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Badge>{campaignStatusNames[campaign.status]}</Badge>
        </dd>
        <dt>Id</dt>
        <dd>
          <code>{campaign.id}</code>
        </dd>
        <dt>Account</dt>
        <dd>
          <code>{campaign.accountId}</code> ({environmentNames[campaign.environment]})
        </dd>
        <dt>Billing method</dt>
        <dd>
          <code>{campaign.billingMethodId}</code>
        </dd>
        <dt>Gift</dt>
        <dd>
          {campaign.giftType === "product" ? "One product" : "A product of a collection"}:{" "}
          <code>{campaign.productId ?? campaign.collectionId}</code>
        </dd>
        <dt>Budget</dt>
        <dd>{budgetOf(campaign)}</dd>
        <dt>Swap</dt>
        <dd>{swapLabels[campaign.swap]}</dd>
        <dt>Expiry</dt>
        <dd>
          {campaign.expirationDate === null ? (
            `${campaign.expirationDays} days after sending`
          ) : (
            <When at={campaign.expirationDate} />
          )}
        </dd>
        <dt>Channels</dt>
        <dd>{campaign.sendingChannels.join(", ")}</dd>
        <dt>Reminders</dt>
        <dd>{campaign.disableReminders ? "Off" : "Halfway to expiry"}</dd>
        <dt>Recipient addresses</dt>
        <dd>
          {campaign.hideRecipientAddress
            ? "Hidden: city, region and country only (the carrier gets the full address)"
            : "Shown whole to members and keys that read orders unmasked"}
        </dd>
        <dt>Message</dt>
        <dd>{campaign.message ?? "—"}</dd>
        <dt>Created</dt>
        <dd>
          <When at={campaign.createdAt} />
        </dd>
      </dl>
      {props.canChange && next !== undefined ? (
        <form method="post" action={`${campaignHref(campaign.id)}/status`} class="actions">
          <CsrfField token={props.csrf} />
          <input type="hidden" name="status" value={next} />
          <button type="submit" class="secondary">
            {next === "paused" ? "Pause the campaign" : "Activate the campaign"}
          </button>
          <span class="hint">
            {next === "paused" ? "No gift is sent from a paused campaign." : "Gifts are sent from an active campaign."}
          </span>
        </form>
      ) : null}
      {props.gifts === undefined ? null : (
        <section aria-labelledby="campaign-gifts">
          <h2 id="campaign-gifts">Newest gifts</h2>
          <Table
            caption={`Newest gifts of ${campaign.name}`}
            columns={[
              {
                header: "Recipient",
                cell: (row: GiftRow) => <a href={giftHref(row.gift.id)}>{row.recipient.name}</a>
              },
              { header: "Status", cell: (row: GiftRow) => <Badge>{statusNames[row.gift.status]}</Badge> },
              { header: "Sent", cell: (row: GiftRow) => <When at={row.gift.createdAt} /> }
            ]}
            rows={props.gifts}
            rowKey={(row) => row.gift.id}
            links={{ path: campaignHref(campaign.id), params: {}, page: 1, hasNext: false }}
            empty={<EmptyState title="No gifts sent from this campaign yet." />}
          />
          <p>
            <a href={giftsOf}>{props.moreGifts ? "All gifts of this campaign" : "This campaign's gifts, to filter"}</a>
          </p>
        </section>
      )}
    </>
  )
}
