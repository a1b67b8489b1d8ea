import { createHash, randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Tokens } from "../../../src/services/identity/Tokens.js"
import { Users } from "../../../src/services/identity/Users.js"
import { authorizeInBrowser, BaseUrl, Browser, formFields, RealPortServer, TimeTravel } from "../../support/auth.js"

/**
 * The authorization server over HTTP: discovery, registration bounds, the authorize pages and their
 * errors, the token endpoint's negative table (modelled on what strict servers test), revocation and
 * introspection. Failed requests leave nothing behind.
 */

const verifierOf = () => randomBytes(32).toString("base64url")
const challengeOf = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

const reply = async (response: Response): Promise<Reply> => {
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: response.status, headers: response.headers, body, text }
}

const postJson = async (url: string, body: unknown) =>
  reply(
    await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  )

const postForm = async (url: string, params: Record<string, string>, headers: Record<string, string> = {}) =>
  reply(
    await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(params).toString()
    })
  )

const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`
})

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`, (rows) => rows[0]!.n)
  ).pipe(Effect.orDie)

const counts = Effect.all({
  clients: count("oauth_clients"),
  users: count("users"),
  codes: count("oauth_codes"),
  tokens: count("oauth_tokens"),
  consents: count("oauth_consents")
})

const redirectUri = "http://127.0.0.1:8765/callback"
const password = "a fine password"

/** Everything a test needs: the base URL, a user, a public and a confidential client. */
const fixture = Effect.gen(function* () {
  const baseUrl = yield* BaseUrl
  const email = `u${randomBytes(4).toString("hex")}@example.com`
  yield* Effect.flatMap(Users, (users) => users.create({ email, password })).pipe(Effect.orDie)
  const register = (extra: Record<string, unknown>) =>
    Effect.promise(() =>
      postJson(`${baseUrl}/oauth/register`, { client_name: "Agent <Test>", redirect_uris: [redirectUri], ...extra })
    ).pipe(Effect.map((r) => r.body))
  const publicClient = yield* register({ token_endpoint_auth_method: "none" })
  const confidential = yield* register({ token_endpoint_auth_method: "client_secret_post" })
  const authorizeUrl = (params: Record<string, string | undefined>) => {
    const url = new URL(`${baseUrl}/oauth/authorize`)
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v)
    return url.toString()
  }
  const validParams = (clientId: string, verifier: string) => ({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: "profile catalog:read offline_access",
    state: "s-123",
    code_challenge: challengeOf(verifier),
    code_challenge_method: "S256"
  })
  /** A code for the client, through the pages (signed in as the fixture's user). */
  const code = (clientId: string, verifier: string, overrides: Record<string, string> = {}) =>
    Effect.promise(() =>
      authorizeInBrowser(new Browser(), baseUrl, authorizeUrl({ ...validParams(clientId, verifier), ...overrides }), {
        email,
        password,
        signUp: false
      })
    ).pipe(Effect.map((url) => url.searchParams.get("code")!))
  /** A new public client that has redeemed a code, so errors of its requests are redirected to it. */
  const usedClient = Effect.gen(function* () {
    const client = yield* register({ token_endpoint_auth_method: "none" })
    const verifier = verifierOf()
    const issued = yield* code(client.client_id, verifier)
    const redeemed = yield* Effect.promise(() =>
      postForm(`${baseUrl}/oauth/token`, { ...exchangeFor(issued, verifier), client_id: client.client_id })
    )
    expect(redeemed.status, redeemed.text).toBe(200)
    return client.client_id as string
  })
  return { baseUrl, email, publicClient, confidential, authorizeUrl, validParams, code, usedClient }
})

