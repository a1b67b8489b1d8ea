/**
 * Driving the company dashboard over HTTP as a browser would: a cookie jar (cleared cookies are dropped),
 * redirects left to the caller, forms posted url-encoded with the CSRF token their page carries.
 */

import type { Browser, BrowserContextOptions } from "playwright-core"

const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")

/** The CSRF token of the first form of `html` (or of the form posting to `action`). */
export const csrfOf = (html: string, action?: string): string => {
  const forms = [...html.matchAll(/<form[\s\S]*?<\/form>/g)].map((m) => m[0])
  const form = action === undefined ? forms[0] : forms.find((f) => f.includes(`action="${action}"`))
  const token = form?.match(/name="csrf" value="([^"]*)"/)?.[1]
  if (token === undefined) throw new Error(`No CSRF field${action === undefined ? "" : ` in the form to ${action}`}`)
  return unescapeHtml(token)
}

export interface Page {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly location: string | null
}

let people = 0

/** A fresh, unused e-mail address. */
export const newEmail = (name = "owner") => `${name}${++people}-${Date.now()}@example.com`

export const strongPassword = "velvet-harbor-lantern-42"

export class DashboardBrowser {
  readonly cookies = new Map<string, string>()

  constructor(readonly baseUrl: string) {}

  async request(path: string, init: RequestInit = {}): Promise<Page> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    const response = await fetch(`${this.baseUrl}${path}`, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), ...(cookie === "" ? {} : { cookie }) }
    })
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(";")
      const eq = pair!.indexOf("=")
      const [name, value] = [pair!.slice(0, eq), pair!.slice(eq + 1)]
      if (value === "" || /max-age=0/i.test(header)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      location: response.headers.get("location")
    }
  }

  get(path: string) {
    return this.request(path)
  }

  /** Posts `fields` url-encoded, as a form does (the caller includes `csrf`, or leaves it out on purpose). */
  post(path: string, fields: Record<string, string>) {
    return this.request(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString()
    })
  }

  /** Opens `formPage`, then posts its form (to the page's own path unless `action` says) with its CSRF token. */
  async submit(formPage: string, fields: Record<string, string>, action = formPage): Promise<Page> {
    const page = await this.get(formPage)
    return this.post(action, { csrf: csrfOf(page.text, action), ...fields })
  }

  /** Signs up a new company; returns the e-mail used. */
  async signUp(companyName: string, email = newEmail()): Promise<{ readonly email: string; readonly page: Page }> {
    const page = await this.submit("/dashboard/sign-up", { email, password: strongPassword, companyName })
    if (page.status !== 303) throw new Error(`Sign-up failed (${page.status}): ${page.text}`)
    return { email, page }
  }

  signIn(email: string, password = strongPassword) {
    return this.submit("/dashboard/sign-in", { email, password })
  }
}

/** A page's visible text: tags dropped (with styles and scripts), entities read, spaces collapsed. */
export const textOf = (html: string) =>
  unescapeHtml(html.replace(/<(style|script)[^>]*>[\s\S]*?<\/\1>/g, "").replace(/<[^>]+>/g, " "))
    .replace(/\s+/g, " ")
    .trim()

/** The rows of a page's first table body (or of the table captioned `caption`), each as its cells' text. */
export const tableOf = (page: Page, caption?: string): ReadonlyArray<ReadonlyArray<string>> => {
  const tables = [...page.text.matchAll(/<table[\s\S]*?<\/table>/g)].map((m) => m[0])
  const table = caption === undefined ? tables[0] : tables.find((t) => t.includes(`<caption>${caption}`))
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table ?? "")?.[1] ?? ""
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/g)].map((cell) => textOf(cell[1]!))
  )
}

/** A page's visible text read as prose: `textOf`, with no space left before `,` `.` `:` where a tag ended. */
export const proseOf = (html: string) => textOf(html).replace(/ ([,.:])/g, "$1")

/** A Chromium context carrying `http`'s cookies (its dashboard session), for a browser test to go on from there. */
export const signedInContext = async (
  browser: Browser,
  http: DashboardBrowser,
  options: BrowserContextOptions = {}
) => {
  const context = await browser.newContext(options)
  const host = new URL(http.baseUrl).hostname
  // The dashboard's cookies are set for /dashboard: the same path, so that the server replaces them as it would.
  await context.addCookies(
    [...http.cookies].map(([name, value]) => ({ name, value, domain: host, path: "/dashboard" }))
  )
  return context
}
