import { Schema } from "effect"
import { DomainError, errorCode } from "../platform/Errors.js"

// Company API platform: API keys, permissions, environments, accounts (docs/company-api.md).

/** No `X-Api-Key` header. */
export class ApiKeyMissing extends DomainError<ApiKeyMissing>()(
  "ApiKeyMissing",
  {},
  errorCode(401, "API key missing", "api_key_missing", "UNAUTHORIZED", "401_KEYS_001", "invalid_client")
) {}

/** A malformed, unknown or deleted key: one answer for all three, so nothing is learnt by guessing. */
export class ApiKeyInvalid extends DomainError<ApiKeyInvalid>()(
  "ApiKeyInvalid",
  {},
  errorCode(401, "API key invalid", "api_key_invalid", "UNAUTHORIZED", "401_KEYS_002", "invalid_client")
) {}

export class ApiKeyExpired extends DomainError<ApiKeyExpired>()(
  "ApiKeyExpired",
  {},
  errorCode(401, "API key expired", "api_key_expired", "UNAUTHORIZED", "401_KEYS_003", "invalid_client")
) {}

/** The key lacks the operation's permission, or would create, rotate or revoke a key holding one it does not hold. */
export class PermissionDenied extends DomainError<PermissionDenied>()(
  "PermissionDenied",
  { permission: Schema.String },
  errorCode(403, "Permission denied", "permission_denied", "FORBIDDEN", "403_KEYS_001", "access_denied")
) {}

/** A key of one environment used on a resource of the other. */
export class EnvironmentMismatch extends DomainError<EnvironmentMismatch>()(
  "EnvironmentMismatch",
  {},
  errorCode(403, "Environment mismatch", "environment_mismatch", "FORBIDDEN", "403_KEYS_002", "access_denied")
) {}

/** An `enforceMtls` key on the plain listener: call the mutual-TLS root instead. */
export class MtlsRequired extends DomainError<MtlsRequired>()(
  "MtlsRequired",
  {},
  errorCode(403, "Mutual TLS required", "mtls_required", "MTLS_REQUIRED", "403_KEYS_003", "access_denied")
) {}

/** `companyId` names a company other than the key's. */
export class CompanyMismatch extends DomainError<CompanyMismatch>()(
  "CompanyMismatch",
  {},
  errorCode(403, "Company mismatch", "company_mismatch", "FORBIDDEN", "403_KEYS_004", "access_denied")
) {}

/**
 * The key to create, rotate or revoke reaches accounts the caller does not: a key manages only keys within
 * its own reach (its permissions are `PermissionDenied`'s part).
 */
export class AccountsAccessDenied extends DomainError<AccountsAccessDenied>()(
  "AccountsAccessDenied",
  {},
  errorCode(403, "Accounts access denied", "accounts_access_denied", "FORBIDDEN", "403_KEYS_005", "access_denied")
) {}

/** `Ribbon-Account-Id` names no account the key can reach. */
export class AccountNotFound extends DomainError<AccountNotFound>()(
  "AccountNotFound",
  { accountId: Schema.String },
  errorCode(404, "Account not found", "account_not_found", "NOT_FOUND", "404_ACCT_001")
) {}

export class ApiKeyNotFound extends DomainError<ApiKeyNotFound>()(
  "ApiKeyNotFound",
  { apiKeyId: Schema.String },
  errorCode(404, "API key not found", "api_key_not_found", "NOT_FOUND", "404_KEYS_001")
) {}

/** The company already has 3 active keys. */
export class ApiKeyLimitReached extends DomainError<ApiKeyLimitReached>()(
  "ApiKeyLimitReached",
  { limit: Schema.Int },
  errorCode(422, "API key limit reached", "api_key_limit_reached", "UNPROCESSABLE_ENTITY", "422_KEYS_001")
) {}

// Accounts and billing (docs/decisions/0041-v3-accounts-and-billing.md).

/** An account of that name already exists in the company and environment. */
export class AccountNameTaken extends DomainError<AccountNameTaken>()(
  "AccountNameTaken",
  { name: Schema.String },
  errorCode(409, "Account name taken", "account_name_taken", "CONFLICT", "409_ACCT_001")
) {}

