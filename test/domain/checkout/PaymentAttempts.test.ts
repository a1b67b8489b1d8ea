import { describe, expect, it } from "@effect/vitest"
import { Duration, Option } from "effect"
import { FREE_DECLINES, paymentsResumeAt, waitAfterDeclines } from "../../../src/domain/checkout/PaymentAttempts.js"

const minutes = (count: number) => Duration.toMinutes(waitAfterDeclines(count))

describe("the limit on declined payments", () => {
  it("costs nothing before the 5th decline, then waits 1 minute, doubling, at most 30", () => {
    expect(FREE_DECLINES).toBe(5)
    expect([0, 1, 4].map(minutes)).toEqual([0, 0, 0])
    expect([5, 6, 7, 8, 9, 10, 11, 100].map(minutes)).toEqual([1, 2, 4, 8, 16, 30, 30, 30])
  })

  it("resumes the wait after the latest decline", () => {
    const latestAt = new Date("2026-05-15T12:00:00.000Z")
    expect(paymentsResumeAt({ count: 4, latestAt: Option.some(latestAt) })).toEqual(Option.none())
    expect(paymentsResumeAt({ count: 5, latestAt: Option.some(latestAt) })).toEqual(
      Option.some(new Date("2026-05-15T12:01:00.000Z"))
    )
    expect(paymentsResumeAt({ count: 7, latestAt: Option.some(latestAt) })).toEqual(
      Option.some(new Date("2026-05-15T12:04:00.000Z"))
    )
  })
})
