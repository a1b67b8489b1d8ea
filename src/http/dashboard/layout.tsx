import { randomBytes } from "node:crypto"
import type { HttpServerResponse } from "@effect/platform"
import type { ComponentChildren } from "preact"
import { roleDescriptions } from "../../domain/company/Members.js"
import { htmlResponse, noncedPageCsp } from "../pages/html.js"
import { Badge, CsrfField, Flash, type FlashMessage } from "./components.js"
import { render } from "./render.js"
import type { CurrentMember } from "./session.js"

/**
 * The dashboard's one layout: a header with the company's name and a "Sandbox" badge until the company is live,
 * the company switcher when the person belongs to several, the navigation, and the sign-out form; then the
 * page. Signed-out pages (sign-in, sign-up) get the header without them. The only inline style and script carry
 * the response's nonce (`noncedPageCsp`).
 */

const css = `
  *, *::before, *::after { box-sizing: border-box; }
  body { font-family: system-ui, sans-serif; background: #f6f4f1; color: #1f1f1f; margin: 0; line-height: 1.45; }
  a { color: #8c1d18; }
  a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, [tabindex]:focus-visible {
    outline: 3px solid #1a56db; outline-offset: 2px; }
  .skip { position: absolute; left: -999px; top: .5rem; background: #fff; padding: .5rem 1rem; z-index: 1; }
  .skip:focus { left: .5rem; }
  header.top { background: #fff; border-bottom: 1px solid #e5e1dc; padding: .75rem 1rem; }
  .brand { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; justify-content: space-between; }
  .company { font-weight: 700; font-size: 1.1rem; overflow-wrap: anywhere; }
  nav.main ul { list-style: none; margin: .6rem 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem .9rem; }
  nav.main a { text-decoration: none; padding: .2rem 0; display: inline-block; }
  nav.main a[aria-current="page"] { font-weight: 700; border-bottom: 2px solid #8c1d18; }
  .header-forms { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
  .header-forms form { display: flex; gap: .4rem; align-items: center; margin: 0; }
  main { max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; }
  .card { background: #fff; border-radius: 12px; padding: 1.25rem; box-shadow: 0 1px 4px rgba(0, 0, 0, .12); }
  main.narrow { max-width: 28rem; }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  h2 { font-size: 1.1rem; margin: 1.5rem 0 .75rem; }
  label { display: block; font-weight: 600; margin: .9rem 0 .3rem; }
  .optional, .hint { font-weight: 400; color: #55504b; }
  .hint { margin: 0 0 .3rem; font-size: .9rem; }
  input, select { width: 100%; padding: .55rem; font-size: 1rem; border: 1px solid #8a847e; border-radius: 6px; }
  .invalid input { border-color: #b3261e; border-width: 2px; }
  .field-error { color: #8c1d18; margin: .3rem 0 0; font-weight: 600; }
  button { padding: .55rem 1.1rem; font-size: 1rem; border-radius: 6px; border: 0; background: #b3261e; color: #fff;
    cursor: pointer; }
  form > button[type="submit"] { margin-top: 1.1rem; }
  .header-forms button, .filters button { margin-top: 0; }
  button.secondary, .header-forms button { background: #ece8e3; color: #1f1f1f; border: 1px solid #8a847e; }
  button.danger { background: #8c1d18; }
  .header-forms label { margin: 0; }
  .header-forms select { width: auto; max-width: 12rem; padding: .35rem; }
  .error, .flash-error { background: #fde8e7; color: #8c1d18; padding: .6rem .8rem; border-radius: 6px; margin-bottom: 1rem; }
  .flash-success { background: #e6f4ea; color: #1e4620; padding: .6rem .8rem; border-radius: 6px; margin-bottom: 1rem; }
  .badge { display: inline-block; padding: .1rem .55rem; border-radius: 999px; font-size: .85rem; font-weight: 600; }
  .badge-warning { background: #ffe08a; color: #3d2e00; }
  .badge-neutral { background: #ece8e3; color: #1f1f1f; }
  .table-wrap { overflow-x: auto; max-width: 100%; }
  table { border-collapse: collapse; width: 100%; }
  caption { text-align: left; font-weight: 600; padding-bottom: .4rem; }
  th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid #e5e1dc; }
  td { overflow-wrap: break-word; }
  td code, td time { white-space: nowrap; }
  .filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: flex-end; margin-bottom: 1rem; }
  .filter { flex: 1 1 10rem; }
  .filter label { margin-top: 0; }
  .pagination { display: flex; gap: 1rem; align-items: center; margin-top: .75rem; }
  .empty { text-align: center; padding: 1.5rem 1rem; color: #3d3a37; }
  .empty-title { font-weight: 600; }
  .confirm { border: 2px solid #8c1d18; border-radius: 10px; padding: 1rem; }
  .confirm .cancel { margin-left: 1rem; }
  dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
  dl.facts dt { font-weight: 600; }
  dl.facts dd { margin: 0; overflow-wrap: anywhere; }
  @media (max-width: 30rem) { dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: .5rem; } }
  a.button { display: inline-block; padding: .55rem 1.1rem; border-radius: 6px; background: #b3261e; color: #fff;
    text-decoration: none; }
  fieldset { border: 1px solid #e5e1dc; border-radius: 8px; margin: 1.1rem 0 0; padding: .5rem 1rem 1rem; min-width: 0; }
  legend { font-weight: 600; padding: 0 .3rem; }
  .choice { display: flex; gap: .6rem; align-items: flex-start; margin: .45rem 0; }
  .choice input { width: auto; margin: .25rem 0 0; flex: none; }
  .choice label { margin: 0; font-weight: 400; overflow-wrap: anywhere; }
  .choice > label, .choice > span { flex: 1 1 0; min-width: 0; }
  ul.plain { list-style: none; margin: 0; padding: 0; }
  ul.indented { padding-left: 1.6rem; }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f4f1; padding: .75rem; border-radius: 6px; }
  blockquote.note { white-space: pre-wrap; overflow-wrap: anywhere; margin: .5rem 0; padding: .75rem 1rem;
    background: #f6f4f1; border-left: 4px solid #b3261e; border-radius: 0 6px 6px 0; }
  .secret input { font-family: ui-monospace, monospace; }
  .secret button { margin-top: .5rem; }
  fieldset.choices { border: 0; padding: 0; margin: .9rem 0 0; }
  fieldset.choices legend { padding: 0; }
  .choice > .hint { flex-basis: 100%; margin: 0 0 0 1.6rem; }
  .choice { flex-wrap: wrap; }
  h3 { font-size: 1rem; margin: 1.25rem 0 .5rem; }
  .actions { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; margin: 1rem 0; }
  .actions form { margin: 0; }
  .actions form > button[type="submit"] { margin-top: 0; }
  pre.payload { margin: .5rem 0; font-size: .9rem; }
  fieldset.choices.invalid { border: 2px solid #b3261e; border-radius: 8px; padding: .5rem 1rem; }
  label.choice { font-weight: 400; margin: .5rem 0 0; }
  ul.picks { list-style: none; margin: .25rem 0 0 1.5rem; padding: 0; }
  .flash, main h1, main h2 { overflow-wrap: anywhere; }
  form.inline { margin: 0; }
  form.inline button { padding: .3rem .7rem; }
  figure.chart-figure { margin: 0 0 1.5rem; }
  svg.chart { display: block; max-width: 100%; height: auto; }
  details > summary { cursor: pointer; margin: .5rem 0; color: #8c1d18; text-decoration: underline; }
  textarea { width: 100%; padding: .55rem; font-size: 1rem; border: 1px solid #8a847e; border-radius: 6px; font: inherit; }
  input[type="file"] { padding: .4rem; }
  progress { width: 100%; height: 1.2rem; }`

