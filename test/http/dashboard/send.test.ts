import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { csrfOf, type DashboardBrowser, type Page, tableOf, textOf } from "../../support/dashboard.js"
import { memberOf, ownerOf } from "../../support/dashboardMembers.js"
import { SeededTestDatabase } from "../../support/database.js"
import { eventually } from "../../support/eventually.js"

/**
 * The dashboard's "Send gifts" over HTTP: creating a campaign (bad values are named and leave nothing), one
 * recipient from the form, a CSV with every kind of bad row previewed with each line and reason, confirmed and sent
 * in the background, the same file again sending nothing new, more than 5,000 rows refused whole, a viewer refused,
 * another company's upload not found.
 */

const promise = <A>(run: () => Promise<A>) => Effect.promise(run)

const countOf = (query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ n: number }>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(query(sql), (rows) => Number(rows[0]!.n))).pipe(Effect.orDie)

const giftsOf = (campaignId: string) =>
  countOf((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM gifts WHERE campaign_id = ${campaignId}`)

/** Posts a CSV file as the upload form does (multipart), with the page's CSRF token. */
const upload = (browser: DashboardBrowser, page: Page, campaignId: string, csv: string, name = "people.csv") => {
  const body = new FormData()
  body.set("csrf", csrfOf(page.text, "/dashboard/send/uploads"))
  body.set("campaignId", campaignId)
  body.set("environment", "test")
  body.set("sendingMethod", "email")
  body.set("file", new Blob([csv], { type: "text/csv" }), name)
  return promise(() => browser.request("/dashboard/send/uploads", { method: "POST", body }))
}

const header = "firstName,lastName,email,phone,externalId,country"

describe("dashboard send gifts", () => {
  it.layer(realPortServerOn(SeededTestDatabase), { timeout: 240_000 })((it) => {
    it.effect("creates a campaign, sends to one recipient and to a checked CSV, once per key", () =>
      Effect.gen(function* () {
        const baseUrl = yield* BaseUrl
        const { browser: owner, companyId } = yield* ownerOf(baseUrl, "Senders")
        const campaigns = countOf(
          (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM campaigns WHERE company_id = ${companyId}`
        )

        const empty = yield* promise(() => owner.get("/dashboard/send"))
        expect(empty.status).toBe(200)
        expect(empty.text).toContain('aria-current="page">Send gifts</a>')
        expect(textOf(empty.text)).toContain("No active campaign on the accounts you reach.")

        // A campaign with bad values: each named beside its field, nothing made.
        const form = yield* promise(() => owner.get("/dashboard/send/campaigns/new?environment=test"))
        expect(form.status, textOf(form.text)).toBe(200)
        const collectionId = /<option value="([0-9a-f]{24})"/.exec(form.text)![1]!
        const fields = {
          csrf: csrfOf(form.text, "/dashboard/send/campaigns"),
          environment: "test",
          name: "",
          budgetMin: "1",
          budgetMax: "lots",
          giftType: "collection",
          collectionId,
          expiryDays: "400",
          message: "Thank you!",
          reminders: "on"
        }
        const refused = yield* promise(() => owner.post("/dashboard/send/campaigns", fields))
        expect(refused.status).toBe(400)
        const refusedText = textOf(refused.text)
        expect(refusedText).toContain("Name: expected a string at least 1 character(s) long")
        expect(refusedText).toContain("Largest gift: expected number")
        expect(refusedText).toContain("Days a gift stays open: expected a number between 1 and 365")
        const product = yield* promise(() =>
          owner.post("/dashboard/send/campaigns", {
            ...fields,
            name: "Thanks",
            budgetMax: "100",
            expiryDays: "30",
            giftType: "product",
            productId: "0123456789abcdef01234567"
          })
        )
        expect(product.status).toBe(400)
        expect(textOf(product.text)).toContain("Product id: no product of the catalog has this id.")
        expect(yield* campaigns).toBe(0)

        const created = yield* promise(() =>
          owner.post("/dashboard/send/campaigns", { ...fields, name: "Thanks", budgetMax: "100", expiryDays: "30" })
        )
        expect(created.status).toBe(303)
        const campaignId = new URL(created.location!, baseUrl).searchParams.get("campaignId")!
        expect(yield* campaigns).toBe(1)

        const send = yield* promise(() => owner.get(created.location!))
        expect(textOf(send.text)).toContain("Campaign Thanks created")
        const destinations = /ships to: ([A-Z, ]+)\./.exec(send.text)![1]!.split(", ")
        const country = destinations.includes("GB") ? "GB" : destinations[0]!
        const outside = ["AQ", "KP", "ZZ"].find((code) => !destinations.includes(code))!

        // One recipient: a bad e-mail is named, then the gift is sent.
        const one = {
          csrf: csrfOf(send.text, "/dashboard/send/recipient"),
          environment: "test",
          campaignId,
          sendingMethod: "email",
          firstName: "Ada",
          lastName: "Lovelace",
          email: "ada@",
          phone: "",
          externalId: "",
          country: country.toLowerCase()
        }
        const badOne = yield* promise(() => owner.post("/dashboard/send/recipient", one))
        expect(badOne.status).toBe(400)
        expect(textOf(badOne.text)).toContain("E-mail: expected an e-mail address")
        expect(yield* giftsOf(campaignId)).toBe(0)
        const sentOne = yield* promise(() =>
          owner.post("/dashboard/send/recipient", { ...one, email: "Ada@example.com" })
        )
        expect(sentOne.status).toBe(303)
        expect(textOf((yield* promise(() => owner.get(sentOne.location!))).text)).toContain(
          "Gift sent to Ada Lovelace: http"
        )
        expect(yield* giftsOf(campaignId)).toBe(1)

        // A file with a BOM, a quoted comma, and every kind of bad row.
        const csv = [
          `\uFEFF${header}`,
          `Grace,Hopper,grace@example.com,,,${country}`,
          `"Lovelace, Ada",King,ada.king@example.com,,,${country}`,
          `Alan,Turing,alan@example,,,${country}`,
          `,Noether,emmy@example.com,,,${country}`,
          `Grace,Again,GRACE@example.com,,,${country}`,
          `Kurt,Godel,kurt@example.com,,,${outside}`,
          `${"L".repeat(101)},Long,long@example.com,,,${country}`,
          `Too,Many,many@example.com,,,${country},extra`,
          `Ada,Lovelace,ada@example.com,,,${country}`,
          ""
        ].join("\r\n")
        const page = yield* promise(() => owner.get(`/dashboard/send?environment=test&campaignId=${campaignId}`))
        const uploaded = yield* upload(owner, page, campaignId, csv)
        expect(uploaded.status, uploaded.text.slice(0, 400)).toBe(303)
        const preview = yield* promise(() => owner.get(uploaded.location!))
        expect(preview.status).toBe(200)
        expect(tableOf(preview, "Invalid rows")).toEqual([
          ["4", "email: Expected an e-mail address"],
          ["5", "firstName: is required"],
          ["6", "key: duplicate key, the same as line 2"],
          ["7", `country: ${outside} is not a country this campaign ships to`],
          ["8", "firstName: Expected a string at most 100 character(s) long"],
          ["9", "row: has 7 fields where the header has 6"]
        ])
        expect(tableOf(preview, "The first rows to send").map((row) => [row[0], row[1], row[4]])).toEqual([
          ["2", "Grace Hopper", "grace@example.com"],
          ["3", "Lovelace, Ada King", "ada.king@example.com"],
          ["10", "Ada Lovelace", "ada@example.com"]
        ])
        expect(yield* giftsOf(campaignId)).toBe(1)

        const confirmed = yield* promise(() =>
          owner.post(`${uploaded.location!}/confirm`, { csrf: csrfOf(preview.text, `${uploaded.location!}/confirm`) })
        )
        expect(confirmed.status).toBe(303)
        const done = yield* eventually(
          promise(() => owner.get(uploaded.location!)),
          (p) => textOf(p.text).includes("Status Sent"),
          "the upload to be sent"
        )
        // Ada was sent a gift from the form: her row finds it.
        expect(textOf(done.text)).toContain("2 new gifts, 1 already sent before, 0 failed, 0 to go.")
        expect(yield* giftsOf(campaignId)).toBe(3)
        const result = yield* promise(() => owner.get(`${uploaded.location!}/result.csv`))
        expect(result.headers.get("content-type")).toContain("text/csv")
        const lines = result.text.trimEnd().split("\r\n")
        expect(lines[0]).toBe("line,key,gift_id,gift_link,outcome,message")
        expect(lines).toHaveLength(10)
        expect(lines[1]).toMatch(new RegExp(`^2,grace@example.com,[0-9a-f]{24},${baseUrl}/g/[\\w-]+,created,$`))
        expect(lines[4]).toBe("5,,,,invalid,firstName: is required")

        // The same file again: checked again, and sending it makes no gift.
        const again = yield* upload(owner, page, campaignId, csv)
        const againPreview = yield* promise(() => owner.get(again.location!))
        yield* promise(() =>
          owner.post(`${again.location!}/confirm`, { csrf: csrfOf(againPreview.text, `${again.location!}/confirm`) })
        )
        const againDone = yield* eventually(
          promise(() => owner.get(again.location!)),
          (p) => textOf(p.text).includes("Status Sent"),
          "the second upload to be sent"
        )
        expect(textOf(againDone.text)).toContain("0 new gifts, 3 already sent before, 0 failed, 0 to go.")
        expect(yield* giftsOf(campaignId)).toBe(3)

        // More than 5,000 rows: refused whole, nothing kept.
        const uploadsBefore = yield* countOf(
          (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM gift_uploads WHERE company_id = ${companyId}`
        )
        const big = [header, ...Array.from({ length: 5001 }, (_, n) => `P${n},Q,p${n}@example.com,,,${country}`)]
        const tooMany = yield* upload(owner, page, campaignId, big.join("\n"))
        expect(tooMany.status).toBe(400)
        expect(textOf(tooMany.text)).toContain("The file has more than 5,000 rows: split it and upload each part.")
        expect(
          yield* countOf(
            (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM gift_uploads WHERE company_id = ${companyId}`
          )
        ).toBe(uploadsBefore)

        // A viewer may not send; another company's upload is not found.
        const viewer = yield* memberOf(baseUrl, companyId, "viewer")
        const forbidden = yield* promise(() => viewer.get("/dashboard/send"))
        expect(forbidden.status).toBe(403)
        expect(forbidden.text).not.toContain('href="/dashboard/send"')
        const { browser: stranger } = yield* ownerOf(baseUrl, "Strangers")
        expect((yield* promise(() => stranger.get(uploaded.location!))).status).toBe(404)
        expect((yield* promise(() => stranger.get(`${uploaded.location!}/result.csv`))).status).toBe(404)
      })
    )
  })
})
