import { de } from "./giftMessages/de.js"
import { en, type GiftMessages } from "./giftMessages/en.js"
import { es } from "./giftMessages/es.js"
import { fr } from "./giftMessages/fr.js"
import { ja } from "./giftMessages/ja.js"
import { ptBR } from "./giftMessages/pt-BR.js"

/**
 * The languages of the gift page, its e-mails and its texts (docs/decisions/0074-gift-page-languages.md): which
 * one a reader gets, and each one's messages (ICU MessageFormat, formatted by services/company/GiftTranslator.ts).
 */

export const giftLanguages = ["en", "fr", "de", "es", "pt-BR", "ja"] as const
export type GiftLanguage = (typeof giftLanguages)[number]

export const giftMessages: Readonly<Record<GiftLanguage, GiftMessages>> = {
  en,
  fr,
  de,
  es,
  "pt-BR": ptBR,
  ja
}

export type GiftMessageKey = keyof GiftMessages

/** Each language by its own name, as the switcher lists it. */
export const languageNames: Readonly<Record<GiftLanguage, string>> = {
  en: "English",
  fr: "Français",
  de: "Deutsch",
  es: "Español",
  "pt-BR": "Português (Brasil)",
  ja: "日本語"
}

/** The cookie that keeps the language a reader picked with the switcher (path `/g`, a year). */
export const languageCookie = "ribbon_gift_language"

/** A supported language by its tag, matched without regard to case (`PT-br` is `pt-BR`). */
export const supportedLanguage = (tag: string): GiftLanguage | undefined =>
  giftLanguages.find((language) => language.toLowerCase() === tag.trim().toLowerCase())

/**
 * The language tags of an `Accept-Language` header (RFC 9110 §12.5.4), most preferred first: by `q`, ties in the
 * header's order; entries with `q=0` (refused) and the wildcard left out.
 */
export const acceptedTags = (acceptLanguage: string | undefined): ReadonlyArray<string> =>
  (acceptLanguage ?? "")
    .split(",")
    .map((entry, index) => {
      const [tag = "", ...params] = entry.trim().split(";")
      const q = Number(
        params
          .find((p) => p.trim().startsWith("q="))
          ?.trim()
          .slice(2) ?? "1"
      )
      return { tag: tag.trim(), q: Number.isNaN(q) ? 0 : q, index }
    })
    .filter((entry) => entry.tag !== "" && entry.tag !== "*" && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((entry) => entry.tag)

/**
 * The language an `Accept-Language` header asks for: its first tag we have (`pt-BR`), else whose primary language
 * we have (`fr-CA` → `fr`, `pt-PT` → `pt-BR`, our one Portuguese). Undefined when none is ours.
 */
export const acceptedLanguage = (acceptLanguage: string | undefined): GiftLanguage | undefined =>
  acceptedTags(acceptLanguage)
    .map(
      (tag) =>
        supportedLanguage(tag) ??
        giftLanguages.find((language) => language.split("-")[0] === tag.split("-")[0]?.toLowerCase())
    )
    .find((language) => language !== undefined)

/** The page's language: the one picked with the switcher (its cookie), else the browser's, else English. */
export const pageLanguage = (picked: string | undefined, acceptLanguage: string | undefined): GiftLanguage =>
  (picked === undefined ? undefined : supportedLanguage(picked)) ?? acceptedLanguage(acceptLanguage) ?? "en"

/** Where a language is the one most people read: the first e-mail's language when nothing else is known. */
const countryLanguages: Readonly<Record<string, GiftLanguage>> = {
  ...Object.fromEntries(["FR", "BE", "LU", "MC", "SN", "CI"].map((c) => [c, "fr"])),
  ...Object.fromEntries(["DE", "AT", "CH", "LI"].map((c) => [c, "de"])),
  ...Object.fromEntries(
    [
      "ES",
      "MX",
      "AR",
      "CO",
      "CL",
      "PE",
      "VE",
      "EC",
      "GT",
      "CU",
      "BO",
      "DO",
      "HN",
      "PY",
      "SV",
      "NI",
      "CR",
      "PA",
      "UY"
    ].map((c) => [c, "es"])
  ),
  ...Object.fromEntries(["BR", "PT", "AO", "MZ"].map((c) => [c, "pt-BR"])),
  JP: "ja"
}

/**
 * The language of a gift's e-mails and texts: the one its recipient picked on the page, else the one most read in
 * the recipient's country, else English.
 */
export const messageLanguage = (picked: string | null, country: string | null): GiftLanguage =>
  (picked === null ? undefined : supportedLanguage(picked)) ??
  (country === null ? undefined : countryLanguages[country.toUpperCase()]) ??
  "en"
