import { randomBytes } from "node:crypto"
import { HttpServerResponse } from "@effect/platform"

/**
 * What every server-rendered page shares: escaping, one document layout with the base look (the authorize
 * pages, the payment page), and the response headers. Each page adds its own CSS, width and CSP.
 */

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c as "&"])

export const nonceAttr = (nonce: string | undefined) => (nonce === undefined ? "" : ` nonce="${escapeHtml(nonce)}"`)

const baseCss = `
    body { font-family: system-ui, sans-serif; background: #f6f4f1; color: #222; margin: 0; }
    main { margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 12px;
           box-shadow: 0 1px 4px rgba(0, 0, 0, .12); }
    h1 { font-size: 1.35rem; margin-top: 0; }
    h2 { font-size: 1.05rem; margin-top: 2rem; border-top: 1px solid #eee; padding-top: 1.5rem; }
    label { display: block; margin: .9rem 0 .3rem; font-weight: 600; }
    input { width: 100%; box-sizing: border-box; padding: .55rem; font-size: 1rem; border: 1px solid #bbb;
            border-radius: 6px; }
    button { margin-top: 1.2rem; padding: .6rem 1.2rem; font-size: 1rem; border-radius: 6px; border: 0;
             background: #b3261e; color: #fff; cursor: pointer; }
    .error { background: #fde8e7; color: #8c1d18; padding: .6rem .8rem; border-radius: 6px; }`

export interface LayoutOptions {
  /** The width of the page's card, e.g. `26rem`. */
  readonly width: string
  /** The page's own rules, after the base ones. */
  readonly css?: string | undefined
  /** Extra `<head>` elements. */
  readonly head?: string | undefined
  /** Put on the inline `<style>` when a nonce-based CSP is sent. */
  readonly nonce?: string | undefined
  /** The page's language tag (`en` unless given). */
  readonly lang?: string | undefined
}

/** A whole HTML document: `title` is escaped, `body` is inserted as it is. */
export const layout = (title: string, body: string, options: LayoutOptions) => `<!doctype html>
<html lang="${escapeHtml(options.lang ?? "en")}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">${options.head ?? ""}
  <title>${escapeHtml(title)}</title>
  <style${nonceAttr(options.nonce)}>${baseCss}
    main { max-width: ${options.width}; }${options.css ?? ""}
  </style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`

/**
 * The Content-Security-Policy of the pages whose one inline style (and script) carry `nonce` (the payment
 * and gift pages). Images may come from any https host (catalog images) or this origin; forms post, and
 * the page's script connects, to this origin only.
 */
export const noncedPageCsp = (nonce: string) =>
  [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    "img-src 'self' https: data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'"
  ].join("; ")

/**
 * A page as a response: never cached, never framed, no Referer sent from it, under `csp` (the page's own
 * Content-Security-Policy).
 */
export const htmlResponse = (body: string, options: { readonly status?: number; readonly csp: string }) =>
  HttpServerResponse.text(body, {
    status: options.status ?? 200,
    contentType: "text/html; charset=utf-8",
    headers: {
      "cache-control": "no-store",
      pragma: "no-cache",
      "x-frame-options": "DENY",
      "content-security-policy": options.csp,
      "referrer-policy": "no-referrer"
    }
  })

/**
 * A page rendered with a fresh nonce for its inline style and script, under `noncedPageCsp`. The payment
 * and gift pages' URLs carry a token, so `htmlResponse` keeps them uncached and unreferred.
 */
export const noncedPage = (render: (nonce: string) => string, status = 200) => {
  const nonce = randomBytes(16).toString("base64")
  return htmlResponse(render(nonce), { status, csp: noncedPageCsp(nonce) })
}
