import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BaseUrl, realPortServerOn } from "../../support/auth.js"
import { ownerOf } from "../../support/dashboardMembers.js"
import { TestDatabase } from "../../support/database.js"
import { enrolOver, liveSessions, passwordStep, secondStep } from "../../support/twoFactor.js"

/**
 * The sign-in's second step under the backoff of failed authentications (kind `two-factor`, per source and
 * per person), with small limits: two free failures, then a wait.
 */

const Throttled = realPortServerOn(TestDatabase, undefined, {
  failureLimits: {
    perSource: { free: 2, window: "10 minutes", firstWait: "10 seconds", maxWait: "40 seconds" },
    perAccount: { free: 2, window: "10 minutes", firstWait: "10 seconds", maxWait: "40 seconds" }
  }
})

describe("dashboard second factor throttling", () => {
  it.layer(Throttled, { timeout: 180_000 })((it) => {
    it.effect("wrong codes past the free ones make the next attempt wait (429), even with a right code", () =>
      Effect.gen(function* () {
        const { browser, email, userId } = yield* ownerOf(yield* BaseUrl, "Throttled")
        const { app } = yield* enrolOver(browser)
        yield* Effect.promise(() => browser.submit("/dashboard", {}, "/dashboard/sign-out"))
        const stepPage = yield* passwordStep(browser, email)
        for (let i = 0; i < 3; i++) expect((yield* secondStep(browser, stepPage, app.wrongCode())).status).toBe(401)
        const waiting = yield* secondStep(browser, stepPage, app.code())
        expect(waiting.status).toBe(429)
        expect(Number(waiting.headers.get("retry-after"))).toBeGreaterThan(0)
        expect(waiting.text).toContain("Too many attempts")
        expect(yield* liveSessions(userId)).toBe(0)
      })
    )
  })
})
