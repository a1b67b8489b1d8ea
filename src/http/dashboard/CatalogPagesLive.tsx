import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { CatalogProduct } from "../../domain/catalog/CatalogV3.js"
import type { LandedVariant } from "../../domain/catalog/Landed.js"
import type { V3Query } from "../../domain/platform/V3Query.js"
import { DEFAULT_COUNTRY } from "../../services/catalog/Catalog.js"
import { CatalogV3 } from "../../services/catalog/CatalogV3.js"
import { LandedCatalog } from "../../services/catalog/LandedCatalog.js"
import { Api } from "../Api.js"
import { EmptyState, FilterForm, FormError, type PageLinks, Table } from "./components.js"
import { money } from "./format.js"
import { dashboardPage } from "./layout.js"
import { pageNumber } from "./params.js"
import { holds, makeDashboardAuth } from "./session.js"

/** Products per page. */
const productsPerPage = 20
/** The longest search taken (as `filter[search]` of the v3 list). */
const searchMaxLength = 200

const catalogNames = { marketplace: "Marketplace", swag: "Swag" } as const
type CatalogChoice = keyof typeof catalogNames | ""

interface Country {
  readonly code: string
  readonly name: string
  readonly currency: string
  readonly digits: number
}

interface CatalogRow {
  readonly product: CatalogProduct
  /** Its variant that costs least sent to the country; none: it cannot be sent there. */
  readonly cheapest: LandedVariant | undefined
}

interface CatalogState {
  readonly filters: { readonly catalog: CatalogChoice; readonly search: string; readonly country: string }
  readonly countries: ReadonlyArray<Country>
  readonly country: Country
  readonly problems: ReadonlyArray<string>
  readonly withPrices: boolean
  readonly rows: ReadonlyArray<CatalogRow>
  readonly links: PageLinks
}

/** What a gift of the product costs sent to the country: the landed total and its parts, or why there is none. */
const LandedCell = ({ row, country }: { readonly row: CatalogRow; readonly country: Country }) => {
  const { cheapest } = row
  if (cheapest === undefined || cheapest.price === null) return <>Not shippable there</>
  const { price } = cheapest
  const shown = (amount: { readonly amount: number; readonly currency: string }) =>
    money(amount.amount, amount.currency, country.digits)
  const parts: ReadonlyArray<readonly [string, string]> = [
    ["Item", shown(price.item)],
    ["Shipping", shown(price.shipping)],
    ["Duties and taxes", shown(price.duties)],
    ["Service fee", shown(price.serviceFee)]
  ]
  return (
    <>
      <strong>
        {row.product.variantsCount > 1 ? "From " : ""}
        {shown(price.total)}
      </strong>
      <span class="hint">
        {parts.map(([name, amount]) => (
          <span key={name}>
            <br />
            {`${name} ${amount}`}
          </span>
        ))}
        {row.product.variantsCount > 1 ? (
          <>
            <br />
            {`(${cheapest.title})`}
          </>
        ) : null}
      </span>
    </>
  )
}