describe("OAuth authorization server", () => {
  it.layer(RealPortServer, { timeout: 120_000 })((it) => {
    it.effect("publishes RFC 8414 and RFC 9728 metadata whose issuer is where it is served, and a persisted JWKS", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const as = yield* Effect.promise(() => fetch(`${baseUrl}/.well-known/oauth-authorization-server`).then(reply))
        expect(as.body).toMatchObject({
          issuer: baseUrl,
          authorization_endpoint: `${baseUrl}/oauth/authorize`,
          token_endpoint: `${baseUrl}/oauth/token`,
          registration_endpoint: `${baseUrl}/oauth/register`,
          revocation_endpoint: `${baseUrl}/oauth/revoke`,
          introspection_endpoint: `${baseUrl}/oauth/introspect`,
          scopes_supported: [
            "profile",
            "catalog:read",
            "orders:read",
            "orders:write",
            "payments:allowance",
            "offline_access"
          ],
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: [
            "none",
            "client_secret_post",
            "client_secret_basic",
            "private_key_jwt"
          ],
          authorization_response_iss_parameter_supported: true
        })
        const pr = yield* Effect.promise(() => fetch(`${baseUrl}/.well-known/oauth-protected-resource`).then(reply))
        expect(pr.body).toMatchObject({
          resource: baseUrl,
          authorization_servers: [baseUrl],
          scopes_supported: as.body.scopes_supported,
          bearer_methods_supported: ["header"]
        })
        const jwks = yield* Effect.promise(() => fetch(`${baseUrl}/.well-known/jwks.json`).then(reply))
        const again = yield* Effect.promise(() => fetch(`${baseUrl}/.well-known/jwks.json`).then(reply))
        expect(jwks.body.keys).toHaveLength(1)
        expect(jwks.body.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", use: "sig", alg: "EdDSA" })
        expect(jwks.body.keys[0].x).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(again.body).toEqual(jwks.body)
        expect(yield* count("signing_keys")).toBe(1)
      })
    )

    describe("registration (RFC 7591)", () => {
      it.effect("registers public and confidential clients with their metadata; loopback http is allowed", () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* fixture
          const confidential = yield* Effect.promise(() =>
            postJson(`${baseUrl}/oauth/register`, {
              client_name: "Gift helper",
              redirect_uris: ["https://agent.example/cb", "http://[::1]/cb", "http://localhost:9/cb"],
              token_endpoint_auth_method: "client_secret_basic",
              scope: "profile catalog:read",
              logo_uri: "https://agent.example/logo.png",
              contacts: ["ops@agent.example"],
              software_id: "gift-helper"
            })
          )
          expect(confidential.status).toBe(201)
          expect(confidential.headers.get("cache-control")).toBe("no-store")
          expect(confidential.body).toEqual({
            client_id: expect.stringMatching(/^[0-9a-f]{24}$/),
            client_id_issued_at: expect.any(Number),
            client_secret: expect.stringMatching(/^rcs_/),
            client_secret_expires_at: 0,
            client_name: "Gift helper",
            redirect_uris: ["https://agent.example/cb", "http://[::1]/cb", "http://localhost:9/cb"],
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "client_secret_basic",
            scope: "profile catalog:read",
            logo_uri: "https://agent.example/logo.png",
            contacts: ["ops@agent.example"],
            software_id: "gift-helper"
          })
          const pub = yield* Effect.promise(() =>
            postJson(`${baseUrl}/oauth/register`, {
              client_name: "CLI",
              redirect_uris: ["http://127.0.0.1/cb"],
              token_endpoint_auth_method: "none"
            })
          )
          expect(pub.status).toBe(201)
          expect(pub.body.client_secret).toBeUndefined()
          expect(pub.body.client_secret_expires_at).toBeUndefined()
        })
      )

      const good = { client_name: "Agent", redirect_uris: ["https://agent.example/cb"] }
      const cases: ReadonlyArray<readonly [string, unknown, string]> = [
        ["client_name missing", { redirect_uris: good.redirect_uris }, "invalid_client_metadata"],
        ["client_name empty", { ...good, client_name: "" }, "invalid_client_metadata"],
        ["client_name over 100", { ...good, client_name: "x".repeat(101) }, "invalid_client_metadata"],
        ["client_name not a string", { ...good, client_name: 7 }, "invalid_client_metadata"],
        ["redirect_uris missing", { client_name: "Agent" }, "invalid_redirect_uri"],
        ["redirect_uris empty", { ...good, redirect_uris: [] }, "invalid_redirect_uri"],
        [
          "11 redirect_uris",
          { ...good, redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) },
          "invalid_redirect_uri"
        ],
        ["http on a public host", { ...good, redirect_uris: ["http://agent.example/cb"] }, "invalid_redirect_uri"],
        [
          "a loopback port above 65535",
          { ...good, redirect_uris: ["http://127.0.0.1:99999/cb"] },
          "invalid_redirect_uri"
        ],
        ["port 0", { ...good, redirect_uris: ["http://127.0.0.1:0/cb"] }, "invalid_redirect_uri"],
        ["not a URI", { ...good, redirect_uris: ["agent callback"] }, "invalid_redirect_uri"],
        ["relative URI", { ...good, redirect_uris: ["/cb"] }, "invalid_redirect_uri"],
        ["fragment", { ...good, redirect_uris: ["https://agent.example/cb#x"] }, "invalid_redirect_uri"],
        ["javascript: scheme", { ...good, redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri"],
        [
          "one bad among good",
          { ...good, redirect_uris: ["https://a.example/cb", "ftp://a.example"] },
          "invalid_redirect_uri"
        ],
        [
          "auth method private_key_jwt",
          { ...good, token_endpoint_auth_method: "private_key_jwt" },
          "invalid_client_metadata"
        ],
        ["grant type client_credentials", { ...good, grant_types: ["client_credentials"] }, "invalid_client_metadata"],
        [
          "grant types without authorization_code",
          { ...good, grant_types: ["refresh_token"] },
          "invalid_client_metadata"
        ],
        ["response type token", { ...good, response_types: ["token"] }, "invalid_client_metadata"],
        ["unknown scope", { ...good, scope: "profile admin" }, "invalid_client_metadata"],
        ["logo_uri not a URI", { ...good, logo_uri: "logo" }, "invalid_client_metadata"],
        ["client_uri not a URI", { ...good, client_uri: "home page" }, "invalid_client_metadata"],
        ["contacts not an array", { ...good, contacts: "ops@agent.example" }, "invalid_client_metadata"],
        ["software_id not a string", { ...good, software_id: 12 }, "invalid_client_metadata"],
        ["body an array", [good], "invalid_client_metadata"]
      ]
      for (const [name, body, error] of cases) {
        it.effect(`${name} → 400 ${error}, nothing stored`, () =>
          Effect.gen(function* () {
            const baseUrl = yield* BaseUrl
            const before = yield* counts
            const response = yield* Effect.promise(() => postJson(`${baseUrl}/oauth/register`, body))
            expect(response.status, response.text).toBe(400)
            expect(response.body).toEqual({ error, error_description: expect.any(String) })
            expect(response.headers.get("cache-control")).toBe("no-store")
            expect(yield* counts).toEqual(before)
          })
        )
      }

      it.effect("a body that is not JSON → 400 invalid_client_metadata", () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const response = yield* Effect.promise(() =>
            fetch(`${baseUrl}/oauth/register`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: "{not json"
            }).then(reply)
          )
          expect(response.status).toBe(400)
          expect(response.body.error).toBe("invalid_client_metadata")
        })
      )
    })

    describe("authorize pages", () => {
      it.effect("sign-in page: labelled inputs, named buttons, CSRF token, httpOnly SameSite=Lax cookies", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const browser = new Browser()
          const url = f.authorizeUrl(f.validParams(f.publicClient.client_id, verifierOf()))
          const response = yield* Effect.promise(() => browser.request(url))
          const page = yield* Effect.promise(() => response.text())
          expect(response.status).toBe(200)
          expect(response.headers.get("content-type")).toContain("text/html")
          expect(response.headers.get("cache-control")).toBe("no-store")
          expect(response.headers.get("x-frame-options")).toBe("DENY")
          expect(page).toContain("Agent &lt;Test&gt;")
          expect(page).not.toContain("Agent <Test>")
          for (const [, id] of page.matchAll(/<input id="([^"]+)"/g)) expect(page).toContain(`<label for="${id}">`)
          expect(page).toMatch(/<button[^>]*value="sign_in">Sign in<\/button>/)
          expect(page).toMatch(/<button[^>]*value="sign_up">Create account<\/button>/)
          const csrf = formFields(page, "sign_in").csrf
          expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/)
          // The token is derived from the browser's cookie, never the cookie itself.
          const cookie = response.headers.getSetCookie().find((c) => c.startsWith("ribbon_csrf="))!
          expect(cookie).not.toContain(csrf)
          expect(cookie).toContain("HttpOnly")
          expect(cookie).toContain("SameSite=Lax")

          const signedIn = yield* Effect.promise(() =>
            browser.submit(f.baseUrl, page, "sign_in", { email: f.email, password })
          )
          const session = signedIn.headers.getSetCookie().find((c) => c.startsWith("ribbon_session="))!
          expect(session).toContain("HttpOnly")
          expect(session).toContain("SameSite=Lax")
          const consent = yield* Effect.promise(() => signedIn.text())
          expect(signedIn.status).toBe(200)
          expect(consent).toContain("Agent &lt;Test&gt;")
          expect(consent).toContain("127.0.0.1:8765")
          expect(consent).toContain("See and edit your profile and saved addresses")
          expect(consent).toContain("Browse the marketplace, prices and availability for you")
          expect(consent).toContain("Stay connected when you are not using it")
          expect(consent).toMatch(/<button[^>]*value="allow">Allow<\/button>/)
          expect(consent).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/)

          const denied = yield* Effect.promise(() => browser.submit(f.baseUrl, consent, "deny"))
          expect(denied.status).toBe(303)
          const back = new URL(denied.headers.get("location")!)
          expect(back.origin + back.pathname).toBe(redirectUri)
          expect(Object.fromEntries(back.searchParams)).toEqual({
            error: "access_denied",
            error_description: expect.any(String),
            state: "s-123",
            iss: f.baseUrl
          })
        })
      )

      it.effect(
        "a link written by hand, its redirect_uri not percent-encoded (docs/oauth.md), reaches the sign-in page",
        () =>
          Effect.gen(function* () {
            const f = yield* fixture
            const params = f.validParams(f.publicClient.client_id, verifierOf())
            // `//` inside a query value is the query's, not a path's doubled slash to fold.
            const url =
              `${f.baseUrl}/oauth/authorize?` +
              Object.entries(params)
                .map(([k, v]) => `${k}=${k === "redirect_uri" ? v : encodeURIComponent(v)}`)
                .join("&")
            expect(url).toContain(`redirect_uri=${redirectUri}&`)
            const response = yield* Effect.promise(() => new Browser().request(url))
            const page = yield* Effect.promise(() => response.text())
            expect(response.status, page.match(/role="alert">[^<]*/)?.[0]).toBe(200)
            expect(page).toMatch(/<button[^>]*value="sign_in">Sign in<\/button>/)
          })
      )

      it.effect("a form without the CSRF cookie's token is refused and redirects nowhere", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const browser = new Browser()
          const url = f.authorizeUrl(f.validParams(f.publicClient.client_id, verifierOf()))
          const page = yield* Effect.promise(() => browser.request(url).then((r) => r.text()))
          const before = yield* counts
          const forged = yield* Effect.promise(() =>
            browser.submit(f.baseUrl, page, "sign_in", { email: f.email, password, csrf: "forged" })
          )
          expect(forged.status).toBe(403)
          expect(forged.headers.get("location")).toBeNull()
          const stranger = new Browser()
          const noCookie = yield* Effect.promise(() =>
            stranger.submit(f.baseUrl, page, "sign_in", { email: f.email, password })
          )
          expect(noCookie.status).toBe(403)
          expect(yield* counts).toEqual(before)
        })
      )

      it.effect("the CSRF token is bound to the browser and renewed at sign-in: old or foreign tokens get 403", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const url = f.authorizeUrl(f.validParams(f.publicClient.client_id, verifierOf()))
          const alice = new Browser()
          const mallory = new Browser()
          const alicePage = yield* Effect.promise(() => alice.request(url).then((r) => r.text()))
          const malloryPage = yield* Effect.promise(() => mallory.request(url).then((r) => r.text()))
          const aliceToken = formFields(alicePage, "sign_in").csrf!
          expect(formFields(malloryPage, "sign_in").csrf).not.toBe(aliceToken)
          const before = yield* counts

          // Another browser's token is refused, even with a cookie of its own.
          const foreign = yield* Effect.promise(() =>
            mallory.submit(f.baseUrl, malloryPage, "sign_in", { email: f.email, password, csrf: aliceToken })
          )
          expect(foreign.status).toBe(403)
          expect(yield* Effect.promise(() => foreign.text())).toContain("This form has expired")
          expect(foreign.headers.getSetCookie().some((c) => c.startsWith("ribbon_session="))).toBe(false)

          // Signing in issues a new token (and a new pre-sign-in cookie).
          const signedIn = yield* Effect.promise(() =>
            alice.submit(f.baseUrl, alicePage, "sign_in", { email: f.email, password })
          )
          expect(signedIn.status).toBe(200)
          expect(signedIn.headers.getSetCookie().some((c) => c.startsWith("ribbon_csrf="))).toBe(true)
          const consent = yield* Effect.promise(() => signedIn.text())
          const renewed = formFields(consent, "allow").csrf!
          expect(renewed).toMatch(/^[A-Za-z0-9_-]{43}$/)
          expect(renewed).not.toBe(aliceToken)

          // The token seen before sign-in no longer works, for any form.
          for (const action of ["allow", "deny"]) {
            const stale = yield* Effect.promise(() => alice.submit(f.baseUrl, consent, action, { csrf: aliceToken }))
            expect(stale.status, action).toBe(403)
            expect(stale.headers.get("location")).toBeNull()
          }
          const staleSignIn = yield* Effect.promise(() =>
            alice.submit(f.baseUrl, alicePage, "sign_in", { email: f.email, password })
          )
          expect(staleSignIn.status).toBe(403)

          // A signed-in browser's token does not work in another signed-in browser.
          const malloryConsent = yield* Effect.promise(async () => {
            const page = await mallory.request(url).then((r) => r.text())
            return (await mallory.submit(f.baseUrl, page, "sign_in", { email: f.email, password })).text()
          })
          const crossed = yield* Effect.promise(() =>
            mallory.submit(f.baseUrl, malloryConsent, "allow", { csrf: renewed })
          )
          expect(crossed.status).toBe(403)
          const after = yield* counts
          expect({ codes: after.codes, consents: after.consents }).toEqual({
            codes: before.codes,
            consents: before.consents
          })

          // The renewed token works.
          const allowed = yield* Effect.promise(() => alice.submit(f.baseUrl, consent, "allow"))
          expect(allowed.status).toBe(303)
          expect(new URL(allowed.headers.get("location")!).searchParams.get("code")).toMatch(/^rbc_/)
        })
      )

      it.effect("remembered consent skips the page unless prompt=consent; prompt=login asks to sign in again", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const browser = new Browser()
          const verifier = verifierOf()
          const params = f.validParams(f.publicClient.client_id, verifier)
          const first = yield* Effect.promise(() =>
            authorizeInBrowser(browser, f.baseUrl, f.authorizeUrl(params), { email: f.email, password, signUp: false })
          )
          expect(first.searchParams.get("code")).toMatch(/^rbc_/)
          // Redeemed, so the client's errors (consent_required, login_required below) are redirected to it.
          const redeemed = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, {
              ...exchangeFor(first.searchParams.get("code")!, verifier),
              client_id: f.publicClient.client_id
            })
          )
          expect(redeemed.status).toBe(200)
          // Signed in, consent remembered: straight back with a code.
          const direct = yield* Effect.promise(() => browser.request(f.authorizeUrl(params)))
          expect(direct.status).toBe(302)
          const back = new URL(direct.headers.get("location")!)
          expect(back.searchParams.get("code")).toMatch(/^rbc_/)
          expect(back.searchParams.get("iss")).toBe(f.baseUrl)
          expect(back.searchParams.get("state")).toBe("s-123")
          // A subset of the remembered scopes is covered too.
          const subset = yield* Effect.promise(() => browser.request(f.authorizeUrl({ ...params, scope: "profile" })))
          expect(subset.status).toBe(302)
          // prompt=none with remembered consent also answers with a code.
          const none = yield* Effect.promise(() => browser.request(f.authorizeUrl({ ...params, prompt: "none" })))
          expect(new URL(none.headers.get("location")!).searchParams.get("code")).toMatch(/^rbc_/)
          const consent = yield* Effect.promise(() => browser.request(f.authorizeUrl({ ...params, prompt: "consent" })))
          expect(consent.status).toBe(200)
          expect(yield* Effect.promise(() => consent.text())).toContain('value="allow"')
          const login = yield* Effect.promise(() => browser.request(f.authorizeUrl({ ...params, prompt: "login" })))
          expect(yield* Effect.promise(() => login.text())).toContain('value="sign_in"')
          // More scopes than remembered: the consent page again; prompt=none then fails with consent_required.
          const wider = { ...params, scope: "profile catalog:read offline_access orders:read" }
          const more = yield* Effect.promise(() => browser.request(f.authorizeUrl(wider)))
          expect(more.status).toBe(200)
          const refused = yield* Effect.promise(() => browser.request(f.authorizeUrl({ ...wider, prompt: "none" })))
          expect(new URL(refused.headers.get("location")!).searchParams.get("error")).toBe("consent_required")
          // Without a session, prompt=none is login_required.
          const anonymous = yield* Effect.promise(() =>
            new Browser().request(f.authorizeUrl({ ...params, prompt: "none" }))
          )
          expect(new URL(anonymous.headers.get("location")!).searchParams.get("error")).toBe("login_required")
        })
      )

      it.effect(
        "sign-up refuses a taken e-mail (any case), a short or common password and the e-mail, storing nothing",
        () =>
          Effect.gen(function* () {
            const f = yield* fixture
            const browser = new Browser()
            const page = yield* Effect.promise(() =>
              browser
                .request(f.authorizeUrl(f.validParams(f.publicClient.client_id, verifierOf())))
                .then((r) => r.text())
            )
            const before = yield* counts
            const taken = yield* Effect.promise(() =>
              browser.submit(f.baseUrl, page, "sign_up", { email: f.email.toUpperCase(), password })
            )
            expect(taken.status).toBe(409)
            expect(yield* Effect.promise(() => taken.text())).toContain("already exists")
            const short = yield* Effect.promise(() =>
              browser.submit(f.baseUrl, page, "sign_up", { email: "new@example.com", password: "short" })
            )
            expect(short.status).toBe(400)
            for (const common of ["12345678", "password", "qwertyuiop"]) {
              const refused = yield* Effect.promise(() =>
                browser.submit(f.baseUrl, page, "sign_up", { email: "new@example.com", password: common })
              )
              expect(refused.status, common).toBe(400)
              expect(yield* Effect.promise(() => refused.text())).toContain("password: Too common")
            }
            const ownAddress = yield* Effect.promise(() =>
              browser.submit(f.baseUrl, page, "sign_up", {
                email: "new.person@example.com",
                password: "New.Person@example.com"
              })
            )
            expect(ownAddress.status).toBe(400)
            expect(yield* Effect.promise(() => ownAddress.text())).toContain("Must not be your e-mail address")
            const wrong = yield* Effect.promise(() =>
              browser.submit(f.baseUrl, page, "sign_in", { email: f.email, password: "not the password" })
            )
            expect(wrong.status).toBe(401)
            expect(wrong.headers.getSetCookie().some((c) => c.startsWith("ribbon_session="))).toBe(false)
            expect(yield* counts).toEqual(before)
          })
      )

      // Errors about the client or the redirect URI are shown, never redirected.
      const fatal: ReadonlyArray<readonly [string, (p: Record<string, string>) => Record<string, string | undefined>]> =
        [
          ["no client_id", (p) => ({ ...p, client_id: undefined })],
          ["unknown client_id", (p) => ({ ...p, client_id: "000000000000000000000000" })],
          ["unregistered redirect_uri", (p) => ({ ...p, redirect_uri: "https://evil.example/cb" })],
          ["redirect_uri with a trailing slash", (p) => ({ ...p, redirect_uri: `${redirectUri}/` })],
          [
            "redirect_uri in another case",
            (p) => ({ ...p, redirect_uri: redirectUri.replace("callback", "Callback") })
          ],
          ["redirect_uri with an extra query", (p) => ({ ...p, redirect_uri: `${redirectUri}?x=1` })],
          ["redirect_uri on another loopback host", (p) => ({ ...p, redirect_uri: "http://localhost:8765/callback" })],
          [
            "redirect_uri with an impossible loopback port",
            (p) => ({ ...p, redirect_uri: "http://127.0.0.1:99999/callback" })
          ]
        ]
      for (const [name, change] of fatal) {
        it.effect(`${name} → 400 error page, no redirect`, () =>
          Effect.gen(function* () {
            const f = yield* fixture
            const before = yield* counts
            const response = yield* Effect.promise(() =>
              new Browser().request(f.authorizeUrl(change(f.validParams(f.publicClient.client_id, verifierOf()))))
            )
            expect(response.status).toBe(400)
            expect(response.headers.get("location")).toBeNull()
            expect(yield* Effect.promise(() => response.text())).toContain("cannot be used")
            expect(yield* counts).toEqual(before)
          })
        )
      }

      it.effect("a loopback redirect URI may use another port (RFC 8252)", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const params = {
            ...f.validParams(f.publicClient.client_id, verifierOf()),
            redirect_uri: "http://127.0.0.1:1/callback"
          }
          const back = yield* Effect.promise(() =>
            authorizeInBrowser(new Browser(), f.baseUrl, f.authorizeUrl(params), {
              email: f.email,
              password,
              signUp: false
            })
          )
          expect(back.origin).toBe("http://127.0.0.1:1")
        })
      )

      it.effect("a loopback port above 65535 is refused on the error page before any code is made", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const browser = new Browser()
          const params = f.validParams(f.publicClient.client_id, verifierOf())
          // Signed in with consent remembered: a good request would go straight back with a code.
          yield* Effect.promise(() =>
            authorizeInBrowser(browser, f.baseUrl, f.authorizeUrl(params), { email: f.email, password, signUp: false })
          )
          const before = yield* counts
          const impossible = { ...params, redirect_uri: "http://127.0.0.1:99999/callback" }
          const direct = yield* Effect.promise(() => browser.request(f.authorizeUrl(impossible)))
          expect(direct.status).toBe(400)
          expect(direct.headers.get("location")).toBeNull()
          expect(yield* Effect.promise(() => direct.text())).toContain("impossible port (99999)")
          // The consent form posted back with the impossible port: the same page, no code.
          const consent = yield* Effect.promise(() =>
            browser.request(f.authorizeUrl({ ...params, prompt: "consent" })).then((r) => r.text())
          )
          const allowed = yield* Effect.promise(() =>
            browser.submit(f.baseUrl, consent, "allow", { redirect_uri: impossible.redirect_uri })
          )
          expect(allowed.status).toBe(400)
          expect(allowed.headers.get("location")).toBeNull()
          expect(yield* counts).toEqual(before)
        })
      )

      const redirected: ReadonlyArray<
        readonly [string, (p: Record<string, string>) => Record<string, string | undefined>, string]
      > = [
        ["response_type token", (p) => ({ ...p, response_type: "token" }), "unsupported_response_type"],
        ["no response_type", (p) => ({ ...p, response_type: undefined }), "unsupported_response_type"],
        ["no code_challenge", (p) => ({ ...p, code_challenge: undefined }), "invalid_request"],
        [
          "plain PKCE",
          (p) => ({ ...p, code_challenge_method: "plain", code_challenge: verifierOf() }),
          "invalid_request"
        ],
        [
          "no code_challenge_method (plain by default)",
          (p) => ({ ...p, code_challenge_method: undefined }),
          "invalid_request"
        ],
        ["malformed code_challenge", (p) => ({ ...p, code_challenge: "short" }), "invalid_request"],
        ["unknown scope", (p) => ({ ...p, scope: "profile admin" }), "invalid_scope"],
        ["empty scope", (p) => ({ ...p, scope: " " }), "invalid_scope"],
        ["another resource", (p) => ({ ...p, resource: "https://api.other.example" }), "invalid_target"],
        ["prompt=none with login", (p) => ({ ...p, prompt: "none login" }), "invalid_request"]
      ]
      for (const [name, change, error] of redirected) {
        it.effect(`${name} → redirected with error=${error}, state and iss`, () =>
          Effect.gen(function* () {
            const f = yield* fixture
            const clientId = yield* f.usedClient
            const before = yield* counts
            const response = yield* Effect.promise(() =>
              new Browser().request(f.authorizeUrl(change(f.validParams(clientId, verifierOf()))))
            )
            expect(response.status).toBe(302)
            const back = new URL(response.headers.get("location")!)
            expect(back.origin + back.pathname).toBe(redirectUri)
            expect(back.searchParams.get("error")).toBe(error)
            expect(back.searchParams.get("state")).toBe("s-123")
            expect(back.searchParams.get("iss")).toBe(f.baseUrl)
            expect(yield* counts).toEqual(before)
          })
        )

        // RFC 9700 §4.11.2: a registered client that never redeemed a code is not trusted with redirects.
        it.effect(`${name}, from a client that never redeemed a code → 400 error page, no redirect`, () =>
          Effect.gen(function* () {
            const f = yield* fixture
            const before = yield* counts
            const response = yield* Effect.promise(() =>
              new Browser().request(f.authorizeUrl(change(f.validParams(f.publicClient.client_id, verifierOf()))))
            )
            expect(response.status).toBe(400)
            expect(response.headers.get("location")).toBeNull()
            expect(yield* Effect.promise(() => response.text())).toContain("cannot be used")
            expect(yield* counts).toEqual(before)
          })
        )
      }

      it.effect("prompt=none from a client that never redeemed a code: login_required is shown, not redirected", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const params = { ...f.validParams(f.publicClient.client_id, verifierOf()), prompt: "none" }
          const fresh = yield* Effect.promise(() => new Browser().request(f.authorizeUrl(params)))
          expect(fresh.status).toBe(400)
          expect(fresh.headers.get("location")).toBeNull()
          expect(yield* Effect.promise(() => fresh.text())).toContain("not signed in")
          // Deny still goes back: the consent page named where the user would be sent.
          const browser = new Browser()
          const page = yield* Effect.promise(() =>
            browser.request(f.authorizeUrl({ ...params, prompt: undefined })).then((r) => r.text())
          )
          const consent = yield* Effect.promise(() =>
            browser.submit(f.baseUrl, page, "sign_in", { email: f.email, password }).then((r) => r.text())
          )
          const denied = yield* Effect.promise(() => browser.submit(f.baseUrl, consent, "deny"))
          expect(denied.status).toBe(303)
          expect(new URL(denied.headers.get("location")!).searchParams.get("error")).toBe("access_denied")
        })
      )
    })

    describe("token endpoint", () => {
      it.effect("exchanges a code (form or JSON) for exactly the documented fields, with no-store", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const verifier = verifierOf()
          const code = yield* f.code(f.publicClient.client_id, verifier)
          const response = yield* Effect.promise(() =>
            postJson(`${f.baseUrl}/oauth/token`, {
              grant_type: "authorization_code",
              code,
              code_verifier: verifier,
              redirect_uri: redirectUri,
              client_id: f.publicClient.client_id,
              resource: `${f.baseUrl}/`
            })
          )
          expect(response.status, response.text).toBe(200)
          expect(response.headers.get("cache-control")).toBe("no-store")
          expect(Object.keys(response.body).sort()).toEqual(
            ["access_token", "expires_in", "refresh_token", "scope", "token_type"].sort()
          )
          expect(response.body).toMatchObject({
            token_type: "Bearer",
            expires_in: 3600,
            scope: "profile catalog:read offline_access"
          })
          // Without offline_access there is no refresh token.
          const verifier2 = verifierOf()
          const code2 = yield* f.code(f.confidential.client_id, verifier2, { scope: "catalog:read" })
          const noRefresh = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, {
              grant_type: "authorization_code",
              code: code2,
              code_verifier: verifier2,
              redirect_uri: redirectUri,
              client_id: f.confidential.client_id,
              client_secret: f.confidential.client_secret
            })
          )
          expect(noRefresh.status, noRefresh.text).toBe(200)
          expect(Object.keys(noRefresh.body).sort()).toEqual(["access_token", "expires_in", "scope", "token_type"])
        })
      )

      type Case = readonly [
        string,
        (ctx: { code: string; verifier: string; clientId: string }) => {
          params: Record<string, string>
          headers?: Record<string, string>
        },
        number,
        string
      ]
      const exchange = (ctx: { code: string; verifier: string; clientId: string }) => ({
        grant_type: "authorization_code",
        code: ctx.code,
        code_verifier: ctx.verifier,
        redirect_uri: redirectUri,
        client_id: ctx.clientId
      })
      const without = (params: Record<string, string>, key: string) => {
        const { [key]: _, ...rest } = params
        return rest
      }
      const cases: ReadonlyArray<Case> = [
        ["missing code_verifier", (c) => ({ params: without(exchange(c), "code_verifier") }), 400, "invalid_request"],
        [
          "wrong code_verifier",
          (c) => ({ params: { ...exchange(c), code_verifier: verifierOf() } }),
          400,
          "invalid_grant"
        ],
        ["verifier too short", (c) => ({ params: { ...exchange(c), code_verifier: "abc" } }), 400, "invalid_grant"],
        [
          "challenge sent as verifier",
          (c) => ({ params: { ...exchange(c), code_verifier: challengeOf(c.verifier) } }),
          400,
          "invalid_grant"
        ],
        ["missing code", (c) => ({ params: without(exchange(c), "code") }), 400, "invalid_request"],
        ["unknown code", (c) => ({ params: { ...exchange(c), code: "rbc_nope" } }), 400, "invalid_grant"],
        [
          "redirect_uri with a trailing slash",
          (c) => ({ params: { ...exchange(c), redirect_uri: `${redirectUri}/` } }),
          400,
          "invalid_grant"
        ],
        [
          "redirect_uri in another case",
          (c) => ({ params: { ...exchange(c), redirect_uri: redirectUri.toUpperCase() } }),
          400,
          "invalid_grant"
        ],
        [
          "redirect_uri with an extra query",
          (c) => ({ params: { ...exchange(c), redirect_uri: `${redirectUri}?a=1` } }),
          400,
          "invalid_grant"
        ],
        ["redirect_uri missing", (c) => ({ params: without(exchange(c), "redirect_uri") }), 400, "invalid_grant"],
        [
          "unknown client_id",
          (c) => ({ params: { ...exchange(c), client_id: "000000000000000000000000" } }),
          401,
          "invalid_client"
        ],
        ["no client at all", (c) => ({ params: without(exchange(c), "client_id") }), 401, "invalid_client"],
        [
          "a secret for a public client",
          (c) => ({ params: { ...exchange(c), client_secret: "x" } }),
          401,
          "invalid_client"
        ],
        [
          "grant_type password",
          (c) => ({ params: { ...exchange(c), grant_type: "password" } }),
          400,
          "unsupported_grant_type"
        ],
        ["grant_type missing", (c) => ({ params: without(exchange(c), "grant_type") }), 400, "invalid_request"],
        [
          "another resource",
          (c) => ({ params: { ...exchange(c), resource: "https://api.other.example" } }),
          400,
          "invalid_target"
        ]
      ]
      for (const [name, make, status, error] of cases) {
        it.effect(`${name} → ${status} ${error}, no token issued`, () =>
          Effect.gen(function* () {
            const f = yield* fixture
            const verifier = verifierOf()
            const code = yield* f.code(f.publicClient.client_id, verifier)
            const before = yield* counts
            const { params, headers } = make({ code, verifier, clientId: f.publicClient.client_id })
            const response = yield* Effect.promise(() => postForm(`${f.baseUrl}/oauth/token`, params, headers))
            expect(response.status, response.text).toBe(status)
            expect(response.body).toEqual({ error, error_description: expect.any(String) })
            expect(response.headers.get("cache-control")).toBe("no-store")
            expect(yield* counts).toEqual(before)
            // The code is still good for the right request: a failed attempt does not spend it.
            const ok = yield* Effect.promise(() =>
              postForm(`${f.baseUrl}/oauth/token`, exchange({ code, verifier, clientId: f.publicClient.client_id }))
            )
            expect(ok.status).toBe(200)
          })
        )
      }

      it.effect("a repeated parameter → 400 invalid_request", () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const response = yield* Effect.promise(() =>
            fetch(`${baseUrl}/oauth/token`, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: "grant_type=authorization_code&code=a&code=b"
            }).then(reply)
          )
          expect(response.status).toBe(400)
          expect(response.body.error).toBe("invalid_request")
        })
      )

      it.effect("confidential clients: Basic or post; a wrong secret or none → 401 invalid_client", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const id = f.confidential.client_id
          const verifier = verifierOf()
          const code = yield* f.code(id, verifier)
          const params = { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: redirectUri }
          const noSecret = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, { ...params, client_id: id })
          )
          expect(noSecret.status).toBe(401)
          const wrong = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, params, basic(id, `${f.confidential.client_secret}x`))
          )
          expect(wrong.status).toBe(401)
          expect(wrong.body.error).toBe("invalid_client")
          const both = yield* Effect.promise(() =>
            postForm(
              `${f.baseUrl}/oauth/token`,
              { ...params, client_secret: f.confidential.client_secret },
              basic(id, f.confidential.client_secret)
            )
          )
          expect(both.status).toBe(400)
          const ok = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, params, basic(id, f.confidential.client_secret))
          )
          expect(ok.status, ok.text).toBe(200)
        })
      )

      it.effect("a reused code fails and revokes what it issued", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const verifier = verifierOf()
          const code = yield* f.code(f.publicClient.client_id, verifier)
          const params = exchange({ code, verifier, clientId: f.publicClient.client_id })
          const first = yield* Effect.promise(() => postForm(`${f.baseUrl}/oauth/token`, params))
          expect(first.status).toBe(200)
          const me = () =>
            Effect.promise(() =>
              fetch(`${f.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${first.body.access_token}` } })
            )
          expect((yield* me()).status).toBe(200)
          const again = yield* Effect.promise(() => postForm(`${f.baseUrl}/oauth/token`, params))
          expect(again.status).toBe(400)
          expect(again.body.error).toBe("invalid_grant")
          expect((yield* me()).status).toBe(401)
          const refresh = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, {
              grant_type: "refresh_token",
              refresh_token: first.body.refresh_token,
              client_id: f.publicClient.client_id
            })
          )
          expect(refresh.body.error).toBe("invalid_grant")
        })
      )

      it.effect("codes expire after 5 minutes, access tokens after an hour", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const travel = yield* TimeTravel
          const verifier = verifierOf()
          const code = yield* f.code(f.publicClient.client_id, verifier)
          yield* travel.advance("5 minutes")
          yield* travel.advance("1 second")
          const late = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, exchange({ code, verifier, clientId: f.publicClient.client_id }))
          )
          expect(late.status).toBe(400)
          expect(late.body.error).toBe("invalid_grant")
          expect(late.body.error_description).toContain("expired")

          const verifier2 = verifierOf()
          const code2 = yield* f.code(f.publicClient.client_id, verifier2)
          const tokens = yield* Effect.promise(() =>
            postForm(
              `${f.baseUrl}/oauth/token`,
              exchange({ code: code2, verifier: verifier2, clientId: f.publicClient.client_id })
            )
          )
          const me = () =>
            Effect.promise(() =>
              fetch(`${f.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${tokens.body.access_token}` } }).then(
                reply
              )
            )
          yield* travel.advance("59 minutes")
          expect((yield* me()).status).toBe(200)
          yield* travel.advance("1 minute")
          const expired = yield* me()
          expect(expired.status).toBe(401)
          expect(expired.body.detail).toContain("expired")
          // The refresh token (30 days) still works and rotates.
          const refreshed = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, {
              grant_type: "refresh_token",
              refresh_token: tokens.body.refresh_token,
              client_id: f.publicClient.client_id
            })
          )
          expect(refreshed.status).toBe(200)
          yield* travel.advance("30 days")
          const stale = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, {
              grant_type: "refresh_token",
              refresh_token: refreshed.body.refresh_token,
              client_id: f.publicClient.client_id
            })
          )
          expect(stale.body.error).toBe("invalid_grant")
        })
      )

      it.effect("refresh: widening is refused, narrowing allowed, reuse revokes the family", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const verifier = verifierOf()
          const code = yield* f.code(f.publicClient.client_id, verifier, { scope: "catalog:read offline_access" })
          const tokens = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, exchange({ code, verifier, clientId: f.publicClient.client_id }))
          )
          const refresh = (refreshToken: string, scope?: string) =>
            Effect.promise(() =>
              postForm(`${f.baseUrl}/oauth/token`, {
                grant_type: "refresh_token",
                refresh_token: refreshToken,
                client_id: f.publicClient.client_id,
                ...(scope === undefined ? {} : { scope })
              })
            )
          const before = yield* counts
          const wider = yield* refresh(tokens.body.refresh_token, "catalog:read offline_access profile")
          expect(wider.status).toBe(400)
          expect(wider.body.error).toBe("invalid_scope")
          expect(yield* counts).toEqual(before)
          const narrowed = yield* refresh(tokens.body.refresh_token, "catalog:read")
          expect(narrowed.status).toBe(200)
          expect(narrowed.body.scope).toBe("catalog:read")
          // The new refresh token keeps the grant's scope, so the next refresh can ask for all of it again.
          const full = yield* refresh(narrowed.body.refresh_token)
          expect(full.body.scope).toBe("catalog:read offline_access")
          const reused = yield* refresh(tokens.body.refresh_token)
          expect(reused.body.error).toBe("invalid_grant")
          const afterReuse = yield* refresh(full.body.refresh_token)
          expect(afterReuse.body.error).toBe("invalid_grant")
          const other = yield* refresh(full.body.refresh_token)
          expect(other.status).toBe(400)
        })
      )
    })

    describe("revocation and introspection", () => {
      it.effect(
        "revoking the access token revokes its family; unknown tokens are fine; other clients see nothing",
        () =>
          Effect.gen(function* () {
            const f = yield* fixture
            const verifier = verifierOf()
            const id = f.confidential.client_id
            const secret = f.confidential.client_secret
            const code = yield* f.code(id, verifier)
            const tokens = yield* Effect.promise(() =>
              postForm(`${f.baseUrl}/oauth/token`, {
                ...exchangeFor(code, verifier),
                client_id: id,
                client_secret: secret
              })
            )
            const introspect = (token: string, auth: Record<string, string>) =>
              Effect.promise(() => postForm(`${f.baseUrl}/oauth/introspect`, { token, ...auth }))
            const active = yield* introspect(tokens.body.refresh_token, { client_id: id, client_secret: secret })
            expect(active.body).toMatchObject({ active: true, token_type: "refresh_token", client_id: id })
            // Confidential clients must authenticate to introspect.
            const anonymous = yield* introspect(tokens.body.access_token, { client_id: id })
            expect(anonymous.status).toBe(401)
            // Another client learns nothing about this client's tokens.
            const foreign = yield* introspect(tokens.body.access_token, { client_id: f.publicClient.client_id })
            expect(foreign.body).toEqual({ active: false })
            const unknown = yield* Effect.promise(() =>
              postForm(`${f.baseUrl}/oauth/revoke`, { token: "rba_unknown", client_id: id, client_secret: secret })
            )
            expect(unknown.status).toBe(200)
            const revoked = yield* Effect.promise(() =>
              postForm(`${f.baseUrl}/oauth/revoke`, { token: tokens.body.access_token }, basic(id, secret))
            )
            expect(revoked.status).toBe(200)
            const after = yield* introspect(tokens.body.refresh_token, { client_id: id, client_secret: secret })
            expect(after.body).toEqual({ active: false })
            const me = yield* Effect.promise(() =>
              fetch(`${f.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${tokens.body.access_token}` } }).then(
                reply
              )
            )
            expect(me.status).toBe(401)
            expect(me.body.code).toBe("invalid_token")
            const missing = yield* Effect.promise(() =>
              postForm(`${f.baseUrl}/oauth/revoke`, { client_id: id, client_secret: secret })
            )
            expect(missing.status).toBe(400)
            expect(missing.body.error).toBe("invalid_request")
          })
      )

      it.effect("unusable codes, tokens and sessions are purged a day after they expire", () =>
        Effect.gen(function* () {
          const f = yield* fixture
          const tokenService = yield* Tokens
          const travel = yield* TimeTravel
          const sql = yield* SqlClient.SqlClient
          const verifier = verifierOf()
          const code = yield* f.code(f.publicClient.client_id, verifier)
          const tokens = yield* Effect.promise(() =>
            postForm(`${f.baseUrl}/oauth/token`, {
              ...exchangeFor(code, verifier),
              client_id: f.publicClient.client_id
            })
          )
          const hash = (value: string) => createHash("sha256").update(value).digest("hex")
          const left = Effect.map(
            sql<{ codes: number; access: number; refresh: number }>`
              SELECT (SELECT count(*)::int FROM oauth_codes WHERE code_hash = ${hash(code)}) AS codes,
                     (SELECT count(*)::int FROM oauth_tokens WHERE token_hash = ${hash(tokens.body.access_token)}) AS access,
                     (SELECT count(*)::int FROM oauth_tokens WHERE token_hash = ${hash(tokens.body.refresh_token)}) AS refresh`,
            (rows) => rows[0]
          ).pipe(Effect.orDie)
          yield* tokenService.purgeExpired()
          expect(yield* left).toEqual({ codes: 1, access: 1, refresh: 1 })
          yield* travel.advance("25 hours")
          const afterADay = yield* tokenService.purgeExpired()
          expect(yield* left).toEqual({ codes: 0, access: 0, refresh: 1 })
          // The browser session of the sign-in (12 hours) went too.
          expect(afterADay.sessions).toBeGreaterThan(0)
          yield* travel.advance("30 days")
          yield* tokenService.purgeExpired()
          expect(yield* left).toEqual({ codes: 0, access: 0, refresh: 0 })
        })
      )

      /** A new access token of the public client, its hash as stored, and `GET /v1/me` with it. */
      const newAccessToken = Effect.gen(function* () {
        const f = yield* fixture
        const verifier = verifierOf()
        const code = yield* f.code(f.publicClient.client_id, verifier)
        const tokens = yield* Effect.promise(() =>
          postForm(`${f.baseUrl}/oauth/token`, { ...exchangeFor(code, verifier), client_id: f.publicClient.client_id })
        )
        const token: string = tokens.body.access_token
        const me = Effect.promise(() =>
          fetch(`${f.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${token}` } }).then(reply)
        )
        return { hash: createHash("sha256").update(token).digest("hex"), me }
      })

      it.effect("a token revoked elsewhere (another instance) stops working within the 1 s cache", () =>
        Effect.gen(function* () {
          const { hash, me } = yield* newAccessToken
          expect((yield* me).status).toBe(200)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE oauth_tokens SET revoked_at = now() WHERE token_hash = ${hash}`.pipe(Effect.orDie)
          yield* (yield* TimeTravel).advance("1 second")
          const revoked = yield* me
          expect(revoked.status).toBe(401)
          expect(revoked.body.detail).toContain("revoked")
        })
      )

      it.effect("a token for another audience is refused on /v1", () =>
        Effect.gen(function* () {
          const { hash, me } = yield* newAccessToken
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE oauth_tokens SET audience = 'https://api.other.example' WHERE token_hash = ${hash}`.pipe(
            Effect.orDie
          )
          const refused = yield* me
          expect(refused.status).toBe(401)
          expect(refused.body.detail).toContain("another resource")
        })
      )
    })
  })
})

const exchangeFor = (code: string, verifier: string) => ({
  grant_type: "authorization_code",
  code,
  code_verifier: verifier,
  redirect_uri: redirectUri
})
