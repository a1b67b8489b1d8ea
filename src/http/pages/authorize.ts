import { type AuthorizeParams, type Scope, scopeDescriptions } from "../../domain/OAuth.js"

/**
 * The HTML of the authorize pages (DESIGN.md §4.4): sign in or create an account, then consent. Plain
 * server-rendered forms: every input has a label, buttons read "Sign in", "Create account", "Allow" and
 * "Deny", and every form carries the CSRF token and the authorization request's parameters.
 */

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c as "&"])

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

const layout = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)}</title>
  <style>
    body { font-family: system-ui, sans-serif; background: #f6f4f1; color: #222; margin: 0; }
    main { max-width: 26rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 12px;
           box-shadow: 0 1px 4px rgba(0, 0, 0, .12); }
    h1 { font-size: 1.35rem; margin-top: 0; }
    h2 { font-size: 1.05rem; margin-top: 2rem; border-top: 1px solid #eee; padding-top: 1.5rem; }
    label { display: block; margin: .9rem 0 .3rem; font-weight: 600; }
    input { width: 100%; box-sizing: border-box; padding: .55rem; font-size: 1rem; border: 1px solid #bbb;
            border-radius: 6px; }
    button { margin-top: 1.2rem; padding: .6rem 1.2rem; font-size: 1rem; border-radius: 6px; border: 0;
             background: #b3261e; color: #fff; cursor: pointer; }
    button.secondary { background: #e8e4df; color: #222; margin-left: .5rem; }
    .error { background: #fde8e7; color: #8c1d18; padding: .6rem .8rem; border-radius: 6px; }
    ul.scopes li { margin: .5rem 0; }
    code { font-size: .85em; color: #666; }
  </style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`

export interface SignInPage {
  readonly clientName: string
  readonly params: AuthorizeParams
  readonly csrf: string
  readonly error?: string | undefined
  readonly email?: string | undefined
}

export const signInPage = (page: SignInPage) =>
  layout(
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
  readonly redirectHost: string
  readonly email: string
  readonly scopes: ReadonlyArray<Scope>
  readonly params: AuthorizeParams
  readonly csrf: string
}

export const consentPage = (page: ConsentPage) =>
  layout(
    `Allow ${page.clientName}?`,
    `  <h1>Allow <span class="client">${escapeHtml(page.clientName)}</span> to use your Ribbon account?</h1>
  <p>Signed in as <strong>${escapeHtml(page.email)}</strong>.</p>
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
  layout(
    "Cannot continue",
    `  <h1>This sign-in link cannot be used</h1>
  <p class="error" role="alert">${escapeHtml(description)}</p>
  <p>Go back to the application you came from and start again.</p>`
  )
