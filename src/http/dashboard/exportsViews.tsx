import type { ComponentChildren } from "preact"
import type { CatalogCollection } from "../../domain/catalog/CatalogV3.js"
import { type CatalogExport, exportLifetimeHours } from "../../domain/catalog/Exports.js"
import type { Environment } from "../../domain/company/Company.js"
import { productsV3Query } from "../catalog/CatalogV3Api.js"
import { exportV3 } from "../catalog/v3.js"
import {
  Badge,
  CsrfField,
  EmptyState,
  Field,
  FilterForm,
  FormError,
  followLiveRegion,
  type PageLinks,
  Table,
  When
} from "./components.js"
import { dashboardPage } from "./layout.js"
import type { CurrentMember } from "./session.js"

/** The pages of the dashboard's exports (docs/dashboard.md "Exports"); ExportsPagesLive.tsx calls the service. */

const section = "/dashboard/exports" as const

export const environmentNames: Readonly<Record<Environment, string>> = { test: "Test (sandbox)", live: "Live" }

export const exportHref = (exported: { readonly id: string }) => `/dashboard/exports/${encodeURIComponent(exported.id)}`

const kindNames = { products: "Products", collections: "Collections" } as const

/** Whether an export is still being written (its page follows it). */
export const running = (exported: CatalogExport) => exported.status === "pending" || exported.status === "processing"

/** Whether a completed export's files have passed their expiry. */
export const expired = (exported: CatalogExport, now: Date) =>
  exported.expiresAt !== null && now.getTime() >= exported.expiresAt.getTime()

/** The percentage of the lines written, as the API reports it. */
const progressOf = (exported: CatalogExport) => exportV3(exported, {}).progress

const StatusBadge = ({ exported, now }: { readonly exported: CatalogExport; readonly now: Date }) => (
  <Badge tone={exported.status === "failed" ? "warning" : "neutral"}>
    {exported.status === "completed" && expired(exported, now) ? "expired" : exported.status}
  </Badge>
)

/** What a start form was sent with, and what is wrong with it, to show it again. */
export interface StartState {
  readonly kind: "products" | "collections"
  readonly values: Readonly<Record<string, string>>
  readonly include: ReadonlyArray<string>
  readonly fields: ReadonlyArray<string>
  readonly collectionIds: ReadonlyArray<string>
  /** Each field's problem, by field name. */
  readonly errors: Readonly<Record<string, string>>
  /** A problem of the whole form (another export still running). */
  readonly error?: ComponentChildren
}

const includeDescriptions: Readonly<Record<string, string>> = {
  brand: "Each product's brand",
  tags: "Each product's tags"
}

const fieldDescriptions: Readonly<Record<string, string>> = {
  priceRange: "The lowest and highest price of its variants",
  variantsCount: "How many variants it has",
  options: "Its options (size, colour…) and their values"
}

/** A group of checkboxes (`name` repeated), with its problem tied to it. */
const Choices = (props: {
  readonly form: string
  readonly name: string
  readonly legend: string
  readonly choices: ReadonlyArray<readonly [string, ComponentChildren, string?]>
  readonly checked: ReadonlyArray<string>
  readonly error: string | undefined
}) => {
  const errorId = `${props.form}-${props.name}-error`
  return (
    <fieldset
      class={props.error === undefined ? "choices" : "choices invalid"}
      aria-describedby={props.error === undefined ? undefined : errorId}
    >
      <legend>{props.legend}</legend>
      {props.choices.map(([value, label, hint]) => {
        const id = `${props.form}-${props.name}-${value}`
        return (
          <div class="choice" key={value}>
            <input
              type="checkbox"
              id={id}
              name={props.name}
              value={value}
              checked={props.checked.includes(value)}
              aria-describedby={hint === undefined ? undefined : `${id}-hint`}
            />
            <label htmlFor={id}>{label}</label>
            {hint === undefined ? null : (
              <p class="hint" id={`${id}-hint`}>
                {hint}
              </p>
            )}
          </div>
        )
      })}
      {props.error === undefined ? null : (
        <p class="field-error" id={errorId}>
          {props.error}
        </p>
      )}
    </fieldset>
  )
}

