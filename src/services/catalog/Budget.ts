/**
 * The `budget` prose of `GET /v1/search` (docs/decisions/0022-search.md), parsed into a price range in integer minor
 * units.
 *
 * Pure: no I/O, no services, no configuration. `Intl` supplies the currency data (ISO codes, minor-unit
 * counts, symbols, English names), so the parser follows the runtime's ICU data (Node ships full ICU).
 *
 * ## What is recognised (case-insensitive; extra spaces and `, . ; : ! ? ( ) ' "` are ignored)
 * - **Upper bounds** (`kind: "max"`): under, below, less than, lower than, cheaper than, up to, upto,
 *   no more than, not more than, not over, at most, within, max, maximum, `<`, `<=`, `≤`; and after the
 *   amount: max, maximum, at most, tops, or less, or under, or below, and under, and below, or cheaper.
 * - **Lower bounds** (`kind: "min"`): over, above, more than, greater than, higher than, no less than,
 *   not less than, at least, min, minimum, starting at, starting from, upwards of, from, `>`, `>=`, `≥`;
 *   and after the amount: `+`, plus, or more, or over, or above, or higher, and up, and above, and over,
 *   and upwards, at least, min, minimum.
 * - **Ranges** (`kind: "between"`): between X and Y, between X to Y, X-Y, X – Y (en/em dash), X to Y,
 *   X through Y, from X to Y, from X-Y; and one lower plus one upper bound: "over 20 and under 50",
 *   "at least 20 but no more than 50".
 * - **Approximations** (`kind: "around"`, ±20 % of the amount, each side rounded half up in minor units):
 *   around, about, roughly, approximately, approx, circa, close to, `~`, `≈`; after the amount: ish, -ish,
 *   or so, give or take. An approximation word before a range ("about 20-30") just gives the range.
 * - **Exact** (`kind: "exact"`, min = max): exactly X, X exactly.
 * - **Fillers** that are skipped: budget, my, is, of, a, an, the, price, priced, spend, spending, each, per,
 *   gift, gifts, total, in, for, something, somewhere. Any other word is an error: the parser never guesses
 *   around a word it does not know, so "not more than" can never be misread as "more than".
 *
 * ## Decisions
 * - **A bare amount ("50") is an upper bound** (`kind: "max"`, same as "up to 50"). A budget is what the
 *   shopper is willing to spend, so a ceiling is the usual meaning; "about 50" would show 60-unit gifts to
 *   someone who said 50, which breaks the budget, while a ceiling never does. Shoppers who mean "about"
 *   can say so.
 * - **Reversed ranges are swapped**: "from 80 to 20" and "80-20" give 20..80 (a range names two ends; the
 *   order is a slip, not a contradiction). Contradictory bounds ("over 50 and under 20") are rejected.
 * - **Zero and negatives**: a leading minus ("under -5") is rejected. An upper limit, an approximation and
 *   an exact amount must be above zero ("under 0" is rejected); a lower bound may be zero ("0-50", "over 0").
 * - **Numbers**: digits with a dot for decimals and commas for thousands in groups of three (`40`, `40.50`,
 *   `1,200`, `1,200.50`, `.5`), optionally with a `k` suffix (`1k`, `2.5k` = 2,500). Small number words
 *   are read too ("fifty", "twenty-five", "a hundred", "one thousand two hundred").
 * - **European decimals are not guessed**: `40,50`, `1.200,50` and `1.200.000` are rejected with a message
 *   asking for `1,200.50` style. `1.200` (one to three digits, a dot, exactly three digits) is ambiguous
 *   (1.2 or 1200?) and is rejected unless the currency itself has three decimals (KWD, BHD, …).
 * - **Rounding**: amounts convert to minor units with `Intl.NumberFormat(undefined, {style: "currency",
 *   currency}).resolvedOptions().maximumFractionDigits` digits (USD 2, JPY 0, KWD 3), rounding half up
 *   ("$0.125" → 13, "¥5000.5" → 5001). Results are integers, never floats.
 * - **Currencies**: ISO codes before or after the amount, attached or not (`50 EUR`, `EUR 50`, `usd50`,
 *   case-insensitive; the codes that are also English words, such as ALL, TOP, TRY, PEN, must be written
 *   in capitals). `€` EUR, `₹` INR, `US$`, `C$`/`CA$`, `A$`/`AU$`, `NZ$`, `HK$`, `S$`, `NT$`, `MX$`, `R$`,
 *   "euro(s)", "yen", "yuan"/"rmb", "quid". Shared symbols and words follow one rule: **they mean the
 *   context currency when that currency uses them, else a default**:
 *   - `$` → the context currency if its symbol contains `$` (CAD, AUD, NZD, SGD, HKD, TWD, MXN, ARS, CLP,
 *     COP, BRL's `R$`, …), else USD;
 *   - "dollar(s)", "buck(s)" → the context currency if it is a dollar (CAD, AUD, …), else USD;
 *   - `¥` → CNY when the context currency is CNY, else JPY ("yen" is always JPY, "yuan" always CNY);
 *   - `£` and "pound(s)" → the context's pound (EGP, GIP, …) if it is one, else GBP;
 *   - "rupee(s)", "rs" → the context's rupee (PKR, LKR, …) if it is one, else INR;
 *   - "franc(s)" → the context's franc if it is one, else CHF;
 *   - `kr`, "krona/kronor/krone/kroner" → the context currency if it is SEK, NOK, DKK or ISK; otherwise the
 *     parser fails and asks for the code (there is no sensible default); "peso(s)" likewise;
 *   - any other currency sign (`₩`, `₪`, `฿`, …) → the context currency if it uses it, else the one
 *     currency whose symbol it is; several → a failure asking for the code.
 *   A symbol plus a code that uses it ("$50 CAD") means the code. Two different currencies fail.
 * - With no currency named, the amounts are in `context.currency` and `currencyNamed` is false.
 */
