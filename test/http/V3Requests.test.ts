import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { numberedLinks, parseV3Query, type V3QuerySpec } from "../../src/http/V3Requests.js"

const products: V3QuerySpec = {
  filters: ["name", "country"],
  include: ["variants"],
  fields: ["id", "name", "price"],
  sort: ["name", "createdAt"],
  paging: "cursor",
  maxPageSize: 50,
  defaultPageSize: 20
}

const issues = (result: ReturnType<typeof parseV3Query>) =>
  Either.isLeft(result) ? result.left.errors.map((e) => e.path) : []

describe("v3 query parser", () => {
  it("parses filters, include, fields, sort and paging", () => {
    const parsed = parseV3Query(
      {
        "filter[name]": "mug",
        "filter[country]": "US",
        include: "variants",
        fields: "id,name",
        sort: "-createdAt",
        "page[size]": "5",
        "page[cursor]": "abc_-1"
      },
      products
    )
    expect(Either.getOrThrow(parsed)).toEqual({
      filters: { name: "mug", country: "US" },
      include: ["variants"],
      fields: ["id", "name"],
      sort: [{ field: "createdAt", descending: true }],
      page: { number: 1, size: 5, cursor: "abc_-1" }
    })
    // A page-numbered list sorts on several fields; a cursor holds one sort value, so its list sorts on one.
    const numbered = parseV3Query({ sort: "-createdAt,name" }, { ...products, paging: "number" })
    expect(Either.getOrThrow(numbered).sort).toEqual([
      { field: "createdAt", descending: true },
      { field: "name", descending: false }
    ])
    expect(issues(parseV3Query({ sort: "-createdAt,name" }, products))).toEqual(["sort"])
  })

  it("lists every unknown or bad key in one 400", () => {
    const result = parseV3Query(
      {
        "filter[accountId]": "x",
        include: "owner",
        sort: "price",
        "page[size]": "500",
        "page[number]": "2",
        colour: "red",
        "filter[name]": ["a", "b"]
      },
      products
    )
    expect(issues(result)).toEqual([
      "filter[accountId]",
      "include",
      "sort",
      "page[size]",
      "page[number]",
      "colour",
      "filter[name]"
    ])
    expect(Either.isLeft(result) && result.left.message).toContain("filter[accountId]")
  })

  it("builds page links that keep the other parameters, for clients to follow verbatim", () => {
    const params = { "filter[name]": "gift box", "page[size]": "2" }
    const query = Either.getOrThrow(parseV3Query(params, { ...products, paging: "number" }))
    const links = numberedLinks("/public-api/v3/product-tags", params, query, true)
    expect(links.prev).toBeNull()
    const next = new URL(links.next!, "http://x")
    expect(next.pathname).toBe("/public-api/v3/product-tags")
    expect(Object.fromEntries(next.searchParams)).toEqual({
      "filter[name]": "gift box",
      "page[number]": "2",
      "page[size]": "2"
    })
  })
})
