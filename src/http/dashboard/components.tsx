import { DateTime } from "effect"
import type { ComponentChildren } from "preact"

/**
 * The dashboard's small component set: a table with pagination links and a filter form (the rows come paged
 * and filtered from SQL: a component never filters), a form field with its error, an empty state, a confirm
 * step for destructive actions, flash messages, and the hidden CSRF field every form carries.
 */

/** The CSRF token every dashboard form sends back (`csrf`); checked before the form's action runs. */
export const CsrfField = ({ token }: { readonly token: string }) => <input type="hidden" name="csrf" value={token} />

export interface FieldProps {
  /** The form field's name, also its id unless `id` is given. */
  readonly name: string
  /** The input's id, where two forms of a page have a field of the same name. */
  readonly id?: string
  readonly label: string
  readonly type?: "text" | "email" | "password" | "url" | "search" | "number" | "date"
  readonly value?: string | undefined
  /** The problem with what was sent, shown under the input and tied to it for screen readers. */
  readonly error?: string | undefined
  /** A hint shown under the label. */
  readonly hint?: string | undefined
  readonly required?: boolean
  readonly autocomplete?: string
  readonly maxLength?: number
  /** The on-screen keyboard to offer ("numeric" for a code). */
  readonly inputMode?: "text" | "numeric"
}

/** A labelled input with its hint and its error (`aria-invalid`, `aria-describedby`). */
export const Field = (props: FieldProps) => {
  const id = props.id ?? props.name
  const hintId = props.hint === undefined ? undefined : `${id}-hint`
  const errorId = props.error === undefined ? undefined : `${id}-error`
  const describedBy = [hintId, errorId].filter((id) => id !== undefined).join(" ")
  return (
    <div class={props.error === undefined ? "field" : "field invalid"}>
      <label htmlFor={id}>
        {props.label}
        {props.required === false ? <span class="optional"> (optional)</span> : null}
      </label>
      {props.hint === undefined ? null : (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      )}
      <input
        id={id}
        name={props.name}
        // preact's types tell input types apart by role; every type here is a plain text box to them.
        type={(props.type ?? "text") as "text"}
        value={props.type === "password" ? undefined : props.value}
        required={props.required !== false}
        autocomplete={props.autocomplete}
        maxLength={props.maxLength}
        inputMode={props.inputMode}
        aria-invalid={props.error === undefined ? undefined : "true"}
        aria-describedby={describedBy === "" ? undefined : describedBy}
      />
      {props.error === undefined ? null : (
        <p class="field-error" id={errorId}>
          {props.error}
        </p>
      )}
    </div>
  )
}

/** A problem with a whole form (or a summary of its fields' problems), announced when the page loads. */
export const FormError = ({ children }: { readonly children: ComponentChildren }) => (
  <div class="error" role="alert">
    {children}
  </div>
)

export type FlashKind = "success" | "error"

export interface FlashMessage {
  readonly kind: FlashKind
  readonly text: string
}

/** A message from the action before this page (after its redirect). */
export const Flash = ({ message }: { readonly message: FlashMessage }) => (
  <div class={`flash flash-${message.kind}`} role={message.kind === "error" ? "alert" : "status"}>
    {message.text}
  </div>
)

/** What a list shows when it has nothing, and what to do about it. */
export const EmptyState = (props: { readonly title: string; readonly children?: ComponentChildren }) => (
  <div class="empty">
    <p class="empty-title">{props.title}</p>
    {props.children}
  </div>
)

export interface Column<Row> {
  readonly header: string
  readonly cell: (row: Row) => ComponentChildren
}

/** Where a list's page links point: the list's path and its current filters, to which `page` is added. */
export interface PageLinks {
  readonly path: string
  readonly params: Readonly<Record<string, string>>
  /** The page shown, from 1. */
  readonly page: number
  readonly hasNext: boolean
}

const hrefOf = (links: PageLinks, page: number) => {
  const params = new URLSearchParams(Object.entries(links.params).filter(([, value]) => value !== ""))
  if (page > 1) params.set("page", String(page))
  const query = params.toString()
  return query === "" ? links.path : `${links.path}?${query}`
}

/** Previous and next page links, as a labelled navigation region. */
export const Pagination = ({ links }: { readonly links: PageLinks }) =>
  links.page === 1 && !links.hasNext ? null : (
    <nav class="pagination" aria-label="Pages">
      {links.page > 1 ? <a href={hrefOf(links, links.page - 1)}>Previous page</a> : null}
      <span aria-current="page">Page {links.page}</span>
      {links.hasNext ? <a href={hrefOf(links, links.page + 1)}>Next page</a> : null}
    </nav>
  )

/**
 * A table of one page of rows, scrollable on its own on a narrow screen (a focusable region, so a keyboard
 * scrolls it too), with its page links; `empty` when there are no rows.
 */