/** No billing method of that id on an account the request reaches. */
export class BillingMethodNotFound extends DomainError<BillingMethodNotFound>()(
  "BillingMethodNotFound",
  { billingMethodId: Schema.String },
  errorCode(404, "Billing method not found", "billing_method_not_found", "NOT_FOUND", "404_BILL_001")
) {}

/** The billing method's remaining funds do not cover the amount. */
export class InsufficientFunds extends DomainError<InsufficientFunds>()(
  "InsufficientFunds",
  { billingMethodId: Schema.String, remaining: Schema.Int, required: Schema.Int },
  errorCode(422, "Insufficient funds", "insufficient_funds", "UNPROCESSABLE_ENTITY", "422_BILL_001")
) {}

/** An archived billing method takes no new debits. */
export class BillingMethodArchived extends DomainError<BillingMethodArchived>()(
  "BillingMethodArchived",
  { billingMethodId: Schema.String },
  errorCode(422, "Billing method archived", "billing_method_archived", "UNPROCESSABLE_ENTITY", "422_BILL_002")
) {}

// v3 orders (docs/decisions/0039-v3-orders.md).

export class CompanyOrderNotFound extends DomainError<CompanyOrderNotFound>()(
  "CompanyOrderNotFound",
  { orderId: Schema.String },
  errorCode(404, "Order not found", "company_order_not_found", "NOT_FOUND", "404_ORDS_001")
) {}

/** The variant does not ship to the order's country. */
export class NotShippableToCountry extends DomainError<NotShippableToCountry>()(
  "NotShippableToCountry",
  { variantId: Schema.String, countryCode: Schema.String },
  errorCode(
    422,
    "Variant not shippable to the country",
    "not_shippable_to_country",
    "UNPROCESSABLE_ENTITY",
    "422_ORDS_001"
  )
) {}

/** The shipment has reached the carrier (`inTransit`) or gone further: too late to cancel. */
export class OrderNotCancellable extends DomainError<OrderNotCancellable>()(
  "OrderNotCancellable",
  { orderId: Schema.String, fulfillmentStatus: Schema.String },
  errorCode(422, "Order not cancellable", "order_not_cancellable", "UNPROCESSABLE_ENTITY", "422_ORDS_002")
) {}

/** The idempotency key made an order with another request body. */
export class OrderKeyReused extends DomainError<OrderKeyReused>()(
  "OrderKeyReused",
  { idempotencyKey: Schema.String },
  errorCode(
    422,
    "Idempotency key replayed with another body",
    "order_key_reused",
    "UNPROCESSABLE_ENTITY",
    "422_ORDS_003"
  )
) {}

/** The shipping address is not one the carrier can deliver to in its country. */
export class ShippingAddressInvalid extends DomainError<ShippingAddressInvalid>()(
  "ShippingAddressInvalid",
  { issues: Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String })) },
  errorCode(
    422,
    "Address not valid for the country",
    "shipping_address_invalid",
    "UNPROCESSABLE_ENTITY",
    "422_ORDS_004"
  )
) {}

/** The order is already cancelled or refunded. */
export class OrderAlreadyClosed extends DomainError<OrderAlreadyClosed>()(
  "OrderAlreadyClosed",
  { orderId: Schema.String, status: Schema.String },
  errorCode(422, "Order already closed", "order_already_closed", "UNPROCESSABLE_ENTITY", "422_ORDS_005")
) {}

/** The variant has no stock left for the country. */
export class VariantUnavailable extends DomainError<VariantUnavailable>()(
  "VariantUnavailable",
  { variantId: Schema.String },
  errorCode(422, "Variant unavailable", "variant_unavailable", "UNPROCESSABLE_ENTITY", "422_ORDS_006")
) {}

/** A sandbox move the shipment cannot make from where it is. */
export class SimulationRefused extends DomainError<SimulationRefused>()(
  "SimulationRefused",
  { orderId: Schema.String, from: Schema.String, to: Schema.String },
  errorCode(422, "Simulation refused", "simulation_refused", "UNPROCESSABLE_ENTITY", "422_ORDS_007")
) {}

// Company webhooks (docs/decisions/0050-company-webhooks.md).

