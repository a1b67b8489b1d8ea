import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CompanyWebhooks } from "../../../src/services/company/CompanyWebhooks.js"
import { Members } from "../../../src/services/company/Members.js"
import { CompanyPolicy } from "../../../src/services/company/Policy.js"
import { BaseUrl, RealPortServer } from "../../support/auth.js"
import { csrfOf, type DashboardBrowser, type Page, proseOf } from "../../support/dashboard.js"
import { memberOf, ownerOf } from "../../support/dashboardMembers.js"

/**
 * The dashboard's webhooks pages over HTTP: creating an endpoint (every bad field a 400 page that stores nothing,
 * the secret shown once), its deliveries, a test event, resend, disable and enable, delete through its confirm
 * step; roles without `developer:manage` get the 403 page and change nothing; forms without their CSRF token are
 * refused; another company's ids, and ids that are no ids, are the 404 page.
 */

/** Creation checks the URL as deliveries will (loopback is allowed in tests); nothing listens there. */
const hookUrl = "https://127.0.0.1:9/hooks/dashboard"

const count = (table: "company_webhook_endpoints" | "webhook_deliveries", companyId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      table === "company_webhook_endpoints"
        ? sql<{ n: number }>`SELECT count(*)::int AS n FROM company_webhook_endpoints
            WHERE company_id = ${companyId} AND deleted_at IS NULL`
        : sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries d
            JOIN company_webhook_endpoints e ON e.id = d.endpoint_id WHERE e.company_id = ${companyId}`,
      (rows) => rows[0]!.n
    )
  ).pipe(Effect.orDie)

/** Creates an endpoint through the form; the page showing its secret. */
const createEndpoint = (browser: DashboardBrowser, fields: Record<string, string | ReadonlyArray<string>>) =>
  Effect.promise(async () => {
    const form = await browser.get("/dashboard/webhooks/new?environment=test")
    const body = new URLSearchParams({ csrf: csrfOf(form.text, "/dashboard/webhooks") })
    for (const [name, value] of Object.entries(fields)) {
      for (const one of typeof value === "string" ? [value] : value) body.append(name, one)
    }
    return browser.request("/dashboard/webhooks", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: body.toString()
    })
  })

const endpointIdOf = (page: Page) => page.text.match(/href="\/dashboard\/webhooks\/([0-9a-f]{24})"/)![1]!

/** Posts the form to `action` found on `pagePath`, with its CSRF token. */
const postForm = (browser: DashboardBrowser, pagePath: string, action: string, fields: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const page = await browser.get(pagePath)
    return browser.post(action, { csrf: csrfOf(page.text, action), ...fields })
  })

describe("dashboard webhooks pages", () => {
  it.layer(RealPortServer, { timeout: 240_000 })((it) => {
    it.effect(
      "creates an endpoint, shows its secret once, sends a test event, resends, disables, enables, deletes",
      () =>
        Effect.gen(function* () {
          const baseUrl = yield* BaseUrl
          const { browser, companyId, userId } = yield* ownerOf(baseUrl, "Hooked Gifts")
          const empty = yield* Effect.promise(() => browser.get("/dashboard/webhooks"))
          expect(empty.status).toBe(200)
          expect(empty.headers.get("cache-control")).toContain("no-store")
          expect(proseOf(empty.text)).toContain("No test endpoints yet.")

          // Every bad field is a 400 page naming it, and nothing is stored.
          const cases: ReadonlyArray<[Record<string, string | ReadonlyArray<string>>, RegExp]> = [
            [
              { environment: "test", url: "", eventTypes: [] },
              /Enter the endpoint's URL\..*Choose at least one event type\./
            ],
            [{ environment: "test", url: "http://127.0.0.1:9/hooks", eventTypes: ["order-created"] }, /must be https/],
            [{ environment: "test", url: "https://10.0.0.7/hooks", eventTypes: ["order-created"] }, /private/],
            [{ environment: "test", url: "not a url", eventTypes: ["order-created"] }, /Not a valid URL\./],
            [
              { environment: "test", url: `https://127.0.0.1/${"x".repeat(2048)}`, eventTypes: ["order-created"] },
              /2048/
            ],
            [{ environment: "test", url: hookUrl, eventTypes: ["order-created", "order-shipped"] }, /Must be one of/],
            [{ environment: "moon", url: hookUrl, eventTypes: ["order-created"] }, /Choose the environment/]
          ]
          for (const [fields, message] of cases) {
            const refused = yield* createEndpoint(browser, fields)
            expect(refused.status, JSON.stringify(fields)).toBe(400)
            expect(proseOf(refused.text)).toMatch(message)
            expect(refused.text).toContain('role="alert"')
          }
          // What was sent comes back in the form.
          const kept = yield* createEndpoint(browser, {
            environment: "test",
            url: "ftp://x",
            eventTypes: ["order-cancelled"]
          })
          expect(kept.text).toContain('value="ftp://x"')
          expect(kept.text).toMatch(/value="order-cancelled"[^>]*checked/)
          expect(yield* count("company_webhook_endpoints", companyId)).toBe(0)

          const created = yield* createEndpoint(browser, {
            environment: "test",
            url: hookUrl,
            eventTypes: ["order-created", "order-cancelled"]
          })
          expect(created.status).toBe(200)
          expect(created.headers.get("cache-control")).toContain("no-store")
          const secret = created.text.match(/value="(whsec_[^"]+)"/)?.[1]
          expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
          expect(created.text).toContain("shown only this once")
          expect(created.text).toContain('data-copy="secret"')
          const endpointId = endpointIdOf(created)
          expect(yield* count("company_webhook_endpoints", companyId)).toBe(1)

          const listed = yield* Effect.promise(() => browser.get("/dashboard/webhooks"))
          expect(proseOf(listed.text)).toContain(hookUrl)
          expect(proseOf(listed.text)).toContain("order-created, order-cancelled")
          expect(proseOf(listed.text)).toContain("Active")
          expect(listed.text).not.toContain(secret!.slice(6))
          expect(
            proseOf((yield* Effect.promise(() => browser.get("/dashboard/webhooks?environment=live"))).text)
          ).toContain("No live endpoints yet.")

          const endpointPath = `/dashboard/webhooks/${endpointId}`
          const endpoint = yield* Effect.promise(() => browser.get(endpointPath))
          expect(endpoint.status).toBe(200)
          expect(proseOf(endpoint.text)).toContain("No deliveries yet.")
          expect(endpoint.text).not.toContain(secret!.slice(6))

          // A test event: a pending delivery of webhook-test, listed with its details.
          const tested = yield* postForm(browser, endpointPath, `${endpointPath}/test`)
          expect(tested.status).toBe(303)
          expect(tested.location).toBe(endpointPath)
          const withDelivery = yield* Effect.promise(() => browser.get(endpointPath))
          expect(proseOf(withDelivery.text)).toContain("A test event is on its way")
          expect(proseOf(withDelivery.text)).toMatch(/webhook-test Pending 0 — —/)
          const deliveryId = withDelivery.text.match(/deliveries\/([0-9a-f]{24})"/)![1]!
          const deliveryPath = `${endpointPath}/deliveries/${deliveryId}`
          const delivery = yield* Effect.promise(() => browser.get(deliveryPath))
          expect(delivery.status).toBe(200)
          const shown = proseOf(delivery.text)
          expect(shown).toContain("Delivery of webhook-test")
          expect(shown).toContain(hookUrl)
          expect(shown).toContain("Not attempted yet.")
          // The body, indented.
          expect(delivery.text).toContain(`  &quot;webhookData&quot;: {\n    &quot;id&quot;: &quot;${deliveryId}&quot;`)
          expect(delivery.text).not.toContain(secret!.slice(6))

          const resent = yield* postForm(browser, deliveryPath, `${deliveryPath}/resend`)
          expect(resent.status).toBe(303)
          expect(resent.location).toBe(deliveryPath)
          expect(proseOf((yield* Effect.promise(() => browser.get(deliveryPath))).text)).toContain("Resent")

          // Disabled: no test button, a test or resend posted anyway is refused with the service's words.
          const disabled = yield* postForm(browser, endpointPath, `${endpointPath}/status`, { status: "disabled" })
          expect(disabled.status).toBe(303)
          const disabledPage = yield* Effect.promise(() => browser.get(endpointPath))
          expect(proseOf(disabledPage.text)).toContain("Endpoint disabled")
          expect(disabledPage.text).not.toContain(`action="${endpointPath}/test"`)
          expect(disabledPage.text).toContain('value="active"')
          const deliveriesBefore = yield* count("webhook_deliveries", companyId)
          const csrf = csrfOf(disabledPage.text, `${endpointPath}/status`)
          const refusedTest = yield* Effect.promise(() => browser.post(`${endpointPath}/test`, { csrf }))
          expect(refusedTest.status).toBe(303)
          expect(proseOf((yield* Effect.promise(() => browser.get(endpointPath))).text)).toMatch(
            /is disabled; enable it/
          )
          expect(yield* count("webhook_deliveries", companyId)).toBe(deliveriesBefore)
          const badStatus = yield* Effect.promise(() =>
            browser.post(`${endpointPath}/status`, { csrf, status: "paused" })
          )
          expect(badStatus.status).toBe(400)
          expect(proseOf(badStatus.text)).toContain("The status must be active or disabled")

          const enabled = yield* postForm(browser, endpointPath, `${endpointPath}/status`, { status: "active" })
          expect(enabled.status).toBe(303)
          expect(proseOf((yield* Effect.promise(() => browser.get(endpointPath))).text)).toContain("Endpoint enabled")

          // Delete goes through its confirm step.
          const confirm = yield* Effect.promise(() => browser.get(`${endpointPath}/delete`))
          expect(confirm.status).toBe(200)
          expect(proseOf(confirm.text)).toContain("Delete this endpoint?")
          expect(confirm.text).toContain(`href="${endpointPath}"`)
          const deleted = yield* Effect.promise(() =>
            browser.post(`${endpointPath}/delete`, { csrf: csrfOf(confirm.text, `${endpointPath}/delete`) })
          )
          expect(deleted.status).toBe(303)
          expect(deleted.location).toBe("/dashboard/webhooks?environment=test")
          expect(proseOf((yield* Effect.promise(() => browser.get(deleted.location!))).text)).toContain(
            "Endpoint deleted."
          )
          expect(yield* count("company_webhook_endpoints", companyId)).toBe(0)
          expect((yield* Effect.promise(() => browser.get(endpointPath))).status).toBe(404)
          expect((yield* Effect.promise(() => browser.get(deliveryPath))).status).toBe(404)

          // Each change is in the audit log as the member's doing, as the API's would be the key's.
          const audited = yield* Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{ action: string; actorType: string; actorId: string }>`SELECT action, actor_type, actor_id
              FROM audit_events WHERE company_id = ${companyId} AND action LIKE 'webhook%' ORDER BY occurred_at, id`
          ).pipe(Effect.orDie)
          expect(audited.map((row) => row.action)).toEqual([
            "webhook_endpoint.created",
            "webhook_endpoint.tested",
            "webhook_delivery.resent",
            "webhook_endpoint.disabled",
            "webhook_endpoint.enabled",
            "webhook_endpoint.deleted"
          ])
          expect(new Set(audited.map((row) => `${row.actorType} ${row.actorId}`))).toEqual(
            new Set([`member ${userId}`])
          )
        })
    )

    it.effect("deliveries are paged, newest first; an endpoint's limit is the form's error", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser, companyId, userId } = yield* ownerOf(baseUrl, "Busy Gifts")
        const endpointId = endpointIdOf(
          yield* createEndpoint(browser, { environment: "test", url: hookUrl, eventTypes: ["order-created"] })
        )
        // The owner's scope, as the pages take it: the deliveries are made through the service the pages call.
        const webhooks = yield* CompanyWebhooks
        const member = yield* Effect.flatMap(Members, (members) => members.get(companyId, userId))
        const scope = yield* Effect.flatMap(CompanyPolicy, (policy) => policy.scopeForMember(member, "test"))
        const made: Array<string> = []
        for (let i = 0; i < 21; i++) made.push((yield* webhooks.sendTest(scope, endpointId)).eventId)
        const first = yield* Effect.promise(() => browser.get(`/dashboard/webhooks/${endpointId}`))
        const idsOn = (page: Page) => [...page.text.matchAll(/deliveries\/([0-9a-f]{24})"/g)].map((m) => m[1])
        expect(idsOn(first)).toHaveLength(20)
        expect(first.text).toContain(`href="/dashboard/webhooks/${endpointId}?page=2"`)
        const second = yield* Effect.promise(() => browser.get(`/dashboard/webhooks/${endpointId}?page=2`))
        expect([...idsOn(first), ...idsOn(second)].sort()).toEqual([...made].sort())
        expect(idsOn(second)).toHaveLength(1)

        for (let i = 1; i < 10; i++) {
          const more = yield* createEndpoint(browser, {
            environment: "test",
            url: `${hookUrl}/${i}`,
            eventTypes: ["order-created"]
          })
          expect(more.status).toBe(200)
        }
        const eleventh = yield* createEndpoint(browser, {
          environment: "test",
          url: `${hookUrl}/11`,
          eventTypes: ["order-created"]
        })
        expect(eleventh.status).toBe(422)
        expect(proseOf(eleventh.text)).toContain("already has 10 webhook endpoints in the test environment")
        expect(yield* count("company_webhook_endpoints", companyId)).toBe(10)
        // The live environment has its own ten.
        const live = yield* createEndpoint(browser, {
          environment: "live",
          url: hookUrl,
          eventTypes: ["order-created"]
        })
        expect(live.status).toBe(200)
        const liveList = yield* Effect.promise(() => browser.get("/dashboard/webhooks?environment=live"))
        expect(liveList.text).toContain(endpointIdOf(live))
        expect((yield* Effect.promise(() => browser.get(`/dashboard/webhooks/${endpointIdOf(live)}`))).status).toBe(200)
      })
    )

    it.effect("members without developer:manage get the 403 page and change nothing; developers may", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: owner, companyId } = yield* ownerOf(baseUrl, "Roles Gifts")
        const endpointId = endpointIdOf(
          yield* createEndpoint(owner, { environment: "test", url: hookUrl, eventTypes: ["order-created"] })
        )
        const endpointPath = `/dashboard/webhooks/${endpointId}`
        for (const role of ["viewer", "sender"] as const) {
          const member = yield* memberOf(baseUrl, companyId, role)
          const home = yield* Effect.promise(() => member.get("/dashboard"))
          const csrf = csrfOf(home.text, "/dashboard/sign-out")
          for (const path of [
            "/dashboard/webhooks",
            "/dashboard/webhooks/new",
            endpointPath,
            `${endpointPath}/delete`
          ]) {
            const page = yield* Effect.promise(() => member.get(path))
            expect(page.status, `${role} ${path}`).toBe(403)
            expect(page.text).toContain("Not allowed")
          }
          for (const [action, fields] of [
            ["/dashboard/webhooks", { environment: "test", url: `${hookUrl}/${role}`, eventTypes: "order-created" }],
            [`${endpointPath}/test`, {}],
            [`${endpointPath}/status`, { status: "disabled" }],
            [`${endpointPath}/delete`, {}]
          ] as const) {
            const refused = yield* Effect.promise(() => member.post(action, { csrf, ...fields }))
            expect(refused.status, `${role} ${action}`).toBe(403)
          }
        }
        expect(yield* count("company_webhook_endpoints", companyId)).toBe(1)
        expect(yield* count("webhook_deliveries", companyId)).toBe(0)
        expect(proseOf((yield* Effect.promise(() => owner.get(endpointPath))).text)).toContain("Active")

        const developer = yield* memberOf(baseUrl, companyId, "developer")
        expect((yield* Effect.promise(() => developer.get(endpointPath))).status).toBe(200)
        const tested = yield* postForm(developer, endpointPath, `${endpointPath}/test`)
        expect(tested.status).toBe(303)
        expect(yield* count("webhook_deliveries", companyId)).toBe(1)
      })
    )

    it.effect("forms without their CSRF token are refused; another company's ids and non-ids are the 404 page", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser, companyId } = yield* ownerOf(baseUrl, "Guarded Hooks")
        const other = yield* ownerOf(baseUrl, "Other Hooks")
        const mine = endpointIdOf(
          yield* createEndpoint(browser, { environment: "test", url: hookUrl, eventTypes: ["order-created"] })
        )
        const theirs = endpointIdOf(
          yield* createEndpoint(other.browser, { environment: "test", url: hookUrl, eventTypes: ["order-created"] })
        )
        const minePath = `/dashboard/webhooks/${mine}`
        expect((yield* postForm(browser, minePath, `${minePath}/test`)).status).toBe(303)
        const deliveryId = (yield* Effect.promise(() => browser.get(minePath))).text.match(
          /deliveries\/([0-9a-f]{24})"/
        )![1]!
        const theirsPath = `/dashboard/webhooks/${theirs}`
        expect((yield* postForm(other.browser, theirsPath, `${theirsPath}/test`)).status).toBe(303)
        const theirDelivery = (yield* Effect.promise(() => other.browser.get(theirsPath))).text.match(
          /deliveries\/([0-9a-f]{24})"/
        )![1]!
        const endpointsBefore = yield* count("company_webhook_endpoints", companyId)
        const deliveriesBefore = yield* count("webhook_deliveries", companyId)
        const theirDeliveriesBefore = yield* count("webhook_deliveries", other.companyId)

        // Without the token, or with another session's: refused before anything runs.
        const othersToken = csrfOf(
          (yield* Effect.promise(() => other.browser.get(theirsPath))).text,
          `${theirsPath}/test`
        )
        for (const csrf of [undefined, "forged", othersToken]) {
          const fields: Record<string, string> = csrf === undefined ? {} : { csrf }
          for (const [action, extra] of [
            ["/dashboard/webhooks", { environment: "test", url: `${hookUrl}/csrf`, eventTypes: "order-created" }],
            [`${minePath}/test`, {}],
            [`${minePath}/status`, { status: "disabled" }],
            [`${minePath}/delete`, {}],
            [`${minePath}/deliveries/${deliveryId}/resend`, {}]
          ] as const) {
            const refused = yield* Effect.promise(() => browser.post(action, { ...fields, ...extra }))
            expect(refused.status, `${action} ${csrf}`).toBe(403)
            expect(refused.text).toContain("This form has expired")
          }
        }

        // Another company's endpoint and delivery, an unknown id, a malformed one: the 404 page, nothing changed.
        const csrf = csrfOf((yield* Effect.promise(() => browser.get(minePath))).text, `${minePath}/test`)
        const unknown = "0123456789abcdef01234567"
        for (const path of [
          theirsPath,
          `${theirsPath}/delete`,
          `${theirsPath}/deliveries/${theirDelivery}`,
          `${minePath}/deliveries/${theirDelivery}`,
          `${minePath}/deliveries/${unknown}`,
          `${minePath}/deliveries/nope`,
          `/dashboard/webhooks/${unknown}`,
          "/dashboard/webhooks/nope",
          "/dashboard/webhooks/nope/delete"
        ]) {
          const page = yield* Effect.promise(() => browser.get(path))
          expect(page.status, path).toBe(404)
          expect(page.text).toContain("There is no such page")
          expect(page.text).not.toContain("Other Hooks")
        }
        for (const [action, fields] of [
          [`${theirsPath}/test`, {}],
          [`${theirsPath}/status`, { status: "disabled" }],
          [`${theirsPath}/delete`, {}],
          [`${theirsPath}/deliveries/${theirDelivery}/resend`, {}],
          [`${minePath}/deliveries/${theirDelivery}/resend`, {}],
          [`${minePath}/deliveries/nope/resend`, {}],
          ["/dashboard/webhooks/nope/test", {}]
        ] as const) {
          const refused = yield* Effect.promise(() => browser.post(action, { csrf, ...fields }))
          expect(refused.status, action).toBe(404)
        }
        expect(yield* count("company_webhook_endpoints", companyId)).toBe(endpointsBefore)
        expect(yield* count("webhook_deliveries", companyId)).toBe(deliveriesBefore)
        expect(yield* count("webhook_deliveries", other.companyId)).toBe(theirDeliveriesBefore)
        expect(proseOf((yield* Effect.promise(() => other.browser.get(theirsPath))).text)).toContain("Active")
      })
    )
  })
})
