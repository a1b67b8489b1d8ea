import { expect } from "@effect/vitest"
import type { RawResponse } from "./http.js"

/** Universal Commerce Protocol test helpers (docs/agent-protocols.md): the protocol's error, a UK destination. */

/** Asserts `response` is the protocol's error `{code, content}` with `status`. */
export const expectUcpError = (response: RawResponse, status: number, code: string) => {
  expect(response.status, response.text).toBe(status)
  expect(response.body).toMatchObject({ code, content: expect.any(String) })
}

/** A shipping destination in London, as a UCP fulfillment method names it. */
export const londonDestination = {
  first_name: "Ada",
  last_name: "Lovelace",
  phone_number: "+44 20 7946 0958",
  street_address: "10 Downing Street",
  address_locality: "London",
  address_region: "",
  address_country: "GB",
  postal_code: "SW1A 2AA"
}