/** A select of `options` (value, label) with its label. */
const Select = (props: {
  readonly id: string
  readonly name: string
  readonly label: string
  readonly value: string
  readonly options: ReadonlyArray<readonly [string, string]>
  readonly error: string | undefined
}) => (
  <div class={props.error === undefined ? "field" : "field invalid"}>
    <label htmlFor={props.id}>{props.label}</label>
    <select
      id={props.id}
      name={props.name}
      aria-invalid={props.error === undefined ? undefined : "true"}
      aria-describedby={props.error === undefined ? undefined : `${props.id}-error`}
    >
      {props.options.map(([value, label]) => (
        <option value={value} selected={value === props.value} key={value}>
          {label}
        </option>
      ))}
    </select>
    {props.error === undefined ? null : (
      <p class="field-error" id={`${props.id}-error`}>
        {props.error}
      </p>
    )}
  </div>
)

/** The options both kinds take: the countries, `include` and `fields`. */
const CommonFields = ({ form, state }: { readonly form: "products" | "collections"; readonly state: StartState }) => (
  <>
    <Field
      id={`${form}-locations`}
      name="locations"
      label="Countries"
      value={state.values.locations ?? "US"}
      hint="Two-letter country codes, separated by commas (up to 20): one file each, priced for that country."
      error={state.errors.locations}
      maxLength={200}
    />
    <Choices
      form={form}
      name="include"
      legend="Include"
      choices={productsV3Query.include.map((value) => [
        value,
        <code key={value}>{value}</code>,
        includeDescriptions[value]
      ])}
      checked={state.include}
      error={state.errors.include}
    />
    <Choices
      form={form}
      name="fields"
      legend="Add fields"
      choices={productsV3Query.fields.map((value) => [
        value,
        <code key={value}>{value}</code>,
        fieldDescriptions[value]
      ])}
      checked={state.fields}
      error={state.errors.fields}
    />
  </>
)

const blank = (kind: StartState["kind"]): StartState => ({
  kind,
  values: {},
  include: [],
  fields: [],
  collectionIds: [],
  errors: {}
})

const ProductsForm = (props: {
  readonly current: CurrentMember
  readonly environment: Environment
  readonly state: StartState
}) => {
  const { state } = props
  const value = (name: string) => state.values[name] ?? ""
  return (
    <form method="post" action="/dashboard/exports/products" aria-labelledby="start-products" noValidate>
      <h2 id="start-products">Export products</h2>
      <p>The products the product list shows for these filters, each as the API's product read shows it.</p>
      {state.error === undefined && Object.keys(state.errors).length === 0 ? null : (
        <FormError>{state.error ?? "Please correct the fields marked below."}</FormError>
      )}
      <CsrfField token={props.current.csrf} />
      <input type="hidden" name="environment" value={props.environment} />
      <CommonFields form="products" state={state} />
      <Select
        id="products-catalog"
        name="catalog"
        label="Catalog"
        value={value("catalog")}
        options={[
          ["", "Every catalog"],
          ["marketplace", "Marketplace"],
          ["swag", "Swag"]
        ]}
        error={state.errors.catalog}
      />
      <Select
        id="products-type"
        name="type"
        label="Type"
        value={value("type")}
        options={[
          ["", "Every type"],
          ["physical", "Physical"],
          ["digital", "Digital"]
        ]}
        error={state.errors.type}
      />
      <Field
        id="products-search"
        name="search"
        label="Search"
        value={value("search")}
        required={false}
        error={state.errors.search}
        maxLength={200}
      />
      <Field
        id="products-tagId"
        name="tagId"
        label="Tag id"
        value={value("tagId")}
        required={false}
        error={state.errors.tagId}
        maxLength={24}
      />
      <Field
        id="products-brandId"
        name="brandId"
        label="Brand id"
        value={value("brandId")}
        required={false}
        error={state.errors.brandId}
        maxLength={24}
      />
      <Field
        id="products-priceGte"
        name="priceGte"
        label="Lowest price"
        hint="In minor units of each country's currency: 1000 is 10.00 USD in the US file."
        value={value("priceGte")}
        required={false}
        inputMode="numeric"
        error={state.errors.priceGte}
        maxLength={12}
      />
      <Field
        id="products-priceLte"
        name="priceLte"
        label="Highest price"
        hint="In minor units, as the lowest price."
        value={value("priceLte")}
        required={false}
        inputMode="numeric"
        error={state.errors.priceLte}
        maxLength={12}
      />
      <button type="submit">Start products export</button>
    </form>
  )
}