import { Data, Either } from "effect"

/** How the range came about: an upper bound (also a bare amount), a lower bound, two ends, ±20 %, or one amount. */
export type BudgetKind = "max" | "min" | "between" | "around" | "exact"

export interface BudgetRange {
  /** ISO 4217 code the amounts are in: the currency the prose named, else `context.currency`. */
  readonly currency: string
  /** Whether the prose named `currency` (symbol, code or word). When it differs from the country's, convert. */
  readonly currencyNamed: boolean
  /** Lower bound in minor units of `currency`, inclusive; `undefined` = none. */
  readonly min: number | undefined
  /** Upper bound in minor units of `currency`, inclusive; `undefined` = none. */
  readonly max: number | undefined
  readonly kind: BudgetKind
}

export interface BudgetContext {
  /** The requested country's currency (ISO 4217): used when the prose names none, and to settle `$`, `kr`… */
  readonly currency: string
}

/** The prose could not be read; `message` says what was not understood (the HTTP layer names the field). */
export class BudgetParseError extends Data.TaggedError("BudgetParseError")<{
  readonly message: string
  readonly input: string
}> {}

/** Parses `budget` prose into a range. Never throws. */
export const parseBudget = (prose: string, context: BudgetContext): Either.Either<BudgetRange, BudgetParseError> => {
  const input = typeof prose === "string" ? prose : String(prose)
  try {
    return Either.right(parse(input, context))
  } catch (error) {
    if (error instanceof Failure) return Either.left(new BudgetParseError({ message: error.text, input }))
    throw error
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Internals. Parsing throws `Failure`, caught only by `parseBudget`.

class Failure {
  constructor(readonly text: string) {}
}

const fail = (text: string): never => {
  throw new Failure(text)
}

const HINT = `try "under 50", "20-40", "between €20 and €40" or "around 30"`

// --- currency data from Intl -----------------------------------------------------------------------------------

const cached = <A>(f: (key: string) => A): ((key: string) => A) => {
  const cache = new Map<string, A>()
  return (key) => {
    if (cache.has(key)) return cache.get(key) as A
    const value = f(key)
    cache.set(key, value)
    return value
  }
}

let known: ReadonlySet<string> | undefined
const knownCurrencies = (): ReadonlySet<string> => {
  if (known === undefined) known = new Set(Intl.supportedValuesOf("currency"))
  return known
}

const minorDigits = cached(
  (code) =>
    new Intl.NumberFormat(undefined, { style: "currency", currency: code }).resolvedOptions().maximumFractionDigits ?? 2
)

const narrowSymbol = cached(
  (code) =>
    new Intl.NumberFormat("en", { style: "currency", currency: code, currencyDisplay: "narrowSymbol" })
      .formatToParts(0)
      .find((part) => part.type === "currency")?.value ?? code
)

let displayNames: Intl.DisplayNames | undefined
const englishName = cached((code) => {
  if (displayNames === undefined) displayNames = new Intl.DisplayNames(["en"], { type: "currency" })
  return displayNames.of(code) ?? code
})

// --- currency mentions -----------------------------------------------------------------------------------------

/** A currency named in the prose, resolved against the context. */
interface Mention {
  readonly raw: string
  readonly code: string
  /** Named unambiguously (an ISO code, `€`, "yen", `C$`…), as opposed to settled by the context rule. */
  readonly explicit: boolean
  /** Whether this mention is compatible with `code` ("$" is compatible with CAD). */
  readonly accepts: (code: string) => boolean
}

/** Currencies sharing a symbol or a name, with the one meant when the context currency is not among them. */
interface Family {
  readonly test: (code: string) => boolean
  readonly fallback: string | undefined
}

const bySymbol = (symbol: string, fallback?: string): Family => ({
  test: (code) => narrowSymbol(code).includes(symbol),
  fallback
})

const byName = (suffix: string, fallback?: string): Family => ({
  test: (code) => englishName(code).endsWith(suffix),
  fallback
})

const SYMBOLS = new Map<string, Family>([
  ["$", bySymbol("$", "USD")],
  ["€", bySymbol("€", "EUR")],
  ["£", bySymbol("£", "GBP")],
  ["¥", bySymbol("¥", "JPY")],
  ["₹", bySymbol("₹", "INR")],
  ["₩", bySymbol("₩", "KRW")]
])

const DOLLAR = byName(" Dollar", "USD")
const POUND = byName(" Pound", "GBP")
const RUPEE = byName(" Rupee", "INR")
const FRANC = byName(" Franc", "CHF")
const PESO = byName(" Peso")
const CROWN = bySymbol("kr")

/** Currency words (lowercase); a string is an unambiguous ISO code. */
const CURRENCY_WORDS = new Map<string, Family | string>([
  ["dollar", DOLLAR],
  ["dollars", DOLLAR],
  ["buck", DOLLAR],
  ["bucks", DOLLAR],
  ["euro", "EUR"],
  ["euros", "EUR"],
  ["pound", POUND],
  ["pounds", POUND],
  ["quid", "GBP"],
  ["yen", "JPY"],
  ["yuan", "CNY"],
  ["rmb", "CNY"],
  ["renminbi", "CNY"],
  ["rupee", RUPEE],
  ["rupees", RUPEE],
  ["rs", RUPEE],
  ["franc", FRANC],
  ["francs", FRANC],
  ["peso", PESO],
  ["pesos", PESO],
  ["kr", CROWN],
  ["krona", CROWN],
  ["kronor", CROWN],
  ["krone", CROWN],
  ["kroner", CROWN],
  ["us$", "USD"],
  ["c$", "CAD"],
  ["ca$", "CAD"],
  ["a$", "AUD"],
  ["au$", "AUD"],
  ["nz$", "NZD"],
  ["hk$", "HKD"],
  ["s$", "SGD"],
  ["nt$", "TWD"],
  ["mx$", "MXN"],
  ["r$", "BRL"]
])

/** ISO codes that are also English words: recognised only when written in capitals. */
const WORD_LIKE_CODES = new Set(["all", "top", "try", "cup", "mad", "pen", "bob", "gel", "mop", "sos", "ron", "bam"])

const explicitMention = (raw: string, code: string): Mention => ({
  raw,
  code,
  explicit: true,
  accepts: (other) => other === code
})

const familyMention = (raw: string, family: Family, context: string): Mention => {
  const accepts = (code: string) => code === family.fallback || family.test(code)
  if (family.test(context)) return { raw, code: context, explicit: false, accepts }
  if (family.fallback !== undefined) return { raw, code: family.fallback, explicit: false, accepts }
  const candidates = [...knownCurrencies()].filter(family.test).sort()
  if (candidates.length === 1) return explicitMention(raw, candidates[0])
  if (candidates.length === 0) return fail(`did not understand the currency "${raw}"`)
  const listed = candidates.slice(0, -1).join(", ") + " or " + candidates[candidates.length - 1]
  return fail(`"${raw}" could be ${listed}: write the currency code instead, e.g. "50 ${candidates[0]}"`)
}

/** The one currency of the whole phrase (every amount shares it). */
const resolveCurrency = (mentions: ReadonlyArray<Mention>, context: string): { code: string; named: boolean } => {
  if (mentions.length === 0) return { code: context, named: false }
  const explicitCodes = new Set(mentions.filter((m) => m.explicit).map((m) => m.code))
  const codes = explicitCodes.size > 0 ? explicitCodes : new Set(mentions.map((m) => m.code))
  const conflict = (a: Mention, b: Mention) =>
    fail(`names two currencies: "${a.raw}" (${a.code}) and "${b.raw}" (${b.code}); use one`)
  if (codes.size > 1) {
    const [a, b] = [...codes].map((code) => mentions.find((m) => m.code === code)!)
    return conflict(a, b)
  }
  const code = [...codes][0]
  const chosen = mentions.find((m) => m.code === code)!
  for (const mention of mentions) if (mention.code !== code && !mention.accepts(code)) conflict(mention, chosen)
  return { code, named: true }
}

// --- numbers ---------------------------------------------------------------------------------------------------

/** An exact decimal: `digits / 10^scale`. */
interface Decimal {
  readonly digits: bigint
  readonly scale: number
}

const parseNumber = (text: string, thousands: boolean): { value: Decimal; ambiguous: boolean } => {
  let whole: string
  let fraction: string
  if (/^\d+$/.test(text)) {
    whole = text
    fraction = ""
  } else if (/^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(text) || /^\d*\.\d+$/.test(text)) {
    const [w, f = ""] = text.replace(/,/g, "").split(".")
    whole = w
    fraction = f
  } else {
    return fail(
      `"${text}" is not a number I can read: write decimals with a dot and thousands with commas, e.g. 1,200.50`
    )
  }
  let digits = BigInt((whole + fraction).replace(/^0+(?=\d)/, "") || "0")
  if (thousands) digits *= 1000n
  return {
    value: { digits, scale: fraction.length },
    ambiguous: !thousands && /^[1-9]\d{0,2}\.\d{3}$/.test(text)
  }
}

/** Rounds half up to `digits` decimals and returns the integer count of minor units. */
const toMinor = (value: Decimal, digits: number): bigint => {
  const numerator = value.digits * 10n ** BigInt(digits)
  const denominator = 10n ** BigInt(value.scale)
  return (2n * numerator + denominator) / (2n * denominator)
}

const UNITS = new Map(
  [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen"
  ].map((word, value) => [word, value] as const)
)
const TENS = new Map(
  ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"].map(
    (word, index) => [word, (index + 2) * 10] as const
  )
)

const isDigitWord = (word: string | undefined): boolean => {
  const unit = word === undefined ? undefined : UNITS.get(word)
  return unit !== undefined && unit >= 1 && unit <= 9
}

// --- tokens ----------------------------------------------------------------------------------------------------

interface Span {
  readonly start: number
  readonly end: number
}

type Token =
  | (Span & { readonly t: "num"; readonly value: Decimal; readonly ambiguous: boolean })
  | (Span & { readonly t: "cur"; readonly mention: Mention })
  | (Span & { readonly t: "word"; readonly word: string })

/** What an operator phrase can do, depending on where it stands. */
interface Roles {
  readonly pre?: Bound
  readonly post?: Bound
  readonly from?: true
  readonly between?: true
  readonly sep?: true
  readonly and?: true
  readonly conj?: true
  readonly dash?: true
}

type Bound = "max" | "min" | "around" | "exact"

const phrases = (roles: Roles, ...keys: ReadonlyArray<string>) => keys.map((key) => [key, roles] as const)

const PHRASES = new Map<string, Roles>([
  ...phrases(
    { pre: "max" },
    "under",
    "below",
    "less than",
    "lower than",
    "cheaper than",
    "up to",
    "upto",
    "no more than",
    "not more than",
    "not over",
    "within",
    "<",
    "<="
  ),
  ...phrases({ pre: "max", post: "max" }, "max", "maximum", "at most"),
  ...phrases({ post: "max" }, "tops", "or less", "or under", "or below", "and under", "and below", "or cheaper"),
  ...phrases(
    { pre: "min" },
    "over",
    "above",
    "more than",
    "greater than",
    "higher than",
    "no less than",
    "not less than",
    "starting at",
    "starting from",
    "upwards of",
    ">",
    ">="
  ),
  ...phrases({ pre: "min", post: "min" }, "min", "minimum", "at least"),
  ...phrases(
    { post: "min" },
    "+",
    "plus",
    "or more",
    "or over",
    "or above",
    "or higher",
    "and up",
    "and above",
    "and over",
    "and upwards"
  ),
  ...phrases({ pre: "around" }, "around", "about", "roughly", "approximately", "approx", "circa", "close to", "~"),
  ...phrases({ post: "around" }, "ish", "- ish", "or so", "give or take"),
  ...phrases({ pre: "exact", post: "exact" }, "exactly"),
  ...phrases({ from: true }, "from"),
  ...phrases({ between: true }, "between"),
  ...phrases({ sep: true }, "to", "through", "thru"),
  ...phrases({ sep: true, dash: true }, "-"),
  ...phrases({ and: true, conj: true }, "and"),
  ...phrases({ conj: true }, "but"),
  ...phrases(
    {},
    "budget",
    "my",
    "is",
    "of",
    "a",
    "an",
    "the",
    "price",
    "priced",
    "spend",
    "spending",
    "each",
    "per",
    "gift",
    "gifts",
    "total",
    "in",
    "for",
    "something",
    "somewhere"
  )
])
const LONGEST_PHRASE = 3

const KEYWORDS = new Set([
  ...[...PHRASES.keys()].flatMap((key) => key.split(" ")),
  ...UNITS.keys(),
  ...TENS.keys(),
  "hundred",
  "thousand"
])

const NUMBER = /(?:\d[\d.,]*\d|\d|\.\d+)(k(?!\p{L}))?/iuy
const WORD = /\p{L}+/uy
const OPERATOR = /<=|>=|[<>≤≥~≈〜+\-‐‑‒–—−]/y
const CURRENCY_SIGN = /\p{Sc}/uy
const IGNORED = /[\s,.;:!?()'"]+/y

const OPERATORS = new Map([
  ["≤", "<="],
  ["≥", ">="],
  ["≈", "~"],
  ["〜", "~"]
])

const at = (pattern: RegExp, text: string, index: number): RegExpExecArray | null => {
  pattern.lastIndex = index
  return pattern.exec(text)
}

const lex = (text: string, context: string): Array<Token> => {
  const tokens: Array<Token> = []
  const push = (token: Token) => {
    tokens.push(token)
    return token.end
  }
  /** Reads one token (or ignored run) at `start` and returns where the next one begins. */
  const step = (start: number): number => {
    const number = at(NUMBER, text, start)
    if (number !== null) {
      const thousands = number[1] !== undefined
      const { value, ambiguous } = parseNumber(thousands ? number[0].slice(0, -1) : number[0], thousands)
      return push({ t: "num", value, ambiguous, start, end: start + number[0].length })
    }
    const ignored = at(IGNORED, text, start)
    if (ignored !== null) return start + ignored[0].length
    const letters = at(WORD, text, start)
    if (letters !== null) {
      const written = letters[0]
      const word = written.toLowerCase()
      const end = start + written.length
      const prefixedDollar = text[end] === "$" ? CURRENCY_WORDS.get(word + "$") : undefined
      if (prefixedDollar !== undefined) {
        const mention = mentionOf(text.slice(start, end + 1), prefixedDollar, context)
        return push({ t: "cur", mention, start, end: end + 1 })
      }
      if (KEYWORDS.has(word)) return push({ t: "word", word, start, end })
      const named = CURRENCY_WORDS.get(word)
      if (named !== undefined) return push({ t: "cur", mention: mentionOf(written, named, context), start, end })
      const code = word.toUpperCase()
      if (knownCurrencies().has(code) && (!WORD_LIKE_CODES.has(word) || written === code)) {
        return push({ t: "cur", mention: explicitMention(written, code), start, end })
      }
      return push({ t: "word", word, start, end })
    }
    const operator = at(OPERATOR, text, start)
    if (operator !== null) {
      const word = /^[‐‑‒–—−-]$/.test(operator[0]) ? "-" : (OPERATORS.get(operator[0]) ?? operator[0])
      return push({ t: "word", word, start, end: start + operator[0].length })
    }
    const sign = at(CURRENCY_SIGN, text, start)?.[0]
    if (sign !== undefined) {
      const family = SYMBOLS.get(sign) ?? { test: (code: string) => narrowSymbol(code) === sign, fallback: undefined }
      return push({ t: "cur", mention: familyMention(sign, family, context), start, end: start + sign.length })
    }
    return fail(`did not understand "${String.fromCodePoint(text.codePointAt(start)!)}" (${HINT})`)
  }
  for (let index = 0; index < text.length; ) index = step(index)
  return tokens
}

const mentionOf = (raw: string, named: Family | string, context: string): Mention =>
  typeof named === "string" ? explicitMention(raw, named) : familyMention(raw, named, context)

/** Turns runs of number words ("twenty-five", "a hundred", "one thousand two hundred") into numbers. */
const readNumberWords = (tokens: ReadonlyArray<Token>): Array<Token> => {
  const out: Array<Token> = []
  const wordAt = (j: number) => {
    const token = tokens[j]
    return token?.t === "word" ? token.word : undefined
  }
  let i = 0
  while (i < tokens.length) {
    let total = 0
    let current = 0
    let last: "none" | "unit" | "tens" | "hundred" | "thousand" = "none"
    let j = i
    for (;;) {
      const word = wordAt(j)
      if (word === undefined) break
      const unit = UNITS.get(word)
      const tens = TENS.get(word)
      const fresh = last === "none" || last === "hundred" || last === "thousand"
      if ((word === "a" || word === "an") && last === "none" && /^(hundred|thousand)$/.test(wordAt(j + 1) ?? "")) {
        current = 1
        last = "unit"
      } else if (unit !== undefined && (fresh || (last === "tens" && unit >= 1 && unit <= 9))) {
        current += unit
        last = "unit"
      } else if (tens !== undefined && fresh) {
        current += tens
        last = "tens"
      } else if (word === "-" && last === "tens" && isDigitWord(wordAt(j + 1))) {
        // the hyphen of "twenty-five": the unit comes next
      } else if (word === "hundred" && (last === "unit" || last === "tens") && current < 100) {
        current *= 100
        last = "hundred"
      } else if (word === "thousand" && last !== "none" && last !== "thousand" && total === 0) {
        total = current * 1000
        current = 0
        last = "thousand"
      } else {
        break
      }
      j++
    }
    if (j > i) {
      out.push({
        t: "num",
        value: { digits: BigInt(total + current), scale: 0 },
        ambiguous: false,
        start: tokens[i].start,
        end: tokens[j - 1].end
      })
      i = j
    } else {
      out.push(tokens[i])
      i++
    }
  }
  return out
}

// --- grammar ---------------------------------------------------------------------------------------------------

type Item =
  | (Span & { readonly t: "amount"; readonly value: Decimal; readonly ambiguous: boolean })
  | (Span & { readonly t: "op"; readonly roles: Roles })

type Clause =
  | { readonly t: "bound"; readonly bound: Bound; readonly bare: boolean; readonly amount: Item & { t: "amount" } }
  | { readonly t: "range"; readonly a: Item & { t: "amount" }; readonly b: Item & { t: "amount" } }

const parse = (prose: string, context: BudgetContext): BudgetRange => {
  const contextCode = typeof context?.currency === "string" ? context.currency.toUpperCase() : ""
  if (!/^[A-Z]{3}$/.test(contextCode) || !knownCurrencies().has(contextCode)) {
    return fail(`unknown currency "${String(context?.currency)}"`)
  }
  const text = prose.normalize("NFKC").replace(/\s+/g, " ").trim()
  if (text === "") return fail(`the budget is empty (${HINT})`)
  const raw = (span: Span) => text.slice(span.start, span.end)

  const tokens = readNumberWords(lex(text, contextCode))
  const mentions = tokens.flatMap((token) => (token.t === "cur" ? [token.mention] : []))
  const rest = tokens.filter((token) => token.t !== "cur")

  // Operator phrases, longest first; fillers are dropped; any other word fails.
  const items: Array<Item> = []
  for (let i = 0; i < rest.length; ) {
    const token = rest[i]
    if (token.t === "num") {
      items.push({ t: "amount", value: token.value, ambiguous: token.ambiguous, start: token.start, end: token.end })
      i++
      continue
    }
    let matched = false
    for (let length = Math.min(LONGEST_PHRASE, rest.length - i); length >= 1 && !matched; length--) {
      const words = rest.slice(i, i + length)
      if (!words.every((w) => w.t === "word")) continue
      const key = words.map((w) => (w as { word: string }).word).join(" ")
      const roles = PHRASES.get(key)
      if (roles === undefined) continue
      // "50 and under" is one suffix, but in "over 20 and under 50" the "and" joins two bounds.
      if (key.startsWith("and ") && rest.slice(i + length).some((t) => t.t === "num")) continue
      matched = true
      if (Object.keys(roles).length > 0) items.push({ t: "op", roles, start: token.start, end: words[length - 1].end })
      i += length
    }
    if (!matched) return fail(`did not understand "${raw(token)}" (${HINT})`)
  }

  // A dash right before an amount, with no amount before it, is a minus sign.
  items.forEach((item, k) => {
    const next = items[k + 1]
    const previous = items[k - 1]
    if (item.t === "op" && item.roles.dash && next?.t === "amount" && (previous === undefined || previous.t === "op")) {
      fail(`amounts cannot be negative ("${text.slice(item.start, next.end)}")`)
    }
  })

  let i = 0
  const peek = (): Item | undefined => items[i]
  const amountAfter = (op: Item): Item & { t: "amount" } => {
    const next = items[i]
    if (next?.t !== "amount") return fail(`"${raw(op)}" needs an amount after it, as in "${raw(op)} 50"`)
    i++
    return next
  }
  const rangeTail = (a: Item & { t: "amount" }): Clause | undefined => {
    const sep = peek()
    if (sep?.t !== "op" || !sep.roles.sep) return undefined
    i++
    const b = items[i]
    if (b?.t !== "amount") return fail(`"${text.slice(a.start, sep.end)}" needs a second amount after it`)
    i++
    return { t: "range", a, b }
  }
  const clause = (): Clause => {
    const item = peek()
    if (item === undefined) return fail(`no amount found (${HINT})`)
    if (item.t === "amount") {
      i++
      const range = rangeTail(item)
      if (range !== undefined) return range
      const post = peek()
      if (post?.t === "op" && post.roles.post !== undefined) {
        i++
        return { t: "bound", bound: post.roles.post, bare: false, amount: item }
      }
      return { t: "bound", bound: "max", bare: true, amount: item }
    }
    const roles = item.roles
    i++
    if (roles.between) {
      const a = amountAfter(item)
      const sep = peek()
      const b = items[i + 1]
      if (sep?.t !== "op" || !(sep.roles.sep || sep.roles.and) || b?.t !== "amount") {
        return fail(`"${raw(item)}" needs two amounts, as in "between 20 and 40"`)
      }
      i += 2
      return { t: "range", a, b }
    }
    if (roles.from) {
      const a = amountAfter(item)
      return rangeTail(a) ?? { t: "bound", bound: "min", bare: false, amount: a }
    }
    if (roles.pre !== undefined) {
      const a = amountAfter(item)
      const range = roles.pre === "around" ? rangeTail(a) : undefined
      return range ?? { t: "bound", bound: roles.pre, bare: false, amount: a }
    }
    return fail(`did not understand "${raw(item)}" here (${HINT})`)
  }
  const clauseText = (start: number, end: number) => text.slice(items[start].start, items[end - 1].end)

  const first = clause()
  const firstEnd = i
  let second: Clause | undefined
  if (i < items.length) {
    const conj = peek()
    if (conj?.t === "op" && conj.roles.conj) i++
    if (i >= items.length) return fail(`nothing follows "${clauseText(firstEnd, i)}"`)
    const secondStart = i
    second = clause()
    const isBound = (c: Clause, bound: Bound) => c.t === "bound" && !c.bare && c.bound === bound
    const pair = (isBound(first, "min") && isBound(second, "max")) || (isBound(first, "max") && isBound(second, "min"))
    if (!pair) {
      return fail(
        `cannot combine "${clauseText(0, firstEnd)}" with "${clauseText(secondStart, i)}": ` +
          `give one amount, a range, or a lower and an upper bound as in "over 20 and under 50"`
      )
    }
  }
  if (i < items.length) return fail(`did not understand "${clauseText(i, items.length)}" (${HINT})`)

  // Amounts, in the phrase's one currency.
  const currency = resolveCurrency(mentions, contextCode)
  const digits = minorDigits(currency.code)
  const minor = (amount: Item & { t: "amount" }): bigint => {
    if (amount.ambiguous && digits !== 3) {
      const written = raw(amount)
      return fail(
        `"${written}" is ambiguous (a thousands separator or a decimal point?): ` +
          `write ${written.replace(".", "")} or ${written.slice(0, -1)}`
      )
    }
    return toMinor(amount.value, digits)
  }
  const safe = (value: bigint): number => {
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) return fail(`"${text}" is too large`)
    return Number(value)
  }
  const positive = (value: bigint, what: string, span: Span): bigint =>
    value > 0n ? value : fail(`${what} must be more than zero (got "${raw(span)}")`)
  const result = (kind: BudgetKind, min: bigint | undefined, max: bigint | undefined): BudgetRange => ({
    currency: currency.code,
    currencyNamed: currency.named,
    min: min === undefined ? undefined : safe(min),
    max: max === undefined ? undefined : safe(max),
    kind
  })

  if (second !== undefined && first.t === "bound" && second.t === "bound") {
    const [lower, upper] = first.bound === "min" ? [first, second] : [second, first]
    const min = minor(lower.amount)
    const max = positive(minor(upper.amount), "the upper limit", upper.amount)
    if (min > max) {
      return fail(`the lower limit ("${raw(lower.amount)}") is above the upper limit ("${raw(upper.amount)}")`)
    }
    return result("between", min, max)
  }
  if (first.t === "range") {
    const a = minor(first.a)
    const b = minor(first.b)
    const [min, max] = a <= b ? [a, b] : [b, a]
    positive(max, "the top of the range", { start: first.a.start, end: first.b.end })
    return result("between", min, max)
  }
  const amount = minor(first.amount)
  switch (first.bound) {
    case "max":
      return result("max", undefined, positive(amount, "the upper limit", first.amount))
    case "min":
      return result("min", amount, undefined)
    case "exact":
      return result("exact", positive(amount, "the amount", first.amount), amount)
    case "around": {
      const centre = positive(amount, "the approximate amount", first.amount)
      return result("around", (8n * centre + 5n) / 10n, (12n * centre + 5n) / 10n)
    }
  }
}
