import { createIntl, createIntlCache, type IntlShape } from "@formatjs/intl"
import {
  type GiftLanguage,
  type GiftMessageKey,
  giftLanguages,
  giftMessages
} from "../../domain/company/GiftLanguages.js"

/**
 * The gift page's, e-mails' and texts' words in one language (docs/decisions/0074-gift-page-languages.md): its
 * messages formatted with ICU MessageFormat (`@formatjs/intl`), dates and numbers through `Intl` in that locale.
 */

/** Formats one language's messages: text, dates (in UTC, the day a gift's expiry falls on there), country names. */
export interface GiftTranslator {
  readonly language: GiftLanguage
  /** The message `key`, with `values` in it, as plain text (the page escapes it). */
  readonly t: (key: GiftMessageKey, values?: Readonly<Record<string, string | number | Date>>) => string
  /** A country's name in this language (its code where `Intl` has none). */
  readonly countryName: (code: string) => string
  /** Sorts by this language's collation. */
  readonly compare: (a: string, b: string) => number
}

const cache = createIntlCache()

const make = (language: GiftLanguage): GiftTranslator => {
  const intl: IntlShape<string> = createIntl(
    { locale: language, messages: giftMessages[language], timeZone: "UTC", defaultLocale: "en" },
    cache
  )
  const regions = new Intl.DisplayNames([language], { type: "region", fallback: "code" })
  const collator = new Intl.Collator(language)
  return {
    language,
    t: (key, values) => intl.formatMessage({ id: key }, values) as string,
    countryName: (code) => regions.of(code) ?? code,
    compare: collator.compare
  }
}

const translators = Object.fromEntries(giftLanguages.map((language) => [language, make(language)])) as Record<
  GiftLanguage,
  GiftTranslator
>

/** The translator of a language (made once). */
export const translatorFor = (language: GiftLanguage): GiftTranslator => translators[language]