export const Table = <Row,>(props: {
  readonly caption: string
  readonly columns: ReadonlyArray<Column<Row>>
  readonly rows: ReadonlyArray<Row>
  readonly rowKey: (row: Row) => string
  readonly links: PageLinks
  readonly empty: ComponentChildren
}) =>
  props.rows.length === 0 ? (
    <>
      {props.empty}
      <Pagination links={props.links} />
    </>
  ) : (
    <>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard */}
      <section class="table-wrap" aria-label={props.caption} tabIndex={0}>
        <table>
          <caption>{props.caption}</caption>
          <thead>
            <tr>
              {props.columns.map((column) => (
                <th scope="col" key={column.header}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.rows.map((row) => (
              <tr key={props.rowKey(row)}>
                {props.columns.map((column) => (
                  <td key={column.header}>{column.cell(row)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <Pagination links={props.links} />
    </>
  )

export interface FilterField {
  readonly name: string
  readonly label: string
  readonly value: string
  /** A select's options (value, label); a text input when absent. */
  readonly options?: ReadonlyArray<readonly [string, string]>
  /** A text input's type: `search` unless a date is asked for. */
  readonly type?: "search" | "date"
}

/** A list's filters as a GET form (they travel in the URL, so a filtered page can be linked and reloaded). */
export const FilterForm = (props: { readonly path: string; readonly fields: ReadonlyArray<FilterField> }) => (
  <form class="filters" method="get" action={props.path} aria-label="Filters">
    {props.fields.map((field) => (
      <div class="filter" key={field.name}>
        <label htmlFor={`filter-${field.name}`}>{field.label}</label>
        {field.options === undefined ? (
          <input
            id={`filter-${field.name}`}
            name={field.name}
            // preact's types tell input types apart by role; both are plain inputs here.
            type={(field.type ?? "search") as "search"}
            value={field.value}
          />
        ) : (
          <select id={`filter-${field.name}`} name={field.name}>
            {field.options.map(([value, label]) => (
              <option value={value} selected={value === field.value} key={value}>
                {label}
              </option>
            ))}
          </select>
        )}
      </div>
    ))}
    <button type="submit" class="secondary">
      Filter
    </button>
  </form>
)

/**
 * The second step of a destructive action: what will happen, in words, and a form that does it (with the CSRF
 * token and the fields that name what it acts on) beside a way back. The first step is a link or a GET form
 * to the page showing this, so nothing is destroyed by one click, with or without JavaScript.
 */
export const ConfirmStep = (props: {
  readonly title: string
  readonly children: ComponentChildren
  readonly action: string
  readonly csrf: string
  readonly fields?: Readonly<Record<string, string>>
  /** Inputs the person fills in to confirm (a password asked again), inside the form. */
  readonly inputs?: ComponentChildren
  readonly confirmLabel: string
  readonly cancelHref: string
  /** The way back's words ("Cancel" unless given: say "Keep the order" where the action itself cancels). */
  readonly cancelLabel?: string
}) => (
  <section class="confirm" aria-labelledby="confirm-title">
    <h2 id="confirm-title">{props.title}</h2>
    {props.children}
    <form method="post" action={props.action}>
      <CsrfField token={props.csrf} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} key={name} />
      ))}
      {props.inputs}
      <button type="submit" class="danger">
        {props.confirmLabel}
      </button>
      <a class="cancel" href={props.cancelHref}>
        {props.cancelLabel ?? "Cancel"}
      </a>
    </form>
  </section>
)

/** A short label in a coloured box ("Sandbox", a role, a status). */
export const Badge = (props: { readonly children: ComponentChildren; readonly tone?: "warning" | "neutral" }) => (
  <span class={`badge badge-${props.tone ?? "neutral"}`}>{props.children}</span>
)

/**
 * The script of a page that shows a secret once: a `button[data-copy]` (hidden until this runs) copies the field
 * its `data-copy` names and says so in the element its `data-status` names; an `input[data-select]` selects its
 * text when focused, so that without JavaScript it is copied by hand.
 */
export const copySecretScript = `document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var field = document.getElementById(button.getAttribute("data-copy"));
  var status = document.getElementById(button.getAttribute("data-status"));
  button.hidden = false;
  button.addEventListener("click", function () {
    field.select();
    var done = function () { status.textContent = "Copied."; };
    var failed = function () { status.textContent = "Could not copy: it is selected, copy it with your keyboard."; };
    if (navigator.clipboard) navigator.clipboard.writeText(field.value).then(done, failed);
    else if (document.execCommand("copy")) done();
    else failed();
  });
});
document.querySelectorAll("input[data-select]").forEach(function (field) {
  field.addEventListener("focus", function () { field.select(); });
});`

/** A moment as UTC text to the second, with its machine-readable form; none as a dash. */
export const When = ({ at }: { readonly at: Date | DateTime.Utc | null }) => {
  if (at === null) return <>—</>
  const iso = at instanceof Date ? at.toISOString() : DateTime.formatIso(at)
  return <time dateTime={iso}>{`${iso.slice(0, 19).replace("T", " ")} UTC`}</time>
}

/**
 * A page script for a status region (`id`, marked `data-running` while its work goes on) that follows the work where
 * JavaScript runs: every 2 seconds it reads the page again and puts the new region in place of the old, until the
 * region is no longer running. Without JavaScript, a link in the region does the same by hand. (Browser code: the
 * page's own timers, not the server's.)
 */
export const followLiveRegion = (id: string) => `(function () {
  var region = document.getElementById(${JSON.stringify(id)});
  if (!region || !region.hasAttribute("data-running")) return;
  var follow = function () {
    fetch(window.location.href, { credentials: "same-origin", headers: { accept: "text/html" } })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        // The page's own style and script go first: their nonce is not this page's, and the CSP would refuse them.
        var body = html.replace(/<(style|script)\\b[\\s\\S]*?<\\/\\1>/g, "");
        var next = new DOMParser().parseFromString(body, "text/html").getElementById(${JSON.stringify(id)});
        if (!next) return;
        region.innerHTML = next.innerHTML;
        if (next.hasAttribute("data-running")) setTimeout(follow, 2000);
        else region.removeAttribute("data-running");
      })
      .catch(function () { setTimeout(follow, 5000); });
  };
  setTimeout(follow, 2000);
})();`
