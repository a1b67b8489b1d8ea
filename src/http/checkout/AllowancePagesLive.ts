import { createHmac, timingSafeEqual } from "node:crypto"
import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import {
  ALLOWANCE_MAX_DAYS,
  type AllowanceRecord,
  AllowanceTerms,
  allowanceStatus,
  spentInPeriod
} from "../../domain/checkout/Allowances.js"
import type { User } from "../../domain/identity/Users.js"
import { PublicUrl } from "../../services/catalog/Catalog.js"
import { formatMoney } from "../../services/catalog/Pricing.js"
import { Allowances } from "../../services/checkout/Allowances.js"
import { BrowserSessions } from "../../services/identity/BrowserSessions.js"
import { OAuthClients } from "../../services/identity/OAuthClients.js"
import { TwoFactor } from "../../services/identity/TwoFactor.js"
import { Users } from "../../services/identity/Users.js"
import { nowDate } from "../../services/platform/Time.js"
import { Api } from "../Api.js"
import { clientSource, makeAuthFailures } from "../AuthFailures.js"
import { noncedPage } from "../pages/html.js"
import type { AllowanceForm } from "./AllowancePagesApi.js"
import {
  type AllowanceFormState,
  type AllowanceView,
  allowanceCreatedPage,
  allowanceFormPage,
  allowanceProblemPage,
  allowancesPage,
  allowancesSignInPage
} from "./allowancePage.js"

/** The allowances page's session: the person's browser session, sent to `/allowances` only. */
const SESSION_COOKIE = "ribbon_allowances"

/** The revoke forms' token: an HMAC keyed by the session cookie, which another site can neither read nor forge. */
const csrfOf = (session: string) => createHmac("sha256", session).update("ribbon allowances form").digest("base64url")

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** The minor units of a currency (2 for GBP, 0 for JPY). */
const fractionDigits = (currency: string) => {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2
  } catch {
    return 2
  }
}

/** An amount as typed ("25", "25.50") in minor units, or undefined when it is not one. */
const parseAmount = (text: string | undefined, currency: string): number | undefined => {
  const digits = fractionDigits(currency)
  const match = /^\s*(\d{1,9})(?:[.,](\d+))?\s*$/.exec(text ?? "")
  if (match === null || (match[2] ?? "").length > digits) return undefined
  return Number(match[1]) * 10 ** digits + Number((match[2] ?? "").padEnd(digits, "0") || "0")
}

/** A list as typed, split on commas and new lines (and spaces, for codes and addresses); null when empty. */
const parseList = (text: string | undefined, splitSpaces: boolean) => {
  const items = (text ?? "")
    .split(splitSpaces ? /[\s,;]+/ : /[\n,;]+/)
    .map((item) => item.trim())
    .filter((item) => item !== "")
  return items.length === 0 ? null : [...new Set(items)]
}

/** Which form field each term comes from. */
const fieldOfTerm: Record<string, string> = {
  currency: "currency",
  perCheckoutLimit: "perCheckout",
  period: "period",
  periodLimit: "periodLimit",
  totalLimit: "total",
  allowedCountries: "countries",
  allowedRecipients: "recipients",
  allowedCategories: "categories",
  expiresInDays: "days"
}

/** The form's terms, or each problem by field. */
const termsOf = (form: AllowanceForm) => {
  const currency = (form.currency ?? "").trim().toUpperCase()
  const problems: Array<{ field: string; message: string }> = []
  const amount = (field: "perCheckout" | "periodLimit" | "total") => {
    const value = parseAmount(form[field], currency)
    if (value === undefined || value <= 0) problems.push({ field, message: `Enter an amount such as 25 or 25.50.` })
    return value ?? 0
  }
  const days = Number((form.days ?? "").trim())
  const candidate = {
    currency,
    perCheckoutLimit: amount("perCheckout"),
    period: form.period ?? "week",
    periodLimit: amount("periodLimit"),
    totalLimit: amount("total"),
    allowedCountries: parseList(form.countries, true),
    allowedRecipients: parseList(form.recipients, true),
    allowedCategories: parseList(form.categories, false),
    expiresInDays: Number.isInteger(days) ? days : -1
  }
  const decoded = Schema.decodeUnknownEither(AllowanceTerms)(candidate, { errors: "all" })
  if (Either.isLeft(decoded)) {
    for (const issue of ParseResult.ArrayFormatter.formatErrorSync(decoded.left)) {
      const field = fieldOfTerm[String(issue.path[0])] ?? ""
      if (problems.some((p) => p.field === field)) continue
      const message =
        field === "days"
          ? `Enter a number of days from 1 to ${ALLOWANCE_MAX_DAYS}.`
          : field === "countries"
            ? "Enter two-letter country codes such as GB or FR."
            : field === "recipients"
              ? "Enter e-mail addresses, one per line or separated by commas."
              : field === "currency"
                ? "Enter a three-letter currency code such as GBP."
                : issue.message
      problems.push({ field, message })
    }
  }
  if (problems.length === 0 && Either.isRight(decoded)) {
    const terms = decoded.right
    if (terms.perCheckoutLimit > Math.min(terms.periodLimit, terms.totalLimit)) {
      problems.push({
        field: "perCheckout",
        message: "The most per checkout may not be more than the most per period or in total."
      })
    }
    if (problems.length === 0) return Either.right(terms)
  }
  return Either.left(problems)
}

