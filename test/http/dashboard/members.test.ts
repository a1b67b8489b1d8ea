import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { Secret, TOTP } from "otpauth"
import { Companies } from "../../../src/services/company/Companies.js"
import { TwoFactor } from "../../../src/services/identity/TwoFactor.js"
import { BaseUrl, RealPortServer, TimeTravel } from "../../support/auth.js"
import { csrfOf, DashboardBrowser, newEmail, type Page, strongPassword } from "../../support/dashboard.js"
import { joinedMemberOf, ownerOf, signedUpIdsOf } from "../../support/dashboardMembers.js"
import { invitationPathFor } from "../../support/invitations.js"

/**
 * The Members pages over HTTP: inviting through the outbox, joining by the link (a new person's password, an
 * existing person's sign-in, a signed-in person's accept button), role changes, account limits, removal,
 * ownership transfer and leaving, each the Members service's operation; every refusal (a role without the
 * right, the Policy, the last owner, a bad field, a missing CSRF token, another company's ids) a page that
 * changes nothing.
 */

const query = <A extends object>(run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, run).pipe(Effect.orDie)

/** A member's role and accounts, or undefined when not a member. */
const membership = (companyId: string, userId: string) =>
  Effect.map(
    query(
      (sql) => sql<{ role: string; accountsAccess: { scope: string; ids: Array<string> } }>`SELECT role,
        accounts_access FROM company_members WHERE company_id = ${companyId} AND user_id = ${userId}`
    ),
    (rows) => rows[0]
  )

/** The company's members, invitations, invitation e-mails and every user: compared before and after a refusal. */
const tablesOf = (companyId: string) =>
  query(
    (sql) => sql`SELECT
      (SELECT coalesce(json_agg(m ORDER BY m.user_id), '[]') FROM company_members m
        WHERE m.company_id = ${companyId}) AS members,
      (SELECT coalesce(json_agg(i ORDER BY i.id), '[]') FROM member_invitations i
        WHERE i.company_id = ${companyId}) AS invitations,
      (SELECT count(*)::int FROM notifications n JOIN member_invitations i ON i.id = n.invitation_id
        WHERE i.company_id = ${companyId}) AS messages,
      (SELECT count(*)::int FROM users) AS users`
  )

/** Runs `act`, expects its page's status, and that the company's members and invitations did not change. */
const unchanged = <R = never>(
  companyId: string,
  status: number,
  act: (() => Promise<Page>) | Effect.Effect<Page, never, R>
) =>
  Effect.gen(function* () {
    const before = yield* tablesOf(companyId)
    const page = yield* typeof act === "function" ? Effect.promise(act) : act
    expect(page.status, page.text.slice(0, 2000)).toBe(status)
    expect(yield* tablesOf(companyId)).toEqual(before)
    return page
  })

/** Posts a form's fields url-encoded, some of them repeated (checkboxes). */
const postForm = (browser: DashboardBrowser, path: string, fields: ReadonlyArray<readonly [string, string]>) =>
  browser.request(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields.map(([k, v]) => [k, v])).toString()
  })

/** The CSRF token of the browser's session (any of its forms carries it). */
const tokenOf = async (browser: DashboardBrowser) =>
  csrfOf((await browser.get("/dashboard")).text, "/dashboard/sign-out")

/** A company signed up by its owner. */
const company = (name: string) => Effect.flatMap(BaseUrl, (baseUrl) => ownerOf(baseUrl, name))

/** Sends an invitation through the members page's form. */
const invite = (
  browser: DashboardBrowser,
  email: string,
  role: string,
  accounts: { readonly scope: "all" } | { readonly scope: "selected"; readonly ids: ReadonlyArray<string> } = {
    scope: "all"
  }
) =>
  Effect.promise(async () => {
    const page = await browser.get("/dashboard/members")
    const csrf = csrfOf(page.text, "/dashboard/members/invitations")
    return postForm(browser, "/dashboard/members/invitations", [
      ["csrf", csrf],
      ["email", email],
      ["role", role],
      ["accounts", accounts.scope],
      ...(accounts.scope === "selected" ? accounts.ids.map((id) => ["accountIds", id] as const) : [])
    ])
  })

