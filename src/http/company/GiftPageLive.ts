import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Duration, Effect, Either, Option, Schema } from "effect"
import { allowsSwap } from "../../domain/company/Campaigns.js"
import { acceptedTags, languageCookie, pageLanguage, supportedLanguage } from "../../domain/company/GiftLanguages.js"
import {
  canWriteThankYouNote,
  type GiftRecord,
  thankYouNoteMaxLength,
  thankYouNoteOf,
  thankYouNoteText
} from "../../domain/company/Gifts.js"
import { NotFound } from "../../domain/platform/Errors.js"
import { DEFAULT_COUNTRY, PublicUrl } from "../../services/catalog/Catalog.js"
import { CompanyOrders } from "../../services/company/CompanyOrders.js"
import { type GiftChoice, type GiftClaim, type GiftOffer, Gifts, type GiftView } from "../../services/company/Gifts.js"
import { type GiftTranslator, translatorFor } from "../../services/company/GiftTranslator.js"
import { CompanyPolicy } from "../../services/company/Policy.js"
import { Api } from "../Api.js"
import { noncedPage } from "../pages/html.js"
import type { ClaimForm } from "./GiftPageApi.js"
import { ClaimGiftV2, DigitalClaimV2 } from "./GiftsApi.js"
import {
  type ClaimFormState,
  type ClaimProblem,
  claimSummaryOf,
  deliveryOf,
  formProblems,
  type GiftPageContext,
  giftChoicesPage,
  giftClaimedPage,
  giftClaimPage,
  giftDigitalChoicesPage,
  giftDigitalClaimPage,
  giftGonePage,
  giftLandingPage,
  giftNoteRefusedPage,
  giftOtherChoicesPage,
  giftUndeliverablePage,
  type PageFrame,
  refusalProblems,
  type ThankYouState
} from "./giftPage.js"
import { claimOf } from "./requests.js"

// Every problem of the form at once, each beside its field.
const decodeClaim = Schema.decodeUnknownEither(ClaimGiftV2, { errors: "all" })
const decodeDigitalClaim = Schema.decodeUnknownEither(DigitalClaimV2, { errors: "all" })

/**
 * The regions of an `Accept-Language` header, most preferred first: `en-GB,fr;q=0.8,de-DE;q=0.5` gives
 * GB, DE. The browser's languages are the one hint of where a recipient is that needs no script and no
 * lookup of the address; a tag without a region (`fr`) says nothing about the country.
 */
export const regionsOf = (acceptLanguage: string | undefined): ReadonlyArray<string> =>
  acceptedTags(acceptLanguage).flatMap((tag) => {
    const region = tag
      .split("-")
      .slice(1)
      .find((subtag) => /^[A-Za-z]{2}$/.test(subtag))
    return region === undefined ? [] : [region.toUpperCase()]
  })

/** When a gift expired: at its expiry, or earlier when its company expired it early. */
const expiredAt = (gift: GiftRecord) =>
  gift.closedAt !== null && gift.closedAt < gift.expiresAt ? gift.closedAt : gift.expiresAt

/** Why a refused thank-you note was refused, in the reader's words (the note's one rule, `thankYouNoteText`). */
const noteProblem = (tr: GiftTranslator, text: string) => {
  const judged = thankYouNoteText(text)
  if (judged.ok) return tr.t("note.empty")
  const reasons = { empty: "note.empty", "too-long": "note.tooLong", control: "note.control" } as const
  return tr.t(reasons[judged.reason], { max: thankYouNoteMaxLength, length: judged.length })
}

/** How a request's page is written: in the reader's language, answering for `token`, coming back to the page. */
type Framing = (nonce: string) => PageFrame

/**
 * The reader's translator and the page's frame for a request: the language picked with the switcher (its cookie),
 * else the browser's, else English. A page reached by a POST comes back to the gift's link when the language changes.
 */
const framingOf = (request: HttpServerRequest.HttpServerRequest, token: string) => {
  const tr = translatorFor(pageLanguage(request.cookies[languageCookie], request.headers["accept-language"]))
  const here = request.method === "GET" ? request.url : `/g/${encodeURIComponent(token)}`
  return { tr, frame: (nonce: string): PageFrame => ({ tr, nonce, token, here }) }
}

const gone = (frame: Framing, reason: "unknown" | "expired" | "cancelled", view?: GiftView) =>
  noncedPage(
    (nonce) =>
      giftGonePage(
        frame(nonce),
        reason,
        view === undefined ? undefined : { expiredAt: expiredAt(view.gift), sender: view.sender }
      ),
    reason === "unknown" ? 404 : 410
  )