const CollectionsForm = (props: {
  readonly current: CurrentMember
  readonly environment: Environment
  readonly collections: ReadonlyArray<CatalogCollection>
  readonly state: StartState
}) => {
  const { state } = props
  return (
    <form method="post" action="/dashboard/exports/collections" aria-labelledby="start-collections" noValidate>
      <h2 id="start-collections">Export collections</h2>
      <p>
        The products of the collections you pick, each collection in its own order; every line names its collection.
      </p>
      {state.error === undefined && Object.keys(state.errors).length === 0 ? null : (
        <FormError>{state.error ?? "Please correct the fields marked below."}</FormError>
      )}
      <CsrfField token={props.current.csrf} />
      <input type="hidden" name="environment" value={props.environment} />
      <Choices
        form="collections"
        name="collectionIds"
        legend="Collections"
        choices={props.collections.map((collection) => [collection.id, collection.name])}
        checked={state.collectionIds}
        error={state.errors.collectionIds}
      />
      <CommonFields form="collections" state={state} />
      <button type="submit">Start collections export</button>
    </form>
  )
}

export interface ExportsState {
  readonly environment: Environment
  readonly exports: ReadonlyArray<CatalogExport>
  readonly links: PageLinks
  readonly collections: ReadonlyArray<CatalogCollection>
  readonly now: Date
  /** The form sent, shown again with its problems. */
  readonly sent?: StartState
}

/** The company's exports in an environment, and the two forms that start one. */
export const exportsPage = (current: CurrentMember, state: ExportsState, status = 200) => {
  const sent = state.sent
  return dashboardPage(
    "Exports",
    current,
    <>
      <h1>Exports</h1>
      <p>
        An export writes the catalog as NDJSON files, one per country, one product per line, priced for that country. It
        runs in the background; its files can be downloaded for {exportLifetimeHours} hours once it has completed. A
        company runs one export at a time, of either kind.
      </p>
      {current.company.live ? (
        <FilterForm
          path={section}
          fields={[
            {
              name: "environment",
              label: "Environment",
              value: state.environment,
              options: [
                ["test", environmentNames.test],
                ["live", environmentNames.live]
              ]
            }
          ]}
        />
      ) : null}
      <Table
        caption={`${environmentNames[state.environment]} exports`}
        columns={[
          { header: "Started", cell: (exported: CatalogExport) => <When at={exported.createdAt} /> },
          {
            header: "Export",
            cell: (exported: CatalogExport) => <a href={exportHref(exported)}>{kindNames[exported.kind]}</a>
          },
          { header: "Status", cell: (exported: CatalogExport) => <StatusBadge exported={exported} now={state.now} /> },
          { header: "Progress", cell: (exported: CatalogExport) => `${progressOf(exported)}%` },
          { header: "Countries", cell: (exported: CatalogExport) => exported.request.locations.join(", ") }
        ]}
        rows={state.exports}
        rowKey={(exported) => exported.id}
        links={state.links}
        empty={<EmptyState title="No exports yet." />}
      />
      <ProductsForm
        current={current}
        environment={state.environment}
        state={sent?.kind === "products" ? sent : blank("products")}
      />
      <CollectionsForm
        current={current}
        environment={state.environment}
        collections={state.collections}
        state={sent?.kind === "collections" ? sent : blank("collections")}
      />
    </>,
    { section, status }
  )
}