/** No endpoint of that id in the key's company and environment. */
export class WebhookEndpointNotFound extends DomainError<WebhookEndpointNotFound>()(
  "WebhookEndpointNotFound",
  { webhookId: Schema.String },
  errorCode(404, "Webhook endpoint not found", "webhook_endpoint_not_found", "NOT_FOUND", "404_WHKS_001")
) {}

/** No delivery of that id (its `webhook-id`) to the endpoint. */
export class WebhookDeliveryNotFound extends DomainError<WebhookDeliveryNotFound>()(
  "WebhookDeliveryNotFound",
  { webhookId: Schema.String, deliveryId: Schema.String },
  errorCode(404, "Webhook delivery not found", "webhook_delivery_not_found", "NOT_FOUND", "404_WHKS_002")
) {}

/**
 * The endpoint is disabled (`reason`: by the company, or by its receiver's 410 Gone), so nothing is sent to it:
 * enable it first (docs/decisions/0058-webhook-resend-and-test-events.md).
 */
export class WebhookEndpointDisabled extends DomainError<WebhookEndpointDisabled>()(
  "WebhookEndpointDisabled",
  { webhookId: Schema.String, reason: Schema.Literal("requested", "gone") },
  errorCode(409, "Webhook endpoint disabled", "webhook_endpoint_disabled", "CONFLICT", "409_WHKS_001")
) {}

/** The company already has `limit` endpoints in this environment. */
export class WebhookEndpointLimitReached extends DomainError<WebhookEndpointLimitReached>()(
  "WebhookEndpointLimitReached",
  { limit: Schema.Int },
  errorCode(
    422,
    "Webhook endpoint limit reached",
    "webhook_endpoint_limit_reached",
    "UNPROCESSABLE_ENTITY",
    "422_WHKS_001"
  )
) {}

// v2 campaigns and recipients (docs/decisions/0045-v2-campaigns.md, docs/decisions/0046-v2-recipients.md).

/** No campaign of that id on an account the request reaches. */
export class CampaignNotFound extends DomainError<CampaignNotFound>()(
  "CampaignNotFound",
  { campaignId: Schema.String },
  errorCode(404, "Campaign not found", "campaign_not_found", "NOT_FOUND", "404_CAMP_001")
) {}

/** A status the campaign cannot move to from its own (`draft → active`, `active ⇄ paused`, … `→ archived`). */
export class CampaignTransitionRefused extends DomainError<CampaignTransitionRefused>()(
  "CampaignTransitionRefused",
  { campaignId: Schema.String, from: Schema.String, to: Schema.String },
  errorCode(
    422,
    "Campaign status transition refused",
    "campaign_transition_refused",
    "UNPROCESSABLE_ENTITY",
    "422_CAMP_001"
  )
) {}

/** An archived campaign takes no further change. */
export class CampaignArchived extends DomainError<CampaignArchived>()(
  "CampaignArchived",
  { campaignId: Schema.String },
  errorCode(422, "Campaign archived", "campaign_archived", "UNPROCESSABLE_ENTITY", "422_CAMP_002")
) {}

/** No recipient of that id reachable with the request's accounts (or it was deleted). */
export class RecipientNotFound extends DomainError<RecipientNotFound>()(
  "RecipientNotFound",
  { recipientId: Schema.String },
  errorCode(404, "Recipient not found", "recipient_not_found", "NOT_FOUND", "404_RCPT_001")
) {}

/** Another recipient of the company (and environment) has that `externalId`, or that e-mail (case-insensitively). */
export class RecipientAlreadyExists extends DomainError<RecipientAlreadyExists>()(
  "RecipientAlreadyExists",
  { field: Schema.Literal("externalId", "email"), recipientId: Schema.String },
  errorCode(409, "Recipient already exists", "recipient_already_exists", "CONFLICT", "409_RCPT_001")
) {}

// Gifts (docs/decisions/0047-v2-gifts.md).

/** No gift of that id reachable with the request's accounts. */
export class GiftNotFound extends DomainError<GiftNotFound>()(
  "GiftNotFound",
  { giftId: Schema.String },
  errorCode(404, "Gift not found", "gift_not_found", "NOT_FOUND", "404_GIFT_001")
) {}

