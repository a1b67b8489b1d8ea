import { NodeContext } from "@effect/platform-node"
import { Migrator } from "@effect/sql"
import { PgMigrator } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import extensions from "./migrations/0001_extensions.js"
import jobs from "./migrations/0002_jobs.js"
import catalog from "./migrations/0003_catalog.js"
import oauth from "./migrations/0004_oauth.js"
import companies from "./migrations/0005_companies.js"
import searchTerms from "./migrations/0006_search_terms.js"
import checkouts from "./migrations/0007_checkouts.js"
import webhooks from "./migrations/0008_webhooks.js"
import orderCountry from "./migrations/0009_order_country.js"
import billing from "./migrations/0010_billing.js"
import oauthClientUse from "./migrations/0011_oauth_client_use.js"
import companyOrders from "./migrations/0012_company_orders.js"
import companyWebhooks from "./migrations/0013_company_webhooks.js"
import variantPersonalization from "./migrations/0014_variant_personalization.js"
import productsTitleOrder from "./migrations/0015_products_title_order.js"
import catalogExports from "./migrations/0016_catalog_exports.js"
import stockAvailability from "./migrations/0017_stock_availability.js"
import campaignsRecipients from "./migrations/0018_campaigns_recipients.js"
import gifts from "./migrations/0019_gifts.js"
import productListingColumns from "./migrations/0020_product_listing_columns.js"
import productListingIndexes from "./migrations/0021_product_listing_indexes.js"
import searchShipsToMask from "./migrations/0022_search_ships_to_mask.js"
import searchTermsRank from "./migrations/0023_search_terms_rank.js"
import priceListingShipsTo from "./migrations/0024_price_listing_ships_to.js"
import productsCategoryOrder from "./migrations/0025_products_category_order.js"
import recipientIdentities from "./migrations/0026_recipient_identities.js"
import companyMembers from "./migrations/0027_company_members.js"
import dashboardSessions from "./migrations/0028_dashboard_sessions.js"
import auditEvents from "./migrations/0029_audit_events.js"
import webhookAttemptDetails from "./migrations/0030_webhook_attempt_details.js"
import twoFactor from "./migrations/0031_two_factor.js"
import invitationNotifications from "./migrations/0032_invitation_notifications.js"
import apiKeyPrefixAndLastUse from "./migrations/0033_api_key_prefix_and_last_use.js"
import companyWideAuditEvents from "./migrations/0034_company_wide_audit_events.js"
import giftUploads from "./migrations/0036_gift_uploads.js"
import giftListsAndResends from "./migrations/0037_gift_lists_and_resends.js"
import companyOrderStatuses from "./migrations/0038_company_order_statuses.js"
import ledgerSpentToDate from "./migrations/0039_ledger_spent_to_date.js"
import giftThankYouNotes from "./migrations/0040_gift_thank_you_notes.js"
import recipientAddressPrivacy from "./migrations/0041_recipient_address_privacy.js"
import campaignSwap from "./migrations/0042_campaign_swap.js"
import giftUndeliverableCountries from "./migrations/0043_gift_undeliverable_countries.js"
import giftLanguage from "./migrations/0044_gift_language.js"
import digitalOrderAddresses from "./migrations/0045_digital_order_addresses.js"
import oauthPrivateKeyJwt from "./migrations/0046_oauth_private_key_jwt.js"
import acpCheckoutSessions from "./migrations/0047_acp_checkout_sessions.js"
import allowances from "./migrations/0048_allowances.js"
import acpVaultTokens from "./migrations/0049_acp_vault_tokens.js"
import acpWebhookEndpoints from "./migrations/0050_acp_webhook_endpoints.js"
import acpSessionGifts from "./migrations/0051_acp_session_gifts.js"
import ucpOrderWebhooks from "./migrations/0052_ucp_order_webhooks.js"
import oauthAssertionJtis from "./migrations/0054_oauth_assertion_jtis.js"

/** Every migration, in order. File names are `NNNN_name.ts`; ids never change once shipped. */
export const migrations = {
  "0001_extensions": extensions,
  "0002_jobs": jobs,
  "0003_catalog": catalog,
  "0004_oauth": oauth,
  "0005_companies": companies,
  "0006_search_terms": searchTerms,
  "0007_checkouts": checkouts,
  "0008_webhooks": webhooks,
  "0009_order_country": orderCountry,
  "0010_billing": billing,
  "0011_oauth_client_use": oauthClientUse,
  "0012_company_orders": companyOrders,
  "0013_company_webhooks": companyWebhooks,
  "0014_variant_personalization": variantPersonalization,
  "0015_products_title_order": productsTitleOrder,
  "0016_catalog_exports": catalogExports,
  "0017_stock_availability": stockAvailability,
  "0018_campaigns_recipients": campaignsRecipients,
  "0019_gifts": gifts,
  "0020_product_listing_columns": productListingColumns,
  "0021_product_listing_indexes": productListingIndexes,
  "0022_search_ships_to_mask": searchShipsToMask,
  "0023_search_terms_rank": searchTermsRank,
  "0024_price_listing_ships_to": priceListingShipsTo,
  "0025_products_category_order": productsCategoryOrder,
  "0026_recipient_identities": recipientIdentities,
  "0027_company_members": companyMembers,
  "0028_dashboard_sessions": dashboardSessions,
  "0029_audit_events": auditEvents,
  "0030_webhook_attempt_details": webhookAttemptDetails,
  "0031_two_factor": twoFactor,
  "0032_invitation_notifications": invitationNotifications,
  "0033_api_key_prefix_and_last_use": apiKeyPrefixAndLastUse,
  "0034_company_wide_audit_events": companyWideAuditEvents,
  "0036_gift_uploads": giftUploads,
  "0037_gift_lists_and_resends": giftListsAndResends,
  "0038_company_order_statuses": companyOrderStatuses,
  "0039_ledger_spent_to_date": ledgerSpentToDate,
  "0040_gift_thank_you_notes": giftThankYouNotes,
  "0041_recipient_address_privacy": recipientAddressPrivacy,
  "0042_campaign_swap": campaignSwap,
  "0043_gift_undeliverable_countries": giftUndeliverableCountries,
  "0044_gift_language": giftLanguage,
  "0045_digital_order_addresses": digitalOrderAddresses,
  "0046_oauth_private_key_jwt": oauthPrivateKeyJwt,
  "0047_acp_checkout_sessions": acpCheckoutSessions,
  "0048_allowances": allowances,
  "0049_acp_vault_tokens": acpVaultTokens,
  "0050_acp_webhook_endpoints": acpWebhookEndpoints,
  "0051_acp_session_gifts": acpSessionGifts,
  "0052_ucp_order_webhooks": ucpOrderWebhooks,
  "0054_oauth_assertion_jtis": oauthAssertionJtis
}

/** The id of the newest migration: the number its name starts with. */
export const latestMigrationId = Math.max(...Object.keys(migrations).map((name) => Number.parseInt(name, 10)))

/** Runs pending migrations when built. */
export const MigrationsLive = PgMigrator.layer({ loader: Migrator.fromRecord(migrations) }).pipe(
  Layer.provide(NodeContext.layer)
)

export const runMigrations = PgMigrator.run({ loader: Migrator.fromRecord(migrations) }).pipe(
  Effect.provide(NodeContext.layer)
)
