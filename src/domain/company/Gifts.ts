import { Schema } from "effect"
import { PhoneInput } from "../catalog/Address.js"
import { Environment, RequestSource } from "./Company.js"
import { ExternalId, RecipientEmail } from "./Recipients.js"

/**
 * Gifts, version 2 (docs/decisions/0047-v2-gifts.md, docs/company-api.md "Gifts"): one recipient's gift from one
 * campaign, sent as a link the recipient opens to choose within the budget and claim. While it is open, the budget's
 * maximum is held on the campaign's billing method; claiming, expiring or cancelling it lets that go.
 */

export const GiftStatus = Schema.Literal("unopened", "opened", "unwrapped", "claimed", "expired", "cancelled")
export type GiftStatus = typeof GiftStatus.Type

/** The statuses of a gift that can still be claimed (and be cancelled, expire or change). */
export const openGiftStatuses: ReadonlyArray<GiftStatus> = ["unopened", "opened", "unwrapped"]

export const isOpenGift = (status: GiftStatus) => openGiftStatuses.includes(status)

export const SendingMethod = Schema.Literal("email", "sms", "link")
export type SendingMethod = typeof SendingMethod.Type

/** Recipients in one `POST /v2/gifts`. */
export const maxGiftsPerRequest = 100

export const GiftRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  environment: Environment,
  campaignId: Schema.String,
  accountId: Schema.String,
  billingMethodId: Schema.String,
  recipientId: Schema.String,
  key: Schema.String,
  status: GiftStatus,
  token: Schema.String,
  /** Minor units of `currency`, copied from the campaign when the gift was made. */
  budgetMin: Schema.Int,
  budgetMax: Schema.Int,
  currency: Schema.String,
  /** What the gift holds on the billing method's ledger now: `budgetMax` while open, then 0. */
  reserved: Schema.Int,
  sendingMethod: SendingMethod,
  metadata: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  orderId: Schema.NullOr(Schema.String),
  source: Schema.NullOr(RequestSource),
  expiresAt: Schema.DateFromSelf,
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  openedAt: Schema.NullOr(Schema.DateFromSelf),
  unwrappedAt: Schema.NullOr(Schema.DateFromSelf),
  claimedAt: Schema.NullOr(Schema.DateFromSelf),
  closedAt: Schema.NullOr(Schema.DateFromSelf),
  /** The recipient's thank-you note to the sender (null until written), and when it was first and last written. */
  thankYouMessage: Schema.NullOr(Schema.String),
  thankYouCreatedAt: Schema.NullOr(Schema.DateFromSelf),
  thankYouUpdatedAt: Schema.NullOr(Schema.DateFromSelf),
  /** The language its recipient picked on the gift page (null until then): its later reminders are in it. */
  language: Schema.NullOr(Schema.String)
})
export type GiftRecord = typeof GiftRecord.Type

/**
 * Thank-you notes (docs/decisions/0070-gift-thank-you-notes.md): once a gift is claimed its recipient may write one
 * note to the sender, plain text of 1 to 500 characters, and change it for 24 hours after first writing it.
 */
export const thankYouNoteMaxLength = 500

/** The longest note a sender gives with a gift: a campaign's message, an agent's gift message (ACP's gift extension). */
export const giftMessageMaxLength = 1000

/** How long after it was first written a note may still be changed. */
export const thankYouNoteEditWindowMillis = 24 * 60 * 60 * 1000