describe("dashboard members", () => {
  it.layer(RealPortServer, { timeout: 240_000 })((it) => {
    it.effect("the owner invites a developer, who creates a password and is signed in as a developer", () =>
      Effect.gen(function* () {
        const owner = yield* company("Inviters")
        const empty = yield* Effect.promise(() => owner.browser.get("/dashboard/members"))
        expect(empty.status).toBe(200)
        expect(empty.text).toContain(owner.email)
        expect(empty.text).toContain("No pending invitations.")

        const email = newEmail("dev")
        const sent = yield* invite(owner.browser, email, "developer")
        expect(sent.status).toBe(303)
        expect(sent.location).toBe("/dashboard/members")
        const path = yield* invitationPathFor(email)
        const listed = yield* Effect.promise(() => owner.browser.get("/dashboard/members"))
        expect(listed.text).toContain(`was sent to ${email}`)
        expect(listed.text).toContain(path)
        expect(listed.text).toContain("Invitations not yet accepted")

        const person = new DashboardBrowser(yield* BaseUrl)
        const page = yield* Effect.promise(() => person.get(path))
        expect(page.status).toBe(200)
        expect(page.text).toContain("Join Inviters")
        expect(page.text).toContain(owner.email)
        expect(page.text).toContain("developer: API keys, webhooks and exports")
        const csrf = csrfOf(page.text, `${path}/join`)

        // A common password: refused beside its field, and no user is made.
        const weak = yield* unchanged(owner.companyId, 400, () =>
          person.post(`${path}/join`, { csrf, newPassword: "password", displayName: "Dana" })
        )
        expect(weak.text).toContain("Too common")
        expect(weak.text).toContain('value="Dana"')

        const joined = yield* Effect.promise(() =>
          person.post(`${path}/join`, { csrf, newPassword: strongPassword, displayName: "Dana Developer" })
        )
        expect(joined.status).toBe(303)
        expect(joined.location).toBe("/dashboard")
        const home = yield* Effect.promise(() => person.get("/dashboard"))
        expect(home.status).toBe(200)
        expect(home.text).toContain("You joined Inviters as developer.")
        expect(home.text).toContain(`Signed in as ${email}, developer`)
        const { userId } = yield* signedUpIdsOf(email)
        expect(yield* membership(owner.companyId, userId)).toEqual({
          role: "developer",
          accountsAccess: { scope: "all-accounts", ids: [] }
        })

        const after = yield* Effect.promise(() => owner.browser.get("/dashboard/members"))
        expect(after.text).toContain("Dana Developer")
        expect(after.text).toContain("No pending invitations.")
        // The link made one member, once.
        const again = yield* Effect.promise(() => new DashboardBrowser(owner.browser.baseUrl).get(path))
        expect(again.status).toBe(409)
        expect(again.text).toContain("already been accepted")
      })
    )

    it.effect("an existing person signs in on the invitation's page, or accepts when signed in; not someone else", () =>
      Effect.gen(function* () {
        const alpha = yield* company("Alpha Gifts")
        const beta = yield* company("Beta Gifts")
        const pat = yield* company("Pat's Own")
        const stranger = yield* company("Stranger")

        expect((yield* invite(alpha.browser, pat.email, "viewer")).status).toBe(303)
        const path = yield* invitationPathFor(pat.email)
        const wrong = yield* unchanged(alpha.companyId, 403, () => stranger.browser.get(path))
        expect(wrong.text).toContain("This invitation is for someone else")
        expect(wrong.text).toContain(stranger.email)

        const signedOut = new DashboardBrowser(alpha.browser.baseUrl)
        const page = yield* Effect.promise(() => signedOut.get(path))
        const csrf = csrfOf(page.text, `${path}/sign-in`)
        const refused = yield* unchanged(alpha.companyId, 401, () =>
          signedOut.post(`${path}/sign-in`, { csrf, password: "not-the-password" })
        )
        expect(refused.text).toContain("The password is not right.")
        expect(signedOut.cookies.has("ribbon_dashboard")).toBe(false)

        // Pat has an account: choosing a new password is refused, and makes nothing.
        const taken = yield* unchanged(alpha.companyId, 409, () =>
          signedOut.post(`${path}/join`, { csrf, newPassword: "another-long-passphrase-7" })
        )
        expect(taken.text).toContain("already has a Ribbon account: sign in with its password above.")

        const accepted = yield* Effect.promise(() =>
          signedOut.post(`${path}/sign-in`, { csrf, password: strongPassword })
        )
        expect(accepted.status).toBe(303)
        expect(accepted.location).toBe("/dashboard")
        const home = yield* Effect.promise(() => signedOut.get("/dashboard"))
        expect(home.text).toContain("Alpha Gifts")
        expect(home.text).toContain(`Signed in as ${pat.email}, viewer`)
        expect((yield* membership(alpha.companyId, pat.userId))?.role).toBe("viewer")

        // Signed in already (in Pat's own company): the page offers the accept button, and the session moves.
        expect((yield* invite(beta.browser, pat.email.toUpperCase(), "sender")).status).toBe(303)
        const betaPath = yield* invitationPathFor(pat.email)
        const offer = yield* Effect.promise(() => pat.browser.get(betaPath))
        expect(offer.status).toBe(200)
        expect(offer.text).toContain("Accept and join Beta Gifts")
        const noToken = yield* unchanged(beta.companyId, 403, () => pat.browser.post(`${betaPath}/accept`, {}))
        expect(noToken.text).toContain("This form has expired")
        const joined = yield* Effect.promise(() =>
          pat.browser.post(`${betaPath}/accept`, { csrf: csrfOf(offer.text, `${betaPath}/accept`) })
        )
        expect(joined.status).toBe(303)
        const inBeta = yield* Effect.promise(() => pat.browser.get("/dashboard"))
        expect(inBeta.text).toContain("You joined Beta Gifts as sender.")
        expect(inBeta.text).toContain(`Signed in as ${pat.email}, sender`)
      })
    )

    it.effect("a viewer or a developer cannot reach the members pages: 403 pages that change nothing", () =>
      Effect.gen(function* () {
        const owner = yield* company("Guarded Members")
        const viewer = yield* joinedMemberOf(owner.browser, "viewer")
        const developer = yield* joinedMemberOf(owner.browser, "developer")
        expect((yield* invite(owner.browser, newEmail("pending"), "sender")).status).toBe(303)
        const [pending] = yield* query(
          (sql) => sql<{ id: string }>`SELECT id FROM member_invitations
            WHERE company_id = ${owner.companyId} AND accepted_at IS NULL`
        )

        for (const member of [viewer, developer]) {
          for (const path of [
            "/dashboard/members",
            `/dashboard/members/${owner.userId}`,
            `/dashboard/members/${owner.userId}/remove`,
            `/dashboard/members/${owner.userId}/transfer`
          ]) {
            const page = yield* unchanged(owner.companyId, 403, () => member.browser.get(path))
            expect(page.text, path).toContain("Not allowed")
          }
          const csrf = yield* Effect.promise(() => tokenOf(member.browser))
          for (const [path, fields] of [
            ["/dashboard/members/invitations", { email: newEmail("x"), role: "viewer", accounts: "all" }],
            [`/dashboard/members/invitations/${pending!.id}/revoke`, {}],
            [`/dashboard/members/${owner.userId}/role`, { role: "viewer" }],
            [`/dashboard/members/${member.userId}/role`, { role: "admin" }],
            [`/dashboard/members/${owner.userId}/accounts`, { accounts: "selected" }],
            [`/dashboard/members/${owner.userId}/remove`, {}],
            [`/dashboard/members/${member.userId}/transfer`, {}]
          ] as const) {
            const page = yield* unchanged(owner.companyId, 403, () =>
              member.browser.post(path, { csrf, ...fields } as Record<string, string>)
            )
            expect(page.text, path).toContain("Not allowed")
          }
        }
        // Leaving needs no right.
        expect((yield* Effect.promise(() => viewer.browser.get("/dashboard/members/leave"))).status).toBe(200)
      })
    )

    it.effect("a form without its CSRF token is refused; another company's member or invitation is not found", () =>
      Effect.gen(function* () {
        const alpha = yield* company("Alpha Members")
        const beta = yield* company("Beta Members")
        expect((yield* invite(beta.browser, newEmail("beta"), "viewer")).status).toBe(303)
        const [betaInvitation] = yield* query(
          (sql) => sql<{ id: string }>`SELECT id FROM member_invitations WHERE company_id = ${beta.companyId}`
        )

        const forged = yield* unchanged(alpha.companyId, 403, () =>
          alpha.browser.post("/dashboard/members/invitations", {
            email: newEmail("x"),
            role: "viewer",
            accounts: "all"
          })
        )
        expect(forged.text).toContain("This form has expired")

        const csrf = yield* Effect.promise(() => tokenOf(alpha.browser))
        const notFound = (act: () => Promise<Page>) =>
          Effect.gen(function* () {
            const page = yield* unchanged(beta.companyId, 404, act)
            expect(page.text).toContain("Not found")
            expect(page.text).not.toContain("Beta Members")
          })
        yield* notFound(() => alpha.browser.get(`/dashboard/members/${beta.userId}`))
        yield* notFound(() => alpha.browser.get(`/dashboard/members/${beta.userId}/remove`))
        yield* notFound(() => alpha.browser.post(`/dashboard/members/${beta.userId}/role`, { csrf, role: "viewer" }))
        yield* notFound(() =>
          alpha.browser.post(`/dashboard/members/${beta.userId}/accounts`, { csrf, accounts: "all" })
        )
        yield* notFound(() => alpha.browser.post(`/dashboard/members/${beta.userId}/remove`, { csrf }))
        yield* notFound(() => alpha.browser.post(`/dashboard/members/${beta.userId}/transfer`, { csrf }))
        yield* notFound(() =>
          alpha.browser.post(`/dashboard/members/invitations/${betaInvitation!.id}/revoke`, { csrf })
        )
      })
    )

    it.effect("bad invitations are refused beside their fields and change nothing", () =>
      Effect.gen(function* () {
        const owner = yield* company("Careful")
        const other = yield* company("Other Careful")
        const foreignAccount = other.accountId
        const member = yield* joinedMemberOf(owner.browser, "viewer")

        const badEmail = yield* unchanged(owner.companyId, 400, invite(owner.browser, "not-an-email", "viewer"))
        expect(badEmail.text).toContain("Expected an e-mail address")
        expect(badEmail.text).toContain('value="not-an-email"')
        const badRole = yield* unchanged(owner.companyId, 400, invite(owner.browser, newEmail("r"), "superuser"))
        expect(badRole.text).toContain("Expected one of owner, admin, developer, sender, viewer")
        const foreign = yield* unchanged(
          owner.companyId,
          400,
          invite(owner.browser, newEmail("f"), "viewer", { scope: "selected", ids: [foreignAccount] })
        )
        expect(foreign.text).toContain("No such account in this company.")
        const noScope = yield* unchanged(owner.companyId, 400, async () =>
          owner.browser.post("/dashboard/members/invitations", {
            csrf: await tokenOf(owner.browser),
            email: newEmail("n"),
            role: "viewer"
          })
        )
        expect(noScope.text).toContain("Pick all accounts or some of them")
        const already = yield* unchanged(owner.companyId, 409, invite(owner.browser, member.email, "viewer"))
        expect(already.text).toContain("is already a member of this company")
      })
    )

    it.effect("roles, accounts, removal and ownership change through their pages; the last owner stays", () =>
      Effect.gen(function* () {
        const owner = yield* company("Changing Hands")
        const admin = yield* joinedMemberOf(owner.browser, "admin")
        const developer = yield* joinedMemberOf(owner.browser, "developer")
        const csrf = yield* Effect.promise(() => tokenOf(owner.browser))
        const account = owner.accountId

        const memberPage = yield* Effect.promise(() => owner.browser.get(`/dashboard/members/${developer.userId}`))
        expect(memberPage.status).toBe(200)
        expect(memberPage.text).toContain(developer.email)
        expect(memberPage.text).toContain(`Transfer ownership to ${developer.email}`)

        const changed = yield* Effect.promise(() =>
          owner.browser.post(`/dashboard/members/${developer.userId}/role`, { csrf, role: "sender" })
        )
        expect(changed.status).toBe(303)
        expect((yield* Effect.promise(() => owner.browser.get(changed.location!))).text).toContain("is now a sender.")
        const unknown = yield* unchanged(owner.companyId, 400, () =>
          owner.browser.post(`/dashboard/members/${developer.userId}/role`, { csrf, role: "superuser" })
        )
        expect(unknown.text).toContain("Expected one of")

        const limited = yield* Effect.promise(() =>
          postForm(owner.browser, `/dashboard/members/${developer.userId}/accounts`, [
            ["csrf", csrf],
            ["accounts", "selected"],
            ["accountIds", account]
          ])
        )
        expect(limited.status).toBe(303)
        expect(yield* membership(owner.companyId, developer.userId)).toEqual({
          role: "sender",
          accountsAccess: { scope: "selected-accounts", ids: [account] }
        })

        // An admin cannot touch an owner: the page says so, and a forged form is refused.
        const ownerSeenByAdmin = yield* Effect.promise(() => admin.browser.get(`/dashboard/members/${owner.userId}`))
        expect(ownerSeenByAdmin.text).toContain("only an owner can")
        expect(ownerSeenByAdmin.text).not.toContain(`/dashboard/members/${owner.userId}/role`)
        const adminCsrf = yield* Effect.promise(() => tokenOf(admin.browser))
        const denied = yield* unchanged(owner.companyId, 403, () =>
          admin.browser.post(`/dashboard/members/${owner.userId}/role`, { csrf: adminCsrf, role: "viewer" })
        )
        expect(denied.text).toContain("only an owner can")
        expect(
          (yield* Effect.promise(() => admin.browser.get(`/dashboard/members/${admin.userId}/transfer`))).status
        ).toBe(403)

        // Removal, after its confirm step; the removed member's session ends.
        const confirm = yield* Effect.promise(() => owner.browser.get(`/dashboard/members/${developer.userId}/remove`))
        expect(confirm.text).toContain(`Remove ${developer.email} from Changing Hands?`)
        const removed = yield* Effect.promise(() =>
          owner.browser.post(`/dashboard/members/${developer.userId}/remove`, {
            csrf: csrfOf(confirm.text, `/dashboard/members/${developer.userId}/remove`)
          })
        )
        expect(removed.status).toBe(303)
        expect(yield* membership(owner.companyId, developer.userId)).toBeUndefined()
        expect((yield* Effect.promise(() => developer.browser.get("/dashboard"))).location).toBe("/dashboard/sign-in")

        // The last owner cannot leave.
        const leave = yield* Effect.promise(() => owner.browser.get("/dashboard/members/leave"))
        expect(leave.text).toContain("Leave Changing Hands?")
        const stays = yield* unchanged(owner.companyId, 409, () =>
          owner.browser.post("/dashboard/members/leave", { csrf: csrfOf(leave.text, "/dashboard/members/leave") })
        )
        expect(stays.text).toContain("The company's last owner cannot leave")

        // Ownership goes to the admin; the former owner, now an admin, may leave.
        const transfer = yield* Effect.promise(() => owner.browser.get(`/dashboard/members/${admin.userId}/transfer`))
        expect(transfer.text).toContain(`Make ${admin.email} the owner of Changing Hands?`)
        const transferred = yield* Effect.promise(() =>
          owner.browser.post(`/dashboard/members/${admin.userId}/transfer`, {
            csrf: csrfOf(transfer.text, `/dashboard/members/${admin.userId}/transfer`)
          })
        )
        expect(transferred.status).toBe(303)
        expect((yield* membership(owner.companyId, admin.userId))?.role).toBe("owner")
        expect((yield* membership(owner.companyId, owner.userId))?.role).toBe("admin")
        const left = yield* Effect.promise(() => owner.browser.post("/dashboard/members/leave", { csrf }))
        expect(left.status).toBe(303)
        expect(left.location).toBe("/dashboard/sign-in")
        expect(owner.browser.cookies.has("ribbon_dashboard")).toBe(false)
        expect(yield* membership(owner.companyId, owner.userId)).toBeUndefined()
      })
    )

    it.effect(
      "joining asks for the second factor as signing in does: the person's own, or the company's requirement",
      () =>
        Effect.gen(function* () {
          const owner = yield* company("Two Factors")
          const careful = yield* company("Careful Person's")
          const email = newEmail("careful")
          // Invited first: once the company requires a second factor, its owner (without one) must turn it on.
          expect((yield* invite(owner.browser, email, "viewer")).status).toBe(303)
          expect((yield* invite(owner.browser, careful.email, "sender")).status).toBe(303)
          yield* Effect.flatMap(Companies, (companies) => companies.requireTwoFactor(owner.companyId, true)).pipe(
            Effect.orDie
          )
          const path = yield* invitationPathFor(email)
          const person = new DashboardBrowser(yield* BaseUrl)
          const page = yield* Effect.promise(() => person.get(path))
          const joined = yield* Effect.promise(() =>
            person.post(`${path}/join`, { csrf: csrfOf(page.text, `${path}/join`), newPassword: strongPassword })
          )
          expect(joined.status).toBe(303)
          // Signed in, and sent to turn two-factor sign-in on before anything else.
          expect((yield* Effect.promise(() => person.get("/dashboard"))).location).toBe("/dashboard/account")
          const { userId } = yield* signedUpIdsOf(email)
          expect((yield* membership(owner.companyId, userId))?.role).toBe("viewer")

          // Someone with two-factor sign-in on gives the second factor before any session starts.
          const twoFactor = yield* TwoFactor
          const { secret } = yield* twoFactor.begin(careful.userId, careful.email).pipe(Effect.orDie)
          const code = TOTP.generate({
            secret: Secret.fromBase32(secret),
            algorithm: "SHA1",
            digits: 6,
            period: 30,
            timestamp: yield* Clock.currentTimeMillis
          })
          yield* twoFactor.confirm(careful.userId, code).pipe(Effect.orDie)
          const carefulPath = yield* invitationPathFor(careful.email)
          const signedOut = new DashboardBrowser(owner.browser.baseUrl)
          const offer = yield* Effect.promise(() => signedOut.get(carefulPath))
          const signedIn = yield* Effect.promise(() =>
            signedOut.post(`${carefulPath}/sign-in`, {
              csrf: csrfOf(offer.text, `${carefulPath}/sign-in`),
              password: strongPassword
            })
          )
          expect(signedIn.status).toBe(303)
          expect(signedIn.location).toBe("/dashboard/sign-in/two-factor")
          expect(signedOut.cookies.has("ribbon_dashboard")).toBe(false)
          expect((yield* membership(owner.companyId, careful.userId))?.role).toBe("sender")
        })
    )

    // Last: it moves the server's clock a week ahead.
    it.effect("a withdrawn, replaced, unknown or expired link gets a page saying so, and joins nobody", () =>
      Effect.gen(function* () {
        const owner = yield* company("Link Keepers")
        const baseUrl = yield* BaseUrl
        const visit = (path: string) => Effect.promise(() => new DashboardBrowser(baseUrl).get(path))

        const withdrawn = newEmail("withdrawn")
        expect((yield* invite(owner.browser, withdrawn, "viewer")).status).toBe(303)
        const withdrawnPath = yield* invitationPathFor(withdrawn)
        const list = yield* Effect.promise(() => owner.browser.get("/dashboard/members"))
        const [id] = yield* query(
          (sql) => sql<{ id: string }>`SELECT id FROM member_invitations WHERE email = ${withdrawn}`
        )
        const revoke = `/dashboard/members/invitations/${id!.id}/revoke`
        expect(
          (yield* Effect.promise(() => owner.browser.post(revoke, { csrf: csrfOf(list.text, revoke) }))).status
        ).toBe(303)
        const gone = yield* visit(withdrawnPath)
        expect(gone.status).toBe(410)
        expect(gone.text).toContain("withdrawn or replaced")

        const replaced = newEmail("replaced")
        expect((yield* invite(owner.browser, replaced, "viewer")).status).toBe(303)
        const firstPath = yield* invitationPathFor(replaced)
        expect((yield* invite(owner.browser, replaced, "sender")).status).toBe(303)
        expect((yield* visit(firstPath)).status).toBe(410)
        expect((yield* visit(yield* invitationPathFor(replaced))).text).toContain("sender")

        const unknown = yield* visit(`/dashboard/invitations/${"A".repeat(43)}`)
        expect(unknown.status).toBe(404)
        expect(unknown.text).toContain("This invitation link is not valid.")

        const late = newEmail("late")
        expect((yield* invite(owner.browser, late, "viewer")).status).toBe(303)
        const latePath = yield* invitationPathFor(late)
        const person = new DashboardBrowser(baseUrl)
        const page = yield* Effect.promise(() => person.get(latePath))
        yield* Effect.flatMap(TimeTravel, (time) => time.advance("7 days"))
        const expired = yield* Effect.promise(() => person.get(latePath))
        expect(expired.status).toBe(410)
        expect(expired.text).toContain("This invitation has expired")
        const tooLate = yield* unchanged(owner.companyId, 410, () =>
          person.post(`${latePath}/join`, { csrf: csrfOf(page.text, `${latePath}/join`), newPassword: strongPassword })
        )
        expect(tooLate.text).toContain("This invitation has expired")
      })
    )
  })
})
