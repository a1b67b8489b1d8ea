import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema, TestClock } from "effect"
import { Id, makeId } from "../../../src/domain/platform/Ids.js"

describe("makeId", () => {
  it.effect("makes ids of the pattern, led by the Clock's second, none twice across many pools of random bytes", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2026, 10, 26, 12, 0, 0, 999))
      const ids = yield* Effect.replicateEffect(makeId, 5_000)
      const second = (Date.UTC(2026, 10, 26, 12, 0, 0) / 1000).toString(16).padStart(8, "0")
      for (const id of ids) {
        expect(Schema.is(Id)(id)).toBe(true)
        expect(id.slice(0, 8)).toBe(second)
      }
      expect(new Set(ids).size).toBe(ids.length)
      // Random parts use every hex digit in every place (each of the 16 places sees ≥ 10 of 16 digits).
      for (let place = 8; place < 24; place++) expect(new Set(ids.map((id) => id[place])).size).toBeGreaterThan(10)
    })
  )
})
