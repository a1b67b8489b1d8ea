import { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { issueTestToken, SignedInUser, signedIn } from "../../support/auth.js"
import { get, raw, ribbonClient, SeededTestServer } from "../../support/http.js"

/** `/v1/me` and saved addresses, and the bearer middleware's answers, through the derived client. */

const send = (method: "PATCH" | "POST" | "DELETE", url: string, body?: unknown, headers: Record<string, string> = {}) =>
  raw(
    HttpClientRequest.make(method)(url).pipe(
      HttpClientRequest.setHeaders(headers),
      body === undefined ? (r) => r : HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
    )
  )

describe("profile (/v1/me)", () => {
  it.layer(SeededTestServer.pipe(signedIn({ defaultCountry: "JP" })), { timeout: 120_000 })((it) => {
    it.effect("shows the user, their addresses and the token's scopes; PATCH updates the profile", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const signedInUser = yield* SignedInUser
        const me = yield* client.profile.me()
        expect(me.user).toMatchObject({
          id: signedInUser.userId,
          email: signedInUser.email,
          displayName: null,
          phone: null,
          defaultCountry: "JP",
          receiptPreference: "email"
        })
        expect(me.addresses).toEqual([])
        expect(me.scopes).toEqual(["profile", "catalog:read", "orders:read", "orders:write", "payments:allowance"])
        const updated = yield* client.profile.updateMe({
          payload: { displayName: "Ada", phone: "+44 20 7946 0000", defaultCountry: "FR", receiptPreference: "both" }
        })
        expect(updated).toMatchObject({ defaultCountry: "FR" })
        // On the wire the country may come in either case.
        const lower = yield* send("PATCH", "/v1/me", { defaultCountry: "gb" })
        expect(lower.body.defaultCountry).toBe("GB")
        expect(yield* client.profile.me().pipe(Effect.map((m) => m.user))).toMatchObject({
          displayName: "Ada",
          defaultCountry: "GB",
          receiptPreference: "both"
        })
        const cleared = yield* client.profile.updateMe({ payload: { displayName: null } })
        expect(cleared.displayName).toBeNull()
        expect(cleared.phone).toBe("+44 20 7946 0000")
        yield* client.profile.updateMe({ payload: { defaultCountry: "JP" } })
      })
    )

    it.effect("prices catalog requests without country for the user's default country", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const result = yield* client.catalog.search({ urlParams: { q: "mug" } })
        expect(result.appliedFilters).toMatchObject({ country: "JP", currency: "JPY" })
        const explicit = yield* client.catalog.search({ urlParams: { q: "mug", country: "US" } })
        expect(explicit.appliedFilters).toMatchObject({ country: "US" })
        const product = yield* client.catalog.product({ path: { productId: result.products[0]!.id }, urlParams: {} })
        expect(product.product.priceRange?.min.currency).toBe("JPY")
      })
    )

    it.effect("saves addresses: the first is the default, isDefault moves it; deletes only the user's own", () =>
      Effect.gen(function* () {
        const client = yield* ribbonClient
        const home = yield* client.profile.addAddress({
          payload: { firstName: "Ada", lastName: "Lovelace", countryCode: "GB", city: "london", label: "Home" }
        })
        expect(home).toMatchObject({ countryCode: "GB", isDefault: true, label: "Home", address1: null })
        const office = yield* client.profile.addAddress({
          payload: { firstName: "Ada", lastName: "Lovelace", countryCode: "GB", address1: "1 Office Rd" }
        })
        expect(office.isDefault).toBe(false)
        const cottage = yield* client.profile.addAddress({
          payload: { firstName: "Ada", lastName: "Lovelace", countryCode: "GB", isDefault: true }
        })
        expect(cottage.isDefault).toBe(true)
        const me = yield* client.profile.me()
        // The default first.
        expect(me.addresses[0]).toMatchObject({ id: cottage.id, isDefault: true })
        expect(me.addresses.slice(1).map((a) => [a.id, a.isDefault])).toEqual(
          expect.arrayContaining([
            [home.id, false],
            [office.id, false]
          ])
        )

        // Another user cannot delete (or learn about) this user's address.
        const other = yield* issueTestToken()
        const foreign = yield* send("DELETE", `/v1/me/addresses/${home.id}`, undefined, {
          authorization: `Bearer ${other.accessToken}`
        })
        expect(foreign.status).toBe(404)
        expect(foreign.body).toMatchObject({ code: "address_not_found", addressId: home.id })

        const deleted = yield* send("DELETE", `/v1/me/addresses/${cottage.id}`)
        expect(deleted.status).toBe(204)
        expect(deleted.text).toBe("")
        const again = yield* send("DELETE", `/v1/me/addresses/${cottage.id}`)
        expect(again.status).toBe(404)
        const after = yield* client.profile.me()
        // The oldest remaining address became the default.
        expect(after.addresses.map((a) => a.id).sort()).toEqual([home.id, office.id].sort())
        expect(after.addresses.filter((a) => a.isDefault)).toHaveLength(1)
      })
    )

    describe("bad input → 400 problem naming the field, nothing changed", () => {
      const cases: ReadonlyArray<readonly [string, "PATCH" | "POST", string, unknown, string]> = [
        ["displayName over 80", "PATCH", "/v1/me", { displayName: "x".repeat(81) }, "displayName"],
        ["phone over 20", "PATCH", "/v1/me", { phone: "1".repeat(21) }, "phone"],
        ["defaultCountry three letters", "PATCH", "/v1/me", { defaultCountry: "USA" }, "defaultCountry"],
        ["defaultCountry with a digit", "PATCH", "/v1/me", { defaultCountry: "U1" }, "defaultCountry"],
        ["receiptPreference fax", "PATCH", "/v1/me", { receiptPreference: "fax" }, "receiptPreference"],
        ["displayName a number", "PATCH", "/v1/me", { displayName: 5 }, "displayName"],
        ["address without firstName", "POST", "/v1/me/addresses", { lastName: "L", countryCode: "US" }, "firstName"],
        [
          "address empty firstName",
          "POST",
          "/v1/me/addresses",
          { firstName: "", lastName: "L", countryCode: "US" },
          "firstName"
        ],
        [
          "address empty lastName",
          "POST",
          "/v1/me/addresses",
          { firstName: "F", lastName: "", countryCode: "US" },
          "lastName"
        ],
        ["address without countryCode", "POST", "/v1/me/addresses", { firstName: "F", lastName: "L" }, "countryCode"],
        [
          "address countryCode USA",
          "POST",
          "/v1/me/addresses",
          { firstName: "F", lastName: "L", countryCode: "USA" },
          "countryCode"
        ],
        [
          "address label over 40",
          "POST",
          "/v1/me/addresses",
          { firstName: "F", lastName: "L", countryCode: "US", label: "x".repeat(41) },
          "label"
        ],
        [
          "address phone over 20",
          "POST",
          "/v1/me/addresses",
          { firstName: "F", lastName: "L", countryCode: "US", phone: "1".repeat(21) },
          "phone"
        ],
        [
          "address isDefault a string",
          "POST",
          "/v1/me/addresses",
          { firstName: "F", lastName: "L", countryCode: "US", isDefault: "yes" },
          "isDefault"
        ]
      ]
      for (const [name, method, url, body, field] of cases) {
        it.effect(`${name} → 400 naming ${field}`, () =>
          Effect.gen(function* () {
            const client = yield* ribbonClient
            const before = yield* client.profile.me()
            const response = yield* send(method, url, body)
            expect(response.status, response.text).toBe(400)
            expect(response.headers["content-type"]).toBe("application/problem+json")
            expect(response.body.code).toBe("invalid_request")
            expect(response.body.errors.map((e: { path: string }) => e.path)).toContain(field)
            expect(yield* client.profile.me()).toEqual(before)
          })
        )
      }
    })

    describe("bearer middleware", () => {
      it.effect("401 with the resource metadata challenge without a valid token, before the body is read", () =>
        Effect.gen(function* () {
          for (const authorization of ["Bearer", "Bearer rba_unknown", "Basic dXNlcjpwYXNz", "rba_no_scheme"]) {
            const response = yield* get("/v1/me", { authorization })
            expect(response.status, authorization).toBe(401)
            expect(response.headers["content-type"]).toBe("application/problem+json")
            expect(response.body).toMatchObject({ status: 401, code: "invalid_token" })
            expect(response.headers["www-authenticate"]).toBe(
              'Bearer resource_metadata="http://ribbon.test/.well-known/oauth-protected-resource"'
            )
          }
          const badBody = yield* send("POST", "/v1/me/addresses", { firstName: 1 }, { authorization: "Bearer nope" })
          expect(badBody.status).toBe(401)
          const catalog = yield* get("/v1/countries", { authorization: "Bearer nope" })
          expect(catalog.status).toBe(401)
        })
      )

      it.effect("403 insufficient_scope naming the token's scopes and the one each endpoint declares", () =>
        Effect.gen(function* () {
          const catalogOnly = yield* issueTestToken({ scopes: ["catalog:read"] })
          const profileOnly = yield* issueTestToken({ scopes: ["profile"] })
          const me = yield* get("/v1/me", { authorization: `Bearer ${catalogOnly.accessToken}` })
          expect(me.status).toBe(403)
          // What the token has and what the endpoint needs: asking again for exactly this loses nothing.
          expect(me.body).toMatchObject({ code: "insufficient_scope", scope: "profile catalog:read" })
          expect(me.headers["www-authenticate"]).toBe(
            'Bearer error="insufficient_scope", scope="profile catalog:read", resource_metadata="http://ribbon.test/.well-known/oauth-protected-resource"'
          )
          const search = yield* get("/v1/search?q=mug", { authorization: `Bearer ${profileOnly.accessToken}` })
          expect(search.status).toBe(403)
          expect(search.headers["www-authenticate"]).toContain('scope="profile catalog:read"')
          const allowed = yield* get("/v1/countries", { authorization: `Bearer ${catalogOnly.accessToken}` })
          expect(allowed.status).toBe(200)
        })
      )
    })
  })
})