/** The company switcher submits as soon as another company is picked; without JavaScript its button does. */
const switcherScript = `document.querySelectorAll("select[data-autosubmit]").forEach(function (s) {
  s.addEventListener("change", function () { s.form.requestSubmit(); });
});`

/** The sections of the dashboard, in the order the navigation shows them. */
export const sections = [
  { href: "/dashboard", label: "Home" },
  { href: "/dashboard/send", label: "Send gifts" },
  { href: "/dashboard/gifts", label: "Gifts" },
  { href: "/dashboard/campaigns", label: "Campaigns" },
  { href: "/dashboard/orders", label: "Orders" },
  { href: "/dashboard/recipients", label: "Recipients" },
  { href: "/dashboard/catalog", label: "Catalog" },
  { href: "/dashboard/api-keys", label: "API keys" },
  { href: "/dashboard/webhooks", label: "Webhooks" },
  { href: "/dashboard/members", label: "Members" },
  { href: "/dashboard/audit-log", label: "Audit log" },
  { href: "/dashboard/outbox", label: "Outbox" },
  { href: "/dashboard/exports", label: "Exports" },
  { href: "/dashboard/billing", label: "Billing" },
  { href: "/dashboard/account", label: "Account and security" }
] as const

export type SectionHref = (typeof sections)[number]["href"]

