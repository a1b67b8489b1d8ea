import { describe, expect, it } from "@effect/vitest"
import { CheckoutStatus } from "../../../src/domain/checkout/Checkout.js"
import {
  type CheckoutEvent,
  canApply,
  checkoutMachine,
  leadsTo,
  paymentClosed,
  settledStatus
} from "../../../src/domain/checkout/CheckoutMachine.js"

const events = Object.keys(checkoutMachine) as ReadonlyArray<CheckoutEvent>
const final = ["failed", "refunded", "expired", "cancelled"] as const

describe("checkout state machine", () => {
  it("takes a payment only while awaiting one, and nothing leaves a final status", () => {
    for (const status of CheckoutStatus.literals) {
      expect(canApply("pay", status)).toBe(status === "pending_payment")
    }
    for (const status of final) {
      expect(events.filter((event) => canApply(event, status))).toEqual([])
    }
  })

  it("reaches every status from pending_payment", () => {
    const reached = new Set<string>(["pending_payment"])
    for (let grew = true; grew; ) {
      grew = false
      for (const event of events) {
        const { from, to } = checkoutMachine[event]
        if (!from.some((status) => reached.has(status))) continue
        for (const status of to) {
          if (reached.has(status)) continue
          reached.add(status)
          grew = true
        }
      }
    }
    expect([...reached].sort()).toEqual([...CheckoutStatus.literals].sort())
  })

  it("settles placement by what the supplier took", () => {
    expect(settledStatus([{ status: "placed" }, { status: "pending" }])).toBeUndefined()
    expect(settledStatus([{ status: "placed" }, { status: "placed" }])).toBe("confirmed")
    expect(settledStatus([{ status: "placed" }, { status: "failed" }])).toBe("partially_confirmed")
    expect(settledStatus([{ status: "failed" }, { status: "failed" }])).toBe("failed")
    for (const status of ["confirmed", "partially_confirmed", "failed"] as const) {
      expect(leadsTo("settle", status)).toBe(true)
    }
    expect(leadsTo("settle", "refunded")).toBe(false)
  })

  it("judges the payment window at the given instant", () => {
    const expiresAt = new Date(1_000)
    expect(paymentClosed({ status: "pending_payment", expiresAt }, 999)).toBeUndefined()
    expect(paymentClosed({ status: "pending_payment", expiresAt }, 1_000)).toBe("expired")
    expect(paymentClosed({ status: "expired", expiresAt }, 0)).toBe("expired")
    expect(paymentClosed({ status: "cancelled", expiresAt }, 0)).toBe("cancelled")
    expect(paymentClosed({ status: "placing", expiresAt }, 0)).toBe("already_paid")
  })
})