const CatalogBody = ({ state }: { readonly state: CatalogState }) => {
  const { filters, country } = state
  const filtered = filters.search !== "" || filters.catalog !== ""
  return (
    <>
      <h1>Catalog</h1>
      <p>
        The products of the marketplace and swag catalogs, newest first, with what a gift of each costs sent to the
        country you choose: the item, shipping, duties and taxes and the service fee, in that country's currency (the
        least of its variants that can be sent there).
      </p>
      {state.problems.length === 0 ? null : (
        <FormError>
          <p>These filters cannot be used:</p>
          <ul>
            {state.problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        </FormError>
      )}
      <FilterForm
        path="/dashboard/catalog"
        fields={[
          { name: "search", label: "Search", value: filters.search },
          {
            name: "catalog",
            label: "Catalog",
            value: filters.catalog,
            options: [
              ["", "Both catalogs"],
              ["marketplace", catalogNames.marketplace],
              ["swag", catalogNames.swag]
            ]
          },
          {
            name: "country",
            label: "Send to",
            value: filters.country,
            options: state.countries.map((c) => [c.code, `${c.name} (${c.currency})`] as const)
          }
        ]}
      />
      <Table
        caption={`Products, priced for a gift sent to ${country.name}`}
        columns={[
          {
            header: "Product",
            cell: (row: CatalogRow) => (
              <>
                {row.product.title}
                <span class="hint">
                  <br />
                  {[
                    ...(row.product.brand === null ? [] : [row.product.brand.name]),
                    row.product.type,
                    `${row.product.variantsCount} ${row.product.variantsCount === 1 ? "variant" : "variants"}`
                  ].join(" · ")}
                </span>
              </>
            )
          },
          { header: "Catalog", cell: (row: CatalogRow) => catalogNames[row.product.catalog] },
          ...(state.withPrices
            ? [
                {
                  header: `Sent to ${country.code}`,
                  cell: (row: CatalogRow) => <LandedCell row={row} country={country} />
                }
              ]
            : [])
        ]}
        rows={state.rows}
        rowKey={(row) => row.product.id}
        links={state.links}
        empty={<EmptyState title={filtered ? "No product matches these filters." : "The catalog is empty."} />}
      />
    </>
  )
}

/**
 * The dashboard's catalog (docs/dashboard.md "Catalog"), for roles holding `products:read`: the products as
 * `GET /public-api/v3/products` lists them (`CatalogV3.products`, searched and paged in SQL), each priced as the v2
 * reads price a gift (`LandedCatalog.cheapestIn`: item, shipping, duties and the service fee for the country).
 * Prices show only with `products:read:prices`, as the API's do.
 */
export const CatalogPagesLive = HttpApiBuilder.group(Api, "dashboardCatalog", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const catalogV3 = yield* CatalogV3
    const landed = yield* LandedCatalog

    return handlers.handle("products", ({ request, urlParams }) =>
      auth.page(request, { require: "products:read" }, (current) =>
        Effect.gen(function* () {
          const countries = yield* landed.countries()
          const problems: Array<string> = []
          const search = urlParams.search.trim()
          if (search.length > searchMaxLength) problems.push(`Search: at most ${searchMaxLength} characters.`)
          const catalog: CatalogChoice =
            urlParams.catalog === "marketplace" || urlParams.catalog === "swag" ? urlParams.catalog : ""
          const wanted = urlParams.country.trim().toUpperCase() || DEFAULT_COUNTRY
          const known = countries.find((c) => c.code === wanted)
          if (known === undefined) problems.push(`Send to: ${wanted} is not a country gifts are sent to.`)
          const country = known ?? countries.find((c) => c.code === DEFAULT_COUNTRY) ?? countries[0]!
          const filters = { catalog, search, country: country.code }
          const page = pageNumber(urlParams.page)
          const links = { path: "/dashboard/catalog", params: { ...filters }, page, hasNext: false }
          const state = {
            filters,
            countries,
            country,
            problems,
            withPrices: holds(current.grant, "products:read:prices"),
            rows: [],
            links
          } satisfies CatalogState
          if (problems.length > 0) {
            return dashboardPage("Catalog", current, <CatalogBody state={state} />, {
              section: "/dashboard/catalog",
              status: 400
            })
          }
          const query: V3Query = {
            filters: {
              ...(catalog === "" ? {} : { catalog }),
              ...(search === "" ? {} : { search })
            },
            include: [],
            fields: [],
            sort: [],
            page: { number: page, size: productsPerPage, cursor: undefined }
          }
          const found = yield* catalogV3.products(query).pipe(Effect.orDie)
          const { byProduct } = yield* landed
            .cheapestIn(
              found.rows.map((product) => product.id),
              country.code
            )
            .pipe(Effect.orDie)
          const rows = found.rows.map((product) => ({ product, cheapest: byProduct.get(product.id) }))
          return dashboardPage(
            "Catalog",
            current,
            <CatalogBody state={{ ...state, rows, links: { ...links, hasNext: found.hasNext } }} />,
            { section: "/dashboard/catalog" }
          )
        })
      )
    )
  })
)