/** The gift is claimed, expired or cancelled: it takes no further change. */
export class GiftClosed extends DomainError<GiftClosed>()(
  "GiftClosed",
  { giftId: Schema.String, status: Schema.String },
  errorCode(422, "Gift closed", "gift_closed", "UNPROCESSABLE_ENTITY", "422_GIFT_001")
) {}

/** Gifts are sent only from an active campaign. */
export class CampaignNotActive extends DomainError<CampaignNotActive>()(
  "CampaignNotActive",
  { campaignId: Schema.String, status: Schema.String },
  errorCode(422, "Campaign not active", "campaign_not_active", "UNPROCESSABLE_ENTITY", "422_CAMP_003")
) {}

/** The variant is not one the gift allows: not the campaign's, not deliverable there, or not within budget. */
export class GiftChoiceRefused extends DomainError<GiftChoiceRefused>()(
  "GiftChoiceRefused",
  { giftId: Schema.String, variantId: Schema.String },
  errorCode(422, "Gift choice refused", "gift_choice_refused", "UNPROCESSABLE_ENTITY", "422_GIFT_002")
) {}

/**
 * The gift's thank-you note cannot be written (docs/decisions/0070-gift-thank-you-notes.md): the gift is not claimed
 * (`not-claimed`), or the note was first written 24 hours ago or more (`edit-window-over`).
 */
export class ThankYouNoteClosed extends DomainError<ThankYouNoteClosed>()(
  "ThankYouNoteClosed",
  { giftId: Schema.String, reason: Schema.Literal("not-claimed", "edit-window-over") },
  errorCode(422, "Thank-you note closed", "thank_you_note_closed", "UNPROCESSABLE_ENTITY", "422_GIFT_003")
) {}

// Company members and invitations (docs/decisions/0054-company-members-and-roles.md).

/** The person is not a member of the company. */
export class MemberNotFound extends DomainError<MemberNotFound>()(
  "MemberNotFound",
  { userId: Schema.String },
  errorCode(404, "Member not found", "member_not_found", "NOT_FOUND", "404_MEMB_001")
) {}

/** The e-mail invited, or the person accepting, is already a member of the company. */
export class AlreadyMember extends DomainError<AlreadyMember>()(
  "AlreadyMember",
  { email: Schema.String },
  errorCode(409, "Already a member", "already_member", "CONFLICT", "409_MEMB_001")
) {}

/** The change would leave the company without an owner. */
export class LastOwner extends DomainError<LastOwner>()(
  "LastOwner",
  {},
  errorCode(409, "Last owner", "last_owner", "CONFLICT", "409_MEMB_002")
) {}

/** No invitation has that token (or that id in the company). */
export class InvitationNotFound extends DomainError<InvitationNotFound>()(
  "InvitationNotFound",
  {},
  errorCode(404, "Invitation not found", "invitation_not_found", "NOT_FOUND", "404_MEMB_002")
) {}

/** The invitation's seven days have passed. */
export class InvitationExpired extends DomainError<InvitationExpired>()(
  "InvitationExpired",
  {},
  errorCode(410, "Invitation expired", "invitation_expired", "GONE", "410_MEMB_001")
) {}

/** The invitation was withdrawn, or replaced by a newer one to the same e-mail. */
export class InvitationRevoked extends DomainError<InvitationRevoked>()(
  "InvitationRevoked",
  {},
  errorCode(410, "Invitation revoked", "invitation_revoked", "GONE", "410_MEMB_002")
) {}

/** The invitation was already accepted: a link makes one member, once. */
export class InvitationAlreadyAccepted extends DomainError<InvitationAlreadyAccepted>()(
  "InvitationAlreadyAccepted",
  {},
  errorCode(409, "Invitation already accepted", "invitation_already_accepted", "CONFLICT", "409_MEMB_003")
) {}

/** The signed-in person's e-mail is not the one the invitation was sent to. */
export class InvitationEmailMismatch extends DomainError<InvitationEmailMismatch>()(
  "InvitationEmailMismatch",
  {},
  errorCode(403, "Invitation for another e-mail", "invitation_email_mismatch", "FORBIDDEN", "403_MEMB_001")
) {}
