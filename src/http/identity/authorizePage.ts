import { type AuthorizeParams, type Scope, scopeDescriptions } from "../../domain/identity/OAuth.js"
import { escapeHtml, layout } from "../pages/html.js"

/**
 * The HTML of the authorize pages (docs/decisions/0024-authorize-pages.md): sign in or create an account, then consent.
 * Plain server-rendered forms: every input has a label, buttons read "Sign in", "Create account", "Allow" and
 * "Deny", and every form carries the CSRF token and the authorization request's parameters.
 */

const paramNames = [
  "response_type",
  "client_id",
  "redirect_uri",
  "scope",
  "state",
  "code_challenge",
  "code_challenge_method",
  "resource",
  "prompt"
] as const satisfies ReadonlyArray<keyof AuthorizeParams>

/** The authorization request travels with each form, so the POST is checked exactly like the GET was. */
const hiddenFields = (params: AuthorizeParams, csrf: string) =>
  [
    `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`,
    ...paramNames.flatMap((name) => {
      const value = params[name]
      return value === undefined ? [] : [`<input type="hidden" name="${name}" value="${escapeHtml(value)}">`]
    })
  ].join("\n      ")

const css = `
    button.secondary { background: #e8e4df; color: #222; margin-left: .5rem; }
    ul.scopes li { margin: .5rem 0; }
    code { font-size: .85em; color: #666; }`

const render = (title: string, body: string) => layout(title, body, { width: "26rem", css })

export interface SignInPage {
  readonly clientName: string
  readonly params: AuthorizeParams
  readonly csrf: string
  readonly error?: string | undefined
  readonly email?: string | undefined
}

export const signInPage = (page: SignInPage) =>
  render(
    "Sign in to Ribbon",
    `  <h1>Sign in to Ribbon</h1>
  <p><strong>${escapeHtml(page.clientName)}</strong> wants to connect to your Ribbon account.</p>
  ${page.error === undefined ? "" : `<p class="error" role="alert">${escapeHtml(page.error)}</p>`}
  <form method="post" action="/oauth/authorize">
      ${hiddenFields(page.params, page.csrf)}
    <label for="signin-email">Email</label>
    <input id="signin-email" name="email" type="email" autocomplete="username" required value="${escapeHtml(page.email ?? "")}">
    <label for="signin-password">Password</label>
    <input id="signin-password" name="password" type="password" autocomplete="current-password" required>
    <button type="submit" name="action" value="sign_in">Sign in</button>
  </form>
  <h2>New to Ribbon? Create an account</h2>
  <form method="post" action="/oauth/authorize">
      ${hiddenFields(page.params, page.csrf)}
    <label for="signup-name">Your name (optional)</label>
    <input id="signup-name" name="display_name" type="text" autocomplete="name" maxlength="80">
    <label for="signup-email">Email for the new account</label>
    <input id="signup-email" name="email" type="email" autocomplete="email" required>
    <label for="signup-password">Choose a password (at least 8 characters)</label>
    <input id="signup-password" name="password" type="password" autocomplete="new-password" minlength="8" required>
    <button type="submit" name="action" value="sign_up">Create account</button>
  </form>`
  )

export interface ConsentPage {
  readonly clientName: string
  /** For a client identified by its metadata document: the host that serves it (it vouches for the name). */
  readonly clientHost?: string | undefined
  readonly redirectHost: string
  readonly email: string
  readonly scopes: ReadonlyArray<Scope>
  readonly params: AuthorizeParams
  readonly csrf: string
}

const loopbackHost = /^(127\.0\.0\.1|\[::1\]|localhost)(:\d+)?$/

/**
 * Who vouches for a client that names itself by a metadata document: its host, and a warning when it
 * sends the answer to this computer, where any program could be listening (MCP authorization 2025-11-25).
 */
const clientHostNote = (page: ConsentPage) =>
  page.clientHost === undefined
    ? ""
    : `<p class="client-host">Identified by <strong>${escapeHtml(page.clientHost)}</strong>.</p>
  ${
    loopbackHost.test(page.redirectHost)
      ? `<p class="warning">It receives your answer on this computer (${escapeHtml(page.redirectHost)}): allow only if you started ${escapeHtml(page.clientName)} yourself just now.</p>
  `
      : ""
  }`

export const consentPage = (page: ConsentPage) =>
  render(
    `Allow ${page.clientName}?`,
    `  <h1>Allow <span class="client">${escapeHtml(page.clientName)}</span> to use your Ribbon account?</h1>
  ${clientHostNote(page)}<p>Signed in as <strong>${escapeHtml(page.email)}</strong>.</p>
  <p>${escapeHtml(page.clientName)} will be able to:</p>
  <ul class="scopes">
    ${page.scopes.map((scope) => `<li>${escapeHtml(scopeDescriptions[scope])} <code>${escapeHtml(scope)}</code></li>`).join("\n    ")}
  </ul>
  <p>Whatever you choose, you will be sent back to <strong>${escapeHtml(page.redirectHost)}</strong>.</p>
  <form method="post" action="/oauth/authorize">
      ${hiddenFields(page.params, page.csrf)}
    <button type="submit" name="action" value="allow">Allow</button>
    <button type="submit" name="action" value="deny" class="secondary">Deny</button>
  </form>`
  )

/** Errors that must not go back to the client (unknown client, unregistered redirect URI, a stale form). */
export const errorPage = (description: string) =>
  render(
    "Cannot continue",
    `  <h1>This sign-in link cannot be used</h1>
  <p class="error" role="alert">${escapeHtml(description)}</p>
  <p>Go back to the application you came from and start again.</p>`
  )
