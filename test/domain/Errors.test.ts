import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { catalogue } from "../../src/domain/ErrorCatalogue.js"

const v3Domains = [
  "PBLC",
  "PROD",
  "ORDS",
  "ACCT",
  "KEYS",
  "EXPT",
  "COLL",
  "CAMP",
  "GIFT",
  "RCPT",
  "BILL",
  "WHKS",
  "MEMB"
]

describe("error catalogue", () => {
  it("gives every error a unique, well-formed code on each line", () => {
    const v1 = catalogue.map((e) => e.code.v1)
    const v3 = catalogue.map((e) => e.code.v3)
    expect(new Set(v1).size).toBe(v1.length)
    expect(new Set(v3).size).toBe(v3.length)
    for (const error of catalogue) {
      const { status, v1, v2, v3, oauth } = error.code
      expect(v1).toMatch(/^[a-z][a-z0-9_]*$/)
      expect(v2).toMatch(/^[A-Z][A-Z0-9_]*$/)
      expect(oauth).toMatch(/^[a-z_]+$/)
      const [v3Status, domain, seq] = v3.split("_")
      expect(Number(v3Status)).toBe(status)
      expect(v3Domains).toContain(domain)
      expect(seq).toMatch(/^\d{3}$/)
    }
  })

  it("is published in docs/errors.md exactly as defined", () => {
    const doc = Fs.readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8")
    for (const error of catalogue) {
      const { status, v1, oauth, v2, v3 } = error.code
      expect(doc).toContain(`| ${error._tag} | ${status} | \`${v1}\` | \`${oauth}\` | \`${v2}\` | \`${v3}\` |`)
    }
  })
})
