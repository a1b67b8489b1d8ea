import { Schema } from "effect"

/**
 * The Agentic Commerce Protocol's delegated payment (version 2026-04-17, `POST /agentic_commerce/delegate_payment`;
 * docs/decisions/0079-acp-delegated-payment.md), with the protocol's field names. Ribbon is the PSP here, and its
 * card processor is the test-mode simulator: the card is saved there and a vault token (`vt_…`) names it, usable
 * once, for one checkout session, within the allowance.
 */

/** The one payment handler Ribbon offers: cards delegated through `delegate_payment`, paid with the vault token. */
export const CARD_HANDLER_ID = "ribbon_card"

const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

/** The card to tokenize; `number` and `cvc` are `Redacted` once decoded, so they print as `<redacted>`. */
export const DelegatedCard = Schema.Struct({
  type: Schema.Literal("card"),
  card_number_type: Schema.Literal("fpan", "network_token"),
  number: Schema.Redacted(Schema.String.pipe(Schema.maxLength(32))),
  exp_month: Schema.optional(Schema.String.pipe(Schema.maxLength(2))),
  exp_year: Schema.optional(Schema.String.pipe(Schema.maxLength(4))),
  name: Schema.optional(Schema.String.pipe(Schema.maxLength(256))),
  cvc: Schema.optional(Schema.Redacted(Schema.String.pipe(Schema.maxLength(4)))),
  cryptogram: Schema.optional(Schema.String),
  eci_value: Schema.optional(Schema.String.pipe(Schema.maxLength(2))),
  checks_performed: Schema.optional(Schema.Array(Schema.Literal("avs", "cvv", "ani", "auth0"))),
  iin: Schema.optional(Schema.String.pipe(Schema.maxLength(8))),
  display_card_funding_type: Schema.Literal("credit", "debit", "prepaid"),
  display_wallet_type: Schema.optional(Schema.String),
  display_brand: Schema.optional(Schema.String),
  display_last4: Schema.optional(Schema.String.pipe(Schema.pattern(/^[0-9]{4}$/))),
  metadata: StringMap,
  virtual: Schema.optional(Schema.Boolean)
})

export const DelegatedAllowance = Schema.Struct({
  reason: Schema.Literal("one_time"),
  max_amount: Schema.Int.pipe(Schema.positive()),
  currency: Schema.String.pipe(Schema.pattern(/^[a-z]{3}$/)),
  checkout_session_id: Schema.String.pipe(Schema.maxLength(64)),
  merchant_id: Schema.String.pipe(Schema.maxLength(256)),
  expires_at: Schema.DateTimeUtc
})

const Address = Schema.Struct({
  name: Schema.String.pipe(Schema.maxLength(256)),
  line_one: Schema.String.pipe(Schema.maxLength(60)),
  line_two: Schema.optional(Schema.String.pipe(Schema.maxLength(60))),
  city: Schema.String.pipe(Schema.maxLength(60)),
  state: Schema.String,
  country: Schema.String.pipe(Schema.length(2)),
  postal_code: Schema.String.pipe(Schema.maxLength(20))
})

/** `DelegatePaymentRequest`: every field the protocol defines; risk signals and the billing address are kept as given. */
export const DelegatePaymentRequest = Schema.Struct({
  payment_method: DelegatedCard,
  allowance: DelegatedAllowance,
  billing_address: Schema.optional(Address),
  risk_signals: Schema.Array(
    Schema.Struct({
      type: Schema.Literal("card_testing"),
      score: Schema.Int,
      action: Schema.Literal("blocked", "manual_review", "authorized")
    })
  ),
  metadata: StringMap
})
export type DelegatePaymentRequest = typeof DelegatePaymentRequest.Type

/** `DelegatePaymentResponse`: the vault token, when it was made, and the request's metadata with Ribbon's own. */
export const DelegatePaymentResponse = Schema.Struct({
  id: Schema.String,
  created: Schema.String,
  metadata: StringMap
}).annotations({ identifier: "AcpDelegatePaymentResponse" })

/** A vault token as stored: its SHA-256 (never the token itself), the saved card's processor token, the allowance. */
export const VaultTokenRecord = Schema.Struct({
  id: Schema.String,
  tokenHash: Schema.String,
  userId: Schema.String,
  paymentMethod: Schema.String,
  cardBrand: Schema.String,
  cardLast4: Schema.String,
  maxAmount: Schema.Int,
  currency: Schema.String,
  checkoutSessionId: Schema.String,
  merchantId: Schema.String,
  expiresAt: Schema.DateFromSelf,
  usedAt: Schema.NullOr(Schema.DateFromSelf),
  checkoutId: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf
})
export type VaultTokenRecord = typeof VaultTokenRecord.Type

/**
 * The handler a session offers (`capabilities.payment.handlers`): the protocol's reference card handler, the card
 * delegated to Ribbon itself (`POST /agentic_commerce/delegate_payment`), whose processor is the test-mode simulator.
 */
export const cardHandler = {
  id: CARD_HANDLER_ID,
  name: "dev.acp.tokenized.card",
  version: "2026-01-22",
  spec: "https://acp.dev/handlers/tokenized.card",
  requires_delegate_payment: true,
  requires_pci_compliance: false,
  psp: "ribbon_simulator",
  config_schema: "https://acp.dev/schemas/handlers/tokenized.card/config.json",
  instrument_schemas: ["https://acp.dev/schemas/handlers/tokenized.card/instrument.json"],
  config: {
    merchant_id: "ribbon",
    psp: "ribbon_simulator",
    accepted_brands: ["visa", "mastercard", "amex"],
    environment: "sandbox"
  }
} as const