/**
 * Where the language switcher comes back to: the page it was on, when that is one of this gift's pages (a path under
 * `/g/{token}`); the gift's link otherwise, so the form cannot send a reader elsewhere.
 */
export const switcherReturn = (token: string, back: string) => {
  const home = `/g/${encodeURIComponent(token)}`
  const path = back.split(/[?#]/)[0] ?? ""
  return (path === home || path.startsWith(`${home}/`)) && !/[\\\s]/.test(back) ? back : home
}

/**
 * The choices page for what the gift offers in a country: its own choices (followed by "See other gifts" when the
 * gift may be swapped), digital gifts, or nothing.
 */
const offerPage = (
  context: (nonce: string) => GiftPageContext,
  offered: GiftOffer,
  country: string,
  swappable: boolean,
  status = 200
) =>
  noncedPage(
    (nonce) =>
      offered.choices.length === 0
        ? giftUndeliverablePage(context(nonce), country)
        : offered.digital
          ? giftDigitalChoicesPage(context(nonce), offered.choices, country)
          : giftChoicesPage(context(nonce), offered.choices, country, swappable),
    status
  )

/** The claim form for a choice: with the address for what is shipped, without it for a digital gift. */
const claimFormPage = (
  context: GiftPageContext,
  choice: GiftChoice,
  countries: ReadonlyArray<string>,
  country: string,
  state: ClaimFormState
) =>
  choice.digital
    ? giftDigitalClaimPage(context, choice, country, state)
    : giftClaimPage(context, choice, countries, country, state)

/** A claim of something shipped from the page's form: who receives it and where. */
const shippedClaimOf = (payload: typeof ClaimForm.Type, country: string) =>
  Either.map(
    decodeClaim({
      variantId: payload.variantId,
      orderRecipient: {
        firstName: payload.firstName,
        lastName: payload.lastName,
        email: payload.email,
        phone: payload.phone,
        country,
        address: {
          addressLine1: payload.address1,
          ...(payload.address2 === "" ? {} : { addressLine2: payload.address2 }),
          city: payload.city,
          ...(payload.state === "" ? {} : { state: payload.state }),
          ...(payload.zipcode === "" ? {} : { zipcode: payload.zipcode })
        }
      }
    }),
    claimOf
  )

/**
 * A digital gift's claim from the page's form: who receives it and the country, no address (the order's address is
 * the country alone: docs/decisions/0073-gifts-that-reach-any-country.md).
 */
const digitalClaimOf = (payload: typeof ClaimForm.Type, country: string) =>
  Either.map(
    decodeDigitalClaim({
      variantId: payload.variantId,
      orderRecipient: {
        firstName: payload.firstName,
        lastName: payload.lastName,
        email: payload.email,
        phone: payload.phone,
        country
      }
    }),
    (claim): GiftClaim => ({
      variantId: claim.variantId.toLowerCase(),
      recipient: {
        firstName: claim.orderRecipient.firstName,
        lastName: claim.orderRecipient.lastName,
        email: claim.orderRecipient.email,
        phone: claim.orderRecipient.phone
      },
      address: { address1: "", city: "", countryCode: claim.orderRecipient.country }
    })
  )

export const GiftPageLive = HttpApiBuilder.group(Api, "giftPage", (handlers) =>
  Effect.gen(function* () {
    const gifts = yield* Gifts
    const orders = yield* CompanyOrders
    const policy = yield* CompanyPolicy
    const secureCookie = (yield* PublicUrl).startsWith("https:")
    /**
     * Where a gift can go, read per request (the catalog's countries, cached by Pricing): the select's
     * options by name, and the country a request means: the one asked for, else the recipient's (when the
     * company gave it), else the browser's (`Accept-Language`), else US; the first of them a gift can go to.
     */
    const destinations = Effect.map(gifts.destinations(), (supported) => ({
      countries: supported,
      countryOf: (asked: string, view: GiftView, request: HttpServerRequest.HttpServerRequest) =>
        [asked, view.recipient.country ?? "", ...regionsOf(request.headers["accept-language"])]
          .map((code) => code.toUpperCase())
          .find((code) => supported.includes(code)) ?? DEFAULT_COUNTRY
    }))
    const contextOf = (view: GiftView, frame: PageFrame): GiftPageContext => ({
      ...frame,
      sender: view.sender,
      note: view.campaign.message,
      firstName: view.recipient.firstName,
      expiresAt: view.gift.expiresAt
    })

    /**
     * The product a swapping recipient picked among the other gifts (none when the gift may not be swapped, or the
     * product is not one of them): read only once the campaign's own choices did not have it.
     */
    const swapChoiceOf = (view: GiftView, country: string, productId: string) =>
      Effect.map(gifts.swapChoices(view.gift, view.campaign, country), (others) =>
        others.find((c) => c.productId === productId)
      )

    /** The claimed gift's order, as the company reads it (none while it is not placed). */
    const orderOf = (gift: GiftRecord) => orders.get(policy.scopeOfGift(gift), gift.orderId ?? "").pipe(Effect.option)

    /**
     * The claimed gift's page: what was chosen, where it goes, where its order stands, and its thank-you note with the
     * note's form while it may be written (`thankYou` adds a refused draft, or the note just sent).
     */
    const claimedPage = (
      framing: ReturnType<typeof framingOf>,
      view: GiftView,
      gift: GiftRecord,
      thankYou: Omit<ThankYouState, "note" | "editable"> = {},
      status = 200
    ) =>
      Effect.gen(function* () {
        const order = yield* orderOf(gift)
        const now = new Date(yield* Clock.currentTimeMillis)
        const delivery = deliveryOf(order, framing.tr)
        const summary = Option.getOrNull(Option.map(order, (o) => claimSummaryOf(o, framing.tr)))
        const note = { ...thankYou, note: thankYouNoteOf(gift), editable: canWriteThankYouNote(gift, now) }
        return noncedPage(
          (nonce) => giftClaimedPage(contextOf(view, framing.frame(nonce)), delivery, summary, note),
          status
        )
      })

    /**
     * The gift behind the token, moved to `step`, or the page that says why there is none to show; `show` gets the
     * gift, where it can go, and the page's context maker in the reader's language.
     */
    const withGift = <R>(
      request: HttpServerRequest.HttpServerRequest,
      token: string,
      step: "opened" | "unwrapped",
      show: (
        view: GiftView,
        where: Effect.Effect.Success<typeof destinations>,
        context: (nonce: string) => GiftPageContext
      ) => Effect.Effect<ReturnType<typeof noncedPage>, never, R>,
      thankYou: Omit<ThankYouState, "note" | "editable"> = {}
    ) =>
      Effect.gen(function* () {
        const framing = framingOf(request, token)
        const found = yield* gifts.visit(token, step)
        if (Option.isNone(found)) return gone(framing.frame, "unknown")
        const view = found.value
        const { status } = view.gift
        if (status === "expired" || status === "cancelled") return gone(framing.frame, status, view)
        if (status === "claimed") return yield* claimedPage(framing, view, view.gift, thankYou)
        return yield* show(view, yield* destinations, (nonce) => contextOf(view, framing.frame(nonce)))
      })

    return handlers
      .handleRaw("landing", ({ path, request, urlParams }) =>
        withGift(
          request,
          path.token,
          "opened",
          (view, { countries, countryOf }, context) =>
            Effect.succeed(
              noncedPage((nonce) => giftLandingPage(context(nonce), countries, countryOf("", view, request)))
            ),
          { sent: urlParams.note === "sent" }
        )
      )
      .handleRaw("choices", ({ path, urlParams, request }) =>
        withGift(request, path.token, "unwrapped", (view, { countryOf }, context) =>
          Effect.gen(function* () {
            const country = countryOf(urlParams.country, view, request)
            const offered = yield* gifts.offer(view.gift, view.campaign, country)
            return offerPage(context, offered, country, allowsSwap(view.campaign))
          })
        )
      )
      .handleRaw("others", ({ path, urlParams, request }) =>
        withGift(request, path.token, "unwrapped", (view, { countryOf }, context) =>
          Effect.gen(function* () {
            const country = countryOf(urlParams.country, view, request)
            if (!allowsSwap(view.campaign)) {
              return noncedPage((nonce) => giftOtherChoicesPage(context(nonce), null, country), 404)
            }
            const others = yield* gifts.swapChoices(view.gift, view.campaign, country)
            return noncedPage((nonce) => giftOtherChoicesPage(context(nonce), others, country))
          })
        )
      )
      .handleRaw("choose", ({ path, urlParams, request }) =>
        withGift(request, path.token, "unwrapped", (view, { countries, countryOf }, context) =>
          Effect.gen(function* () {
            const country = countryOf(urlParams.country, view, request)
            const offered = yield* gifts.offer(view.gift, view.campaign, country)
            const choice =
              offered.choices.find((c) => c.productId === urlParams.productId) ??
              (yield* swapChoiceOf(view, country, urlParams.productId))
            if (choice === undefined) {
              return offerPage(context, offered, country, allowsSwap(view.campaign), 422)
            }
            const values = {
              firstName: view.recipient.firstName ?? "",
              lastName: view.recipient.lastName ?? "",
              email: view.recipient.email ?? "",
              phone: view.recipient.mobilePhone ?? "",
              country
            }
            return noncedPage((nonce) => claimFormPage(context(nonce), choice, countries, country, { values }))
          })
        )
      )
      .handle("language", ({ path, payload }) =>
        Effect.gen(function* () {
          const language = supportedLanguage(payload.language)
          const back = HttpServerResponse.redirect(switcherReturn(path.token, payload.back), {
            status: 303,
            headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
          })
          // A language the page does not offer changes nothing.
          if (language === undefined) return back
          yield* gifts.pickLanguage(path.token, language)
          return HttpServerResponse.unsafeSetCookie(back, languageCookie, language, {
            path: "/g",
            maxAge: Duration.days(365),
            httpOnly: true,
            sameSite: "lax",
            secure: secureCookie
          })
        })
      )
      .handle("thankYou", ({ path, payload, request }) =>
        Effect.gen(function* () {
          const framing = framingOf(request, path.token)
          const found = yield* gifts.byToken(path.token)
          if (Option.isNone(found)) return gone(framing.frame, "unknown")
          const { status } = found.value
          if (status === "expired" || status === "cancelled") return gone(framing.frame, status)
          const written = yield* Effect.either(gifts.writeThankYou(found.value, payload.message))
          if (Either.isRight(written)) {
            return HttpServerResponse.redirect(`/g/${encodeURIComponent(path.token)}?note=sent#thank-you`, {
              status: 303,
              headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
            })
          }
          const refusal = written.left
          if (refusal._tag === "ThankYouNoteClosed" && refusal.reason === "not-claimed") {
            return noncedPage((nonce) => giftNoteRefusedPage(framing.frame(nonce)), 422)
          }
          // The claimed page again: the draft with its problem, or the note as it stands once it can no longer change.
          const view = yield* gifts.visit(path.token, "unwrapped")
          if (Option.isNone(view)) return gone(framing.frame, "unknown")
          const thankYou: Omit<ThankYouState, "note" | "editable"> =
            refusal._tag === "InvalidRequest"
              ? { draft: payload.message, error: { kind: "field", message: noteProblem(framing.tr, payload.message) } }
              : { error: { kind: "closed", message: framing.tr.t("note.locked") } }
          return yield* claimedPage(framing, view.value, view.value.gift, thankYou, 422)
        })
      )
      .handle("status", ({ path, request }) =>
        Effect.gen(function* () {
          const gift = yield* gifts.byToken(path.token)
          if (Option.isNone(gift) || gift.value.status !== "claimed") {
            return yield* new NotFound({ message: "No claimed gift has this link." })
          }
          return deliveryOf(yield* orderOf(gift.value), framingOf(request, path.token).tr)
        })
      )
      .handle("claim", ({ path, payload, request }) =>
        withGift(request, path.token, "unwrapped", (view, { countries, countryOf }, context) =>
          Effect.gen(function* () {
            const framing = framingOf(request, path.token)
            const country = countryOf(payload.country, view, request)
            // What the gift offers there, or the other gift it is swapped for (the claim checks its own): is it digital.
            const offered = yield* gifts.offer(view.gift, view.campaign, country)
            const chosen =
              offered.choices.find((c) => c.productId === payload.productId) ??
              offered.choices.find((c) => c.variants.some((v) => v.id === payload.variantId)) ??
              (yield* swapChoiceOf(view, country, payload.productId))
            // The form again with its problems.
            const again = (problems: ReadonlyArray<ClaimProblem>) =>
              Effect.succeed(
                chosen === undefined
                  ? offerPage(context, offered, country, allowsSwap(view.campaign), 422)
                  : noncedPage(
                      (nonce) =>
                        claimFormPage(context(nonce), chosen, countries, country, {
                          values: { ...payload, country },
                          problems
                        }),
                      422
                    )
              )
            const decoded =
              chosen?.digital === true ? digitalClaimOf(payload, country) : shippedClaimOf(payload, country)
            if (Either.isLeft(decoded)) return yield* again(formProblems(framing.tr, decoded.left))
            const claimed = yield* Effect.either(gifts.claimByRecipient(view.gift, decoded.right))
            if (Either.isRight(claimed)) return yield* claimedPage(framing, view, claimed.right.gift)
            // Claimed meanwhile (a second tab, a double submit): the claim that won is the page to show.
            if (claimed.left._tag === "GiftClosed" && claimed.left.status === "claimed") {
              const now = yield* gifts.visit(view.gift.token, "unwrapped")
              if (Option.isSome(now)) return yield* claimedPage(framing, now.value, now.value.gift)
            }
            return yield* again(refusalProblems(framing.tr, claimed.left, { sender: view.sender, country }))
          })
        )
      )
  })
)
