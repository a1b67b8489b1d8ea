/**
 * The Ribbon API for typed clients, exported as `ribbon/api`: the HttpApi value, the schemas of its bodies
 * and its errors, and no server code (test/http/contract/definition.test.ts holds it to that). Derive a client
 * with `HttpApiClient.make(Api, { baseUrl })`; docs/clients.md shows both API families.
 */

export * as Addresses from "../domain/catalog/Address.js"
export * as Catalog from "../domain/catalog/Catalog.js"
export * from "../domain/catalog/Errors.js"
export * as Search from "../domain/catalog/Search.js"
export * as Checkout from "../domain/checkout/Checkout.js"
export * from "../domain/checkout/Errors.js"
export * as Company from "../domain/company/Company.js"
export * from "../domain/company/Errors.js"
export * from "../domain/identity/Errors.js"
export * as OAuth from "../domain/identity/OAuth.js"
export * as Users from "../domain/identity/Users.js"
export * from "../domain/platform/Errors.js"
export * as Money from "../domain/platform/Money.js"
export { Api } from "./Api.js"
