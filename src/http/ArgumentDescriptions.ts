/**
 * Plain descriptions of the agent operations' arguments, for the models that read them in the MCP tools' and
 * the connector manifest's input schemas (src/http/Operations.ts). A field the schema describes itself keeps
 * its own description; every other one gets the entry here for `operation.path`, else for its `path`
 * (`recipient.phone`), else for its name. Nested fields are named by their path without array indexes
 * (`items.quantity`).
 */
export const argumentDescriptions: Readonly<Record<string, string>> = {
  // Ids
  productId: "The product's id, from search results or a collection",
  variantId: "The variant's id, from a product's variants",
  collectionId: "The collection's id, from collections or search results",
  addressId: "The saved address's id, from the profile's addresses",
  quoteId: "The quote's id, from createQuote",
  checkoutId: "The checkout's id, from createCheckout",
  orderId: "The order's id, from a confirmed checkout's orderIds or the order list",
  allowanceId: "The allowance's id, from listAllowances",
  // Lists
  "search.q": "Words to search for in product titles, brands, categories, tags and descriptions; typos are tolerated",
  "collections.q": "Words to search for in collection names, descriptions and tags",
  "tags.q": "Part of a tag's name, 3 characters or more; close spellings match too",
  "autocompleteAddress.q": "The address as typed so far, 4 characters or more",
  sort: "The order of the results: relevance (default), price_asc, price_desc or newest",
  cursor: "The nextCursor of the previous page, to get the next one",
  // Addresses
  address: "The address to check",
  shippingAddress: "Where the items are delivered",
  countryCode: "ISO 3166-1 alpha-2 country code, either case",
  address1: "Street and number",
  address2: "Apartment, suite, floor or building (optional)",
  city: "City or town",
  provinceCode: "State, province or region code, where the country has them",
  postalCode: "Postal or ZIP code",
  label: "A short name for the saved address, such as Home or Office",
  isDefault: "Whether this becomes the default address",
  // People
  firstName: "Given name",
  lastName: "Family name",
  email: "E-mail address",
  phone: "Phone number in E.164 form, such as +442079460958",
  displayName: "The name the user is shown by (null clears it)",
  defaultCountry: "ISO 3166-1 alpha-2 code of the user's usual destination country",
  receiptPreference: "Where receipts go: email, sms, both or none",
  recipient: "Who receives the items: their name, e-mail and phone",
  // Checkout
  items: "The quotes to buy, one line each with its quantity",
  quantity: "How many of the quoted item, 1 to 10 (default 1)",
  notify: "Where the order confirmation and receipt go, instead of the buyer's own contacts",
  "notify.email": "E-mail for the confirmation and receipt (default: the buyer's; null sends none)",
  "notify.sms": "Phone number in E.164 form for text messages; needs smsConsent",
  smsConsent: "true only after the user agreed to the consent text of an sms_consent_required error",
  callbackUrl: "An HTTPS URL that receives the checkout's signed status events by POST (optional)",
  idempotencyKey: "Any unique string up to 120 characters: the same request sent again with it gets the same checkout"
}
