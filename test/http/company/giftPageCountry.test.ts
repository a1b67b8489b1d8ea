import { describe, expect, it } from "@effect/vitest"
import { regionsOf } from "../../../src/http/company/GiftPageLive.js"

/** The browser's regions the gift page starts its country from (src/http/company/GiftPageLive.ts). */
describe("regionsOf (Accept-Language)", () => {
  it("lists the regions by preference, skipping tags without one and q=0", () => {
    expect(regionsOf("en-GB,en;q=0.9")).toEqual(["GB"])
    expect(regionsOf("fr;q=0.9, de-DE;q=0.5, en-us;q=0.7, pt-BR;q=0")).toEqual(["US", "DE"])
    expect(regionsOf("zh-Hant-TW,es-419;q=0.8")).toEqual(["TW"])
    expect(regionsOf("*")).toEqual([])
    expect(regionsOf(undefined)).toEqual([])
  })
})