const periodNouns = { day: "day", week: "week", month: "month" } as const

export const AllowancePagesLive = HttpApiBuilder.group(Api, "allowancePages", (handlers) =>
  Effect.gen(function* () {
    const allowances = yield* Allowances
    const clients = yield* OAuthClients
    const users = yield* Users
    const twoFactor = yield* TwoFactor
    const sessions = yield* BrowserSessions
    const failures = yield* makeAuthFailures
    const publicUrl = yield* PublicUrl
    const cookieOptions = {
      httpOnly: true,
      sameSite: "lax",
      path: "/allowances",
      secure: publicUrl.startsWith("https:")
    } as const

    /** The client's name: a registered client's, or the one its metadata document gives; none for a client not found. */
    const clientName = (clientId: string) =>
      clients.find(clientId).pipe(
        Effect.map(Option.map((client) => client.clientName)),
        // A metadata document that cannot be fetched or used names no client.
        Effect.catchTag("InvalidClient", () => Effect.succeedNone)
      )

    /** The person's words for an allowance and its history. */
    const viewOf = (row: AllowanceRecord, name: string, now: Date, withHistory: boolean) =>
      Effect.gen(function* () {
        const money = (amount: number) => formatMoney(amount, row.currency, "en-GB").display
        // The person's own allowance, just listed: it is found.
        const history = withHistory ? (yield* Effect.orDie(allowances.get(row.userId, row.id))).ledger : []
        const only = [
          row.allowedCountries === null ? undefined : `Deliveries to ${row.allowedCountries.join(", ")} only`,
          row.allowedRecipients === null ? undefined : `Gifts to ${row.allowedRecipients.join(", ")} only`,
          row.allowedCategories === null ? undefined : `Categories: ${row.allowedCategories.join(", ")} only`
        ].filter((line): line is string => line !== undefined)
        return {
          id: row.id,
          clientName: name,
          status: allowanceStatus(row, now),
          limits: `Up to ${money(row.perCheckoutLimit)} per checkout, ${money(row.periodLimit)} per ${periodNouns[row.period]} and ${money(row.totalLimit)} in total.`,
          spent: `Spent ${money(spentInPeriod(row, now))} this ${periodNouns[row.period]}, ${money(row.spentTotal)} in total.`,
          only,
          card: `Card ${row.cardBrand} ending ${row.cardLast4}`,
          expiresAt: row.expiresAt.toISOString(),
          history: history.map((entry) => ({
            at: entry.createdAt.toISOString(),
            kind: entry.kind,
            checkoutId: entry.checkoutId,
            amountDisplay: money(Math.abs(entry.amount)),
            reason: entry.reason
          }))
        } satisfies AllowanceView
      })

    /**
     * The person confirming: their password (counted as a sign-in attempt, so guessing waits), and their second
     * factor when they use one. The user, or the problem to show.
     */
    const confirm = (form: {
      readonly email?: string | undefined
      readonly password?: string | undefined
      readonly code?: string | undefined
    }) =>
      Effect.gen(function* () {
        const email = (form.email ?? "").trim()
        const attempt = { kind: "sign-in" as const, source: yield* clientSource, account: email }
        const signedIn = yield* failures
          .guard(attempt, users.authenticate(email, form.password ?? ""), (e) => e._tag === "InvalidCredentials")
          .pipe(Effect.either)
        if (Either.isLeft(signedIn)) {
          return Either.left({
            status: signedIn.left._tag === "RateLimited" ? 429 : 401,
            message: signedIn.left.message
          })
        }
        const user = signedIn.right
        if (yield* twoFactor.isEnabled(user.id)) {
          const code = (form.code ?? "").trim()
          const check: Effect.Effect<unknown, { readonly _tag: string; readonly message: string }> =
            code === ""
              ? Effect.fail({ _tag: "Missing", message: "Enter the code from your authenticator app." })
              : twoFactor.verify(user.id, code)
          const verified = yield* failures
            .guard({ kind: "two-factor", source: attempt.source, account: user.id }, check, (e) => e._tag !== "Missing")
            .pipe(Effect.either)
          if (Either.isLeft(verified)) {
            return Either.left({
              status: verified.left._tag === "RateLimited" ? 429 : 401,
              message: verified.left.message
            })
          }
        }
        return Either.right<User>(user)
      })

    const withSession = (response: HttpServerResponse.HttpServerResponse, userId: string) =>
      Effect.map(sessions.create(userId), (token) =>
        HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, token, cookieOptions)
      )

    const sessionUser = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function* () {
        const token = request.cookies[SESSION_COOKIE]
        if (token === undefined) return Option.none<{ user: User; token: string }>()
        return Option.map(yield* sessions.user(token), (user) => ({ user, token }))
      })

    const listPage = (user: User, token: string, notice?: string) =>
      Effect.gen(function* () {
        const now = yield* nowDate
        const rows = yield* allowances.listForUser(user.id)
        const views = yield* Effect.forEach(rows, (row) =>
          Effect.flatMap(clientName(row.clientId), (name) =>
            viewOf(
              row,
              Option.getOrElse(name, () => row.clientId),
              now,
              true
            )
          )
        )
        return noncedPage((nonce) => allowancesPage(views, csrfOf(token), { notice, nonce }))
      })

    const notFoundClient = noncedPage(
      (nonce) =>
        allowanceProblemPage(
          "This allowance link is not valid",
          "Ask the assistant or app you came from for a new link.",
          nonce
        ),
      404
    )

    return handlers
      .handle("newAllowancePage", ({ urlParams }) =>
        Effect.gen(function* () {
          const name = yield* clientName(urlParams.client_id)
          if (Option.isNone(name)) return notFoundClient
          const view = {
            clientId: urlParams.client_id,
            clientName: name.value,
            postUrl: "/allowances/new",
            maxDays: ALLOWANCE_MAX_DAYS
          }
          return noncedPage((nonce) => allowanceFormPage(view, {}, nonce))
        })
      )
      .handle("createAllowance", ({ payload }) =>
        Effect.gen(function* () {
          const clientId = payload.client_id ?? ""
          const name = yield* clientName(clientId)
          if (Option.isNone(name)) return notFoundClient
          const view = { clientId, clientName: name.value, postUrl: "/allowances/new", maxDays: ALLOWANCE_MAX_DAYS }
          const values = { ...payload }
          const again = (state: AllowanceFormState, status: number) =>
            noncedPage((nonce) => allowanceFormPage(view, { values, ...state }, nonce), status)
          const terms = termsOf(payload)
          if (Either.isLeft(terms)) return again({ problems: terms.left }, 422)
          const confirmed = yield* confirm(payload)
          if (Either.isLeft(confirmed)) {
            return again({ problems: [{ field: "password", message: confirmed.left.message }] }, confirmed.left.status)
          }
          const user = confirmed.right
          const made = yield* allowances
            .create({
              userId: user.id,
              clientId,
              terms: terms.right,
              card: {
                number: payload.number ?? "",
                expiry: payload.expiry ?? "",
                cvc: payload.cvc ?? "",
                name: payload.name ?? ""
              }
            })
            .pipe(Effect.either)
          if (Either.isLeft(made)) {
            const refused = made.left
            if (refused._tag === "InvalidRequest") {
              return again({ problems: [{ field: "perCheckout", message: refused.message }] }, 422)
            }
            return refused.fieldErrors.length > 0
              ? again({ cardErrors: refused.fieldErrors }, 422)
              : again({ cardMessage: refused.message }, 422)
          }
          const created = yield* viewOf(made.right, name.value, yield* nowDate, false)
          return yield* withSession(
            noncedPage((nonce) => allowanceCreatedPage(created, nonce), 201),
            user.id
          )
        })
      )
      .handle("allowancesPage", ({ request }) =>
        Effect.gen(function* () {
          const session = yield* sessionUser(request)
          if (Option.isNone(session)) return noncedPage((nonce) => allowancesSignInPage({}, nonce))
          return yield* listPage(session.value.user, session.value.token)
        })
      )
      .handle("allowancesSignIn", ({ payload }) =>
        Effect.gen(function* () {
          const confirmed = yield* confirm(payload)
          if (Either.isLeft(confirmed)) {
            return noncedPage(
              (nonce) => allowancesSignInPage({ email: payload.email, message: confirmed.left.message }, nonce),
              confirmed.left.status
            )
          }
          const token = yield* sessions.create(confirmed.right.id)
          const page = yield* listPage(confirmed.right, token)
          return HttpServerResponse.unsafeSetCookie(page, SESSION_COOKIE, token, cookieOptions)
        })
      )
      .handle("revokeAllowancePage", ({ path, payload, request }) =>
        Effect.gen(function* () {
          const session = yield* sessionUser(request)
          if (Option.isNone(session)) return noncedPage((nonce) => allowancesSignInPage({}, nonce), 401)
          const { user, token } = session.value
          if (!sameSecret(payload.csrf ?? "", csrfOf(token))) {
            return noncedPage(
              (nonce) =>
                allowanceProblemPage("This form has expired", "Reload your allowances page and try again.", nonce),
              403
            )
          }
          const revoked = yield* allowances.revoke(user.id, path.allowanceId).pipe(Effect.either)
          if (Either.isLeft(revoked)) {
            return noncedPage(
              (nonce) => allowanceProblemPage("No such allowance", "It may belong to another account.", nonce),
              404
            )
          }
          return yield* listPage(user, token, "The allowance was revoked; it can no longer be used.")
        })
      )
  })
)