const Asked = ({ exported }: { readonly exported: CatalogExport }) => {
  const { request } = exported
  const filters = Object.entries(request.filters)
  return (
    <dl class="facts">
      <dt>Countries</dt>
      <dd>{request.locations.join(", ")}</dd>
      {exported.kind === "collections" ? (
        <>
          <dt>Collections</dt>
          <dd>
            {request.collectionIds.map((id, n) => (
              <span key={id}>
                {n > 0 ? ", " : null}
                <code>{id}</code>
              </span>
            ))}
          </dd>
        </>
      ) : (
        <>
          <dt>Filters</dt>
          <dd>
            {filters.length === 0
              ? "None: the whole catalog"
              : filters.map(([name, value], n) => (
                  <span key={name}>
                    {n > 0 ? ", " : null}
                    <code>{`${name.replace("][", " ")} = ${value}`}</code>
                  </span>
                ))}
          </dd>
        </>
      )}
      <dt>Include</dt>
      <dd>{request.include.length === 0 ? "Nothing more" : request.include.join(", ")}</dd>
      <dt>Added fields</dt>
      <dd>{request.fields.length === 0 ? "None" : request.fields.join(", ")}</dd>
      <dt>Prices</dt>
      <dd>{request.prices ? "Shown" : "Left out"}</dd>
    </dl>
  )
}

/** An export: its status (followed live while it runs), its files once completed, and what it was asked for. */
export const exportPage = (current: CurrentMember, exported: CatalogExport, now: Date) => {
  const title = `${kindNames[exported.kind]} export`
  const isRunning = running(exported)
  const gone = expired(exported, now)
  return dashboardPage(
    title,
    current,
    <>
      <p>
        <a href={`${section}?environment=${exported.environment}`}>All exports</a>
      </p>
      <h1>{title}</h1>
      <section
        id="export-status"
        aria-live="polite"
        aria-labelledby="status-heading"
        data-running={isRunning ? "" : undefined}
      >
        <h2 id="status-heading">Status</h2>
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <StatusBadge exported={exported} now={now} />
          </dd>
          <dt>Progress</dt>
          <dd>{`${progressOf(exported)}%`}</dd>
          <dt>Environment</dt>
          <dd>{environmentNames[exported.environment]}</dd>
          <dt>Started</dt>
          <dd>
            <When at={exported.createdAt} />
          </dd>
          <dt>Completed</dt>
          <dd>
            <When at={exported.completedAt} />
          </dd>
          <dt>Files until</dt>
          <dd>
            <When at={exported.expiresAt} />
          </dd>
          {exported.errorMessage === null ? null : (
            <>
              <dt>Error</dt>
              <dd>{exported.errorMessage}</dd>
            </>
          )}
        </dl>
        {isRunning ? (
          <p>
            The export is being written. <a href={exportHref(exported)}>Refresh</a> to see how far it has got.
          </p>
        ) : null}
        {exported.status === "completed" ? (
          gone ? (
            <p>These files have expired and were deleted: start a new export.</p>
          ) : (
            <>
              <h2>Files</h2>
              <ul>
                {exported.request.locations.map((location) => (
                  <li key={location}>
                    <a href={`${exportHref(exported)}/files/${location}`} download="">
                      {`Download the ${location} file (NDJSON)`}
                    </a>
                  </li>
                ))}
              </ul>
            </>
          )
        ) : null}
      </section>
      <h2>What it exports</h2>
      <Asked exported={exported} />
    </>,
    { section, ...(isRunning ? { script: followLiveRegion("export-status") } : {}) }
  )
}

/** A completed export's files past their expiry. */
export const expiredPage = (current: CurrentMember, exported: CatalogExport) =>
  dashboardPage(
    "Export expired",
    current,
    <>
      <h1>Export expired</h1>
      <p>
        This export's files were kept for {exportLifetimeHours} hours and are gone. Start a new export on the{" "}
        <a href={`${section}?environment=${exported.environment}`}>exports page</a>.
      </p>
    </>,
    { section, status: 410 }
  )