/** A gift's thank-you note, as the services return it. */
export interface ThankYouNote {
  readonly message: string
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** The gift's note, or null while none is written. */
export const thankYouNoteOf = (gift: GiftRecord): ThankYouNote | null =>
  gift.thankYouMessage === null || gift.thankYouCreatedAt === null
    ? null
    : {
        message: gift.thankYouMessage,
        createdAt: gift.thankYouCreatedAt,
        updatedAt: gift.thankYouUpdatedAt ?? gift.thankYouCreatedAt
      }

/** Until when the note written at `createdAt` may be changed (exclusive). */
export const thankYouNoteEditableUntil = (createdAt: Date) =>
  new Date(createdAt.getTime() + thankYouNoteEditWindowMillis)

/**
 * Whether the recipient may write the gift's note at `now`: the gift is claimed, and either no note is written yet or
 * the first was written less than 24 hours ago.
 */
export const canWriteThankYouNote = (gift: GiftRecord, now: Date) =>
  gift.status === "claimed" &&
  (gift.thankYouCreatedAt === null || now.getTime() < thankYouNoteEditableUntil(gift.thankYouCreatedAt).getTime())

/**
 * The note as it is stored, or why not: line breaks made `\n` (a form sends `\r\n`), the whole trimmed, then
 * judged: 1 to 500 characters, counted as every other bound of the API is (the string's length, in UTF-16 code
 * units, as `Schema.maxLength` and a textarea's `maxlength` count), and no control characters but line breaks and tabs.
 */
export const thankYouNoteText = (
  text: string
):
  | { readonly ok: true; readonly message: string }
  | { readonly ok: false; readonly problem: string; readonly reason: ThankYouNoteProblem; readonly length: number } => {
  const message = text.replace(/\r\n?/g, "\n").trim()
  const refused = (reason: ThankYouNoteProblem, problem: string) =>
    ({ ok: false, problem, reason, length: message.length }) as const
  if (message.length === 0) return refused("empty", "Write a note of at least 1 character.")
  if (message.length > thankYouNoteMaxLength) {
    return refused("too-long", `A note is at most ${thankYouNoteMaxLength} characters; this one has ${message.length}.`)
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters refused are control characters
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(message)) {
    return refused("control", "A note is plain text: it cannot contain control characters.")
  }
  return { ok: true, message }
}

/** Why a thank-you note's text is refused: nothing in it, over the length, or not plain text. */
export type ThankYouNoteProblem = "empty" | "too-long" | "control"

/** A gift with its recipient's name and addresses as stored (the dashboard's list; the reader masks them). */
export const GiftWithRecipient = Schema.Struct({
  ...GiftRecord.fields,
  recipientFirstName: Schema.NullOr(Schema.String),
  recipientLastName: Schema.NullOr(Schema.String),
  recipientEmail: Schema.NullOr(Schema.String),
  recipientMobilePhone: Schema.NullOr(Schema.String)
})
export type GiftWithRecipient = typeof GiftWithRecipient.Type

const GiftName = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

/** The company's key of a gift: unique in its campaign, so sending the same key again finds the gift. */
export const GiftKey = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120)).annotations({
  description: "The company's key for this gift, unique in the campaign: sending it again finds the gift"
})

/**
 * One recipient of `POST /v2/gifts`, with its bounds: the one definition the API and the dashboard's gift upload
 * both judge a recipient by.
 */
export const GiftRecipient = Schema.Struct({
  firstname: GiftName,
  lastname: GiftName,
  email: Schema.optional(RecipientEmail),
  phone: Schema.optional(PhoneInput),
  externalId: Schema.optional(ExternalId),
  key: GiftKey
})

/** Who a gift is for, as `POST /v2/gifts` names them (v2's lower-case `firstname`/`lastname`). */
export interface GiftRecipientInput {
  readonly firstname: string
  readonly lastname: string
  readonly email: string | null
  readonly phone: string | null
  readonly externalId: string | null
  readonly key: string
  /** Where the recipient lives, when the sender says (the dashboard's upload does; the API does not). */
  readonly country?: string | null
}

/** One recipient's outcome of `POST /v2/gifts`: a gift (new or found by its key), or why not. */
export type GiftResult =
  | { readonly success: true; readonly gift: GiftRecord; readonly created: boolean }
  | { readonly success: false; readonly key: string; readonly errorCode: string; readonly message: string }

/**
 * How far the gifts sent in a period went (docs/decisions/0063-dashboard-home-charts.md): cumulative stages, each
 * a part of the one before (`sent` ⊇ `opened` ⊇ `claimed` ⊇ `delivered`), and the gifts that ended unclaimed.
 */
export const GiftFunnel = Schema.Struct({
  sent: Schema.Int,
  opened: Schema.Int,
  claimed: Schema.Int,
  delivered: Schema.Int,
  expired: Schema.Int,
  cancelled: Schema.Int
})
export type GiftFunnel = typeof GiftFunnel.Type
