import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { allAccounts, defaultExpirationInDays, permissions } from "../../../src/domain/company/Company.js"
import { withActor } from "../../../src/services/company/Audit.js"
import { KeyStore } from "../../../src/services/company/KeyStore.js"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { keyHeaders, raiseLimits } from "../../support/company.js"
import { DashboardBrowser, newEmail } from "../../support/dashboard.js"
import { joinedMemberOf, ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"
import { eventually } from "../../support/eventually.js"
import { invitationPathFor } from "../../support/invitations.js"

/**
 * The dashboard's outbox over HTTP: the company's invitation and gift messages, newest first, with their links;
 * never another company's; a gift's personal data masked for a role without `gifts:read:unmasked`; on a production
 * server, a live company's outbox is not there (404, no navigation link); outside production it shows
 * (outboxOutsideProduction.test.ts).
 */

const query = <A extends object>(run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, run).pipe(Effect.orDie)

/** A company signed up by its owner. */
const company = (name: string) => Effect.flatMap(BaseUrl, (baseUrl) => ownerOf(baseUrl, name))

/** Sends an invitation through the members page's form. */
const invite = (browser: DashboardBrowser, email: string, role: string) =>
  Effect.promise(() =>
    browser.submit("/dashboard/members", { email, role, accounts: "all" }, "/dashboard/members/invitations")
  )

/** Makes the company live: a live default account. */
const goLive = (companyId: string) =>
  query(
    (sql) => sql`INSERT INTO accounts (id, company_id, environment, name, is_default, created_at)
      VALUES (${`live-${companyId}`}, ${companyId}, 'live', 'Live', true, now()) RETURNING id`
  )

/** A gift from the company to Ada by e-mail, through the API with a key of the company. */
const sendGift = (companyId: string, userId: string) =>
  Effect.gen(function* () {
    const baseUrl = yield* BaseUrl
    yield* raiseLimits(companyId)
    const made = yield* withActor({
      type: "member",
      id: userId,
      name: "Owner",
      sourceAddress: "203.0.113.5",
      requestId: "req-outbox"
    })(
      Effect.flatMap(KeyStore, (keys) =>
        keys.create({
          companyId,
          environment: "test",
          name: "Gifts",
          expirationInDays: defaultExpirationInDays,
          enforceMtls: false,
          permissions: [...permissions],
          accountsAccess: allAccounts,
          requestSource: null
        })
      )
    ).pipe(Effect.orDie)
    const post = (path: string, body: unknown) =>
      Effect.promise(() =>
        fetch(`${baseUrl}${path}`, {
          method: "POST",
          headers: { ...keyHeaders(made.apiKey), "content-type": "application/json" },
          body: JSON.stringify(body)
        }).then(async (response) => ({ status: response.status, body: await response.json() }))
      )
    const [product] = yield* query(
      (sql) => sql<{ id: string }>`SELECT id FROM products WHERE min_price_usd IS NOT NULL ORDER BY id LIMIT 1`
    )
    const campaign = yield* post("/public-api/v2/campaigns", {
      name: "Thank you",
      customization: {
        giftProperties: {
          selectedGiftType: "product",
          productId: product!.id,
          budget: { min: 10, max: 50 },
          expiration: { daysFromSend: 7 }
        }
      }
    })
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201)
    const sent = yield* post("/public-api/v2/gifts", {
      campaignId: campaign.body.id,
      recipients: [{ firstname: "Ada", lastname: "Lovelace", email: "ada@example.com", key: "ada" }],
      sendingMethod: "email"
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    return sent.body.results[0].link as string
  })

const outboxLink = '<a href="/dashboard/outbox"'

describe("dashboard outbox (production server)", () => {
  it.layer(realPortServerOn(SeededTestDatabase, undefined, { production: true }), { timeout: 240_000 })((it) => {
    it.effect("a sandbox's invitations show with their links, newest first; another company's never", () =>
      Effect.gen(function* () {
        const alpha = yield* company("Alpha")
        const beta = yield* company("Beta")
        const empty = yield* Effect.promise(() => alpha.browser.get("/dashboard/outbox"))
        expect(empty.status).toBe(200)
        expect(empty.text).toContain("No messages yet.")
        expect(empty.text).toContain(outboxLink)

        const first = newEmail("first")
        const second = newEmail("second")
        expect((yield* invite(alpha.browser, first, "viewer")).status).toBe(303)
        expect((yield* invite(alpha.browser, second, "developer")).status).toBe(303)
        const hidden = newEmail("beta-only")
        expect((yield* invite(beta.browser, hidden, "viewer")).status).toBe(303)

        const page = yield* Effect.promise(() => alpha.browser.get("/dashboard/outbox"))
        expect(page.status).toBe(200)
        const baseUrl = yield* BaseUrl
        for (const email of [first, second]) {
          const path = yield* invitationPathFor(email)
          expect(page.text).toContain(`<a href="${baseUrl}${path}">`)
          expect(page.text).toContain(email)
        }
        expect(page.text.indexOf(second)).toBeLessThan(page.text.indexOf(first))
        expect(page.text).toContain("invites you to")
        expect(page.text).not.toContain(hidden)
        expect(page.text).not.toContain(yield* invitationPathFor(hidden))
      })
    )

    it.effect("a gift's message shows to the owner in full, and masked to a viewer, with its link to both", () =>
      Effect.gen(function* () {
        const owner = yield* company("Gifting")
        const viewer = (yield* joinedMemberOf(owner.browser, "viewer")).browser
        const link = yield* sendGift(owner.companyId, owner.userId)
        const full = yield* eventually(
          Effect.promise(() => owner.browser.get("/dashboard/outbox")),
          (page) => page.text.includes("You have a gift"),
          "the gift's message in the outbox"
        )
        expect(full.text).toContain("ada@example.com")
        expect(full.text).toContain("Hello Ada")
        expect(full.text).toContain(`<a href="${link}">`)

        const masked = yield* Effect.promise(() => viewer.get("/dashboard/outbox"))
        expect(masked.status).toBe(200)
        expect(masked.text).toContain("You have a gift")
        expect(masked.text).toContain("a***@example.com")
        expect(masked.text).not.toContain("ada@example.com")
        expect(masked.text).not.toContain("Ada")
        expect(masked.text).toContain(`<a href="${link}">`)
      })
    )

    it.effect("a live company's outbox is not there: a 404 page and no navigation link", () =>
      Effect.gen(function* () {
        const live = yield* company("Live")
        yield* goLive(live.companyId)
        const page = yield* Effect.promise(() => live.browser.get("/dashboard/outbox"))
        expect(page.status).toBe(404)
        expect(page.text).not.toContain("No messages yet.")
        const home = yield* Effect.promise(() => live.browser.get("/dashboard"))
        expect(home.status).toBe(200)
        expect(home.text).not.toContain(outboxLink)
      })
    )

    it.effect("signed out, the outbox sends to sign-in", () =>
      Effect.gen(function* () {
        const browser = new DashboardBrowser(yield* BaseUrl)
        const page = yield* Effect.promise(() => browser.get("/dashboard/outbox"))
        expect(page.status).toBe(303)
        expect(page.location).toBe("/dashboard/sign-in")
      })
    )
  })
})
