import { describe, expect, it } from "@effect/vitest"
import { type MessageFormatElement, parse, TYPE } from "@formatjs/icu-messageformat-parser"
import {
  acceptedLanguage,
  giftLanguages,
  giftMessages,
  messageLanguage,
  pageLanguage
} from "../../src/domain/company/GiftLanguages.js"

/**
 * The gift page's languages (docs/decisions/0074-gift-page-languages.md): every message of the English source exists
 * in every language, no language has a message the source lacks, each parses as ICU MessageFormat and uses exactly the
 * source's values (a translation that drops `{link}` would send an e-mail without its link); and which language a
 * reader gets.
 */

/** The values a message uses, with how it formats each (`date`, `number`, `select`, or plain). */
const argumentsOf = (elements: ReadonlyArray<MessageFormatElement>, into = new Map<string, string>()) => {
  for (const element of elements) {
    if (element.type === TYPE.argument) into.set(element.value, "plain")
    if (element.type === TYPE.date || element.type === TYPE.time) into.set(element.value, "date")
    if (element.type === TYPE.number) into.set(element.value, "number")
    if (element.type === TYPE.select || element.type === TYPE.plural) {
      into.set(element.value, element.type === TYPE.select ? "select" : "plural")
      for (const option of Object.values(element.options)) argumentsOf(option.value, into)
    }
    if (element.type === TYPE.tag) argumentsOf(element.children, into)
  }
  return into
}

const source = giftMessages.en
const keys = Object.keys(source).sort()

describe("the gift page's messages", () => {
  it.each(giftLanguages.filter((language) => language !== "en"))(
    "%s has every key of English, and no other",
    (language) => {
      expect(Object.keys(giftMessages[language]).sort()).toEqual(keys)
    }
  )

  it.each(giftLanguages)("every %s message parses and uses the English one's values, formatted alike", (language) => {
    const messages = giftMessages[language] as Record<string, string>
    for (const key of keys) {
      const message = messages[key]!
      expect(message.trim(), `${language} ${key}`).not.toBe("")
      const expected = argumentsOf(parse((source as Record<string, string>)[key]!))
      expect(argumentsOf(parse(message)), `${language} ${key}`).toEqual(expected)
    }
  })

  it("each language's messages differ from English's (none left untranslated), but the few spelt alike", () => {
    const alike: Record<string, ReadonlyArray<string>> = { es: ["field.error"] }
    for (const language of giftLanguages.filter((l) => l !== "en")) {
      const messages = giftMessages[language] as Record<string, string>
      // Short words may be the same in both ("Options", "E-Mail"); a longer one unchanged is a miss.
      const same = keys.filter(
        (key) => messages[key] === (source as Record<string, string>)[key] && messages[key]!.length > 10
      )
      expect(same, language).toEqual(alike[language] ?? [])
    }
  })
})

describe("which language a reader gets", () => {
  it.each([
    ["fr-FR,fr;q=0.9,en;q=0.8", "fr"],
    ["fr-CA", "fr"],
    ["de-AT;q=0.5, es-MX;q=0.9", "es"],
    ["pt-PT", "pt-BR"],
    ["PT-br", "pt-BR"],
    ["ja-JP", "ja"],
    ["en-GB,de;q=0.1", "en"],
    ["zh-CN, ko;q=0.8, de;q=0.3", "de"],
    ["de;q=0, fr;q=0.2", "fr"],
    ["*", undefined],
    ["zh-CN", undefined],
    ["", undefined]
  ])("Accept-Language %j → %s", (header, expected) => {
    expect(acceptedLanguage(header)).toBe(expected)
  })

  it("the switcher's choice wins over the browser's, unless it is no language the page has", () => {
    expect(pageLanguage("ja", "fr-FR")).toBe("ja")
    expect(pageLanguage("xx", "fr-FR")).toBe("fr")
    expect(pageLanguage(undefined, undefined)).toBe("en")
  })

  it("an e-mail is in the language picked, else the recipient's country's, else English", () => {
    expect(messageLanguage("de", "FR")).toBe("de")
    expect(messageLanguage(null, "fr")).toBe("fr")
    expect(messageLanguage(null, "BR")).toBe("pt-BR")
    expect(messageLanguage(null, "MX")).toBe("es")
    expect(messageLanguage(null, "JP")).toBe("ja")
    expect(messageLanguage(null, "GB")).toBe("en")
    expect(messageLanguage(null, null)).toBe("en")
  })
})