const Header = ({ current, section }: { readonly current: CurrentMember; readonly section?: SectionHref }) => (
  <header class="top">
    <div class="brand">
      <span class="company">
        {current.company.name} {current.company.live ? null : <Badge tone="warning">Sandbox</Badge>}
      </span>
      <div class="header-forms">
        {current.memberships.length > 1 ? (
          <form method="post" action="/dashboard/switch-company">
            <CsrfField token={current.csrf} />
            <label htmlFor="switch-company">Company</label>
            <select id="switch-company" name="companyId" data-autosubmit="">
              {current.memberships.map((membership) => (
                <option
                  value={membership.companyId}
                  selected={membership.companyId === current.company.id}
                  key={membership.companyId}
                >
                  {membership.companyName}
                </option>
              ))}
            </select>
            <button type="submit">Switch</button>
          </form>
        ) : null}
        <form method="post" action="/dashboard/sign-out">
          <CsrfField token={current.csrf} />
          <button type="submit">Sign out</button>
        </form>
      </div>
    </div>
    <nav class="main" aria-label="Dashboard">
      <ul>
        {sections
          // The outbox is for sandboxes and servers outside production only; sending gifts for those who may.
          .filter((s) => s.href !== "/dashboard/outbox" || current.outboxShown)
          .filter(
            (s) =>
              s.href !== "/dashboard/send" ||
              (current.grant.permissions as ReadonlyArray<string>).includes("gifts:create")
          )
          .map((s) => (
            <li key={s.href}>
              <a href={s.href} aria-current={s.href === section ? "page" : undefined}>
                {s.label}
              </a>
            </li>
          ))}
      </ul>
    </nav>
    <p class="hint">
      Signed in as {current.user.email}, {current.member.role} ({roleDescriptions[current.member.role].toLowerCase()})
    </p>
  </header>
)

export interface PageOptions {
  readonly status?: number
  /** The navigation entry to mark as the current page. */
  readonly section?: SectionHref
  /** A message to show above the page (the flash of the request is shown when this is absent). */
  readonly flash?: FlashMessage | undefined
  /** Narrow pages: forms of a few fields. */
  readonly narrow?: boolean
  /** The page's own small script (an enhancement: the page works without it), run under the page's nonce. */
  readonly script?: string
}

const Document = (props: {
  readonly title: string
  readonly nonce: string
  readonly header: ComponentChildren
  readonly flash: FlashMessage | undefined
  readonly narrow: boolean
  readonly script: string | undefined
  readonly children: ComponentChildren
}) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${props.title} · Ribbon dashboard`}</title>
      <style nonce={props.nonce} dangerouslySetInnerHTML={{ __html: css }} />
    </head>
    <body>
      <a class="skip" href="#main">
        Skip to content
      </a>
      {props.header}
      <main id="main" class={props.narrow ? "narrow" : undefined}>
        <div class="card">
          {props.flash === undefined ? null : <Flash message={props.flash} />}
          {props.children}
        </div>
      </main>
      {props.script === undefined ? null : (
        <script nonce={props.nonce} dangerouslySetInnerHTML={{ __html: props.script }} />
      )}
    </body>
  </html>
)

/** The page's scripts as one (the layout's and the page's own), or none. */
const scriptOf = (...scripts: ReadonlyArray<string | undefined>) => {
  const present = scripts.filter((script) => script !== undefined)
  return present.length === 0 ? undefined : present.join("\n")
}

const respond = (status: number, build: (nonce: string) => string) => {
  const nonce = randomBytes(16).toString("base64")
  return htmlResponse(build(nonce), { status, csp: noncedPageCsp(nonce) })
}

/**
 * A signed-in page: `body` inside the layout, under a fresh nonce and the pages' security headers (no caching,
 * no framing, no Referer). The request's flash message is shown unless `options.flash` replaces it.
 */
export const dashboardPage = (
  title: string,
  current: CurrentMember,
  body: ComponentChildren,
  options: PageOptions = {}
): HttpServerResponse.HttpServerResponse =>
  respond(options.status ?? 200, (nonce) =>
    render(
      <Document
        title={title}
        nonce={nonce}
        header={<Header current={current} {...(options.section === undefined ? {} : { section: options.section })} />}
        flash={options.flash ?? current.flash}
        narrow={options.narrow === true}
        script={scriptOf(current.memberships.length > 1 ? switcherScript : undefined, options.script)}
      >
        {body}
      </Document>
    )
  )

/** A page for someone not signed in (sign-in, sign-up, a refusal before any session). */
export const publicPage = (
  title: string,
  body: ComponentChildren,
  options: { readonly status?: number; readonly flash?: FlashMessage | undefined } = {}
): HttpServerResponse.HttpServerResponse =>
  respond(options.status ?? 200, (nonce) =>
    render(
      <Document
        title={title}
        nonce={nonce}
        header={
          <header class="top">
            <div class="brand">
              <span class="company">Ribbon</span>
            </div>
          </header>
        }
        flash={options.flash}
        narrow={true}
        script={undefined}
      >
        {body}
      </Document>
    )
  )
