import { runInNewContext } from "node:vm"
import { describe, expect, it } from "@effect/vitest"
import { type CardInput, cardMessages } from "../../../src/domain/checkout/Cards.js"
import { type CheckoutStatus, terminalStatuses } from "../../../src/domain/checkout/Checkout.js"
import {
  checkoutStatusLabels,
  type PayPageView,
  type PayProblemKind,
  paymentStatusPage,
  payPage,
  payProblemPage,
  payProblems
} from "../../../src/http/checkout/payPage.js"
import { noncedPageCsp } from "../../../src/http/pages/html.js"

const hostile = `<script>alert("x")</script>`
const escapedHostile = `&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;`

const view: PayPageView = {
  checkoutId: "0123456789abcdef01234567",
  token: `tok"en<&`,
  postUrl: "/pay/0123456789abcdef01234567",
  totalDisplay: "$42.10",
  currency: "USD",
  items: [
    {
      productTitle: hostile,
      variantTitle: "Large & blue",
      imageUrl: "https://img.example.com/a.png?x=1&y=2",
      quantity: 2,
      amountDisplay: "$30.00"
    },
    {
      productTitle: "Candle",
      variantTitle: "Default",
      imageUrl: null,
      quantity: 1,
      amountDisplay: "$12.10"
    },
    {
      productTitle: "Sneaky",
      variantTitle: "Default",
      imageUrl: "javascript:alert(1)",
      quantity: 1,
      amountDisplay: "$0.00"
    }
  ],
  breakdown: { item: "$30.00", shipping: "$5.00", duties: "$3.10", serviceFee: "$4.00", total: "$42.10" },
  recipient: { firstName: hostile, lastName: "O'Hara", email: "ada@example.com", phone: "+15551234567" },
  address: {
    address1: "1 Main St",
    address2: null,
    city: "Springfield",
    provinceCode: "IL",
    postalCode: "62701",
    countryCode: "US",
    countryName: "United States"
  },
  shippingRequired: true,
  expiresAt: "2026-05-15T12:30:00.000Z"
}

/** The opening tag of the element with this id. */
const tagWithId = (html: string, id: string) => {
  const match = new RegExp(`<[a-z]+ [^>]*id="${id}"[^>]*>`).exec(html)
  if (match === null) throw new Error(`no element with id ${id}`)
  return match[0]
}

const count = (html: string, needle: string) => html.split(needle).length - 1

describe("payPage", () => {
  const html = payPage(view)

  it("is a full HTML document with the form posting the token to postUrl", () => {
    expect(html.startsWith("<!doctype html>")).toBe(true)
    expect(html).toContain('<html lang="en">')
    expect(html).toContain('<meta name="referrer" content="no-referrer">')
    expect(html).toMatch(/<form method="post" action="\/pay\/0123456789abcdef01234567"[^>]*>/)
    expect(html).toContain('<input type="hidden" name="t" value="tok&quot;en&lt;&amp;">')
  })

  it("labels each card field exactly, with the card autocomplete tokens", () => {
    const fields = [
      ["card-number", "Card number", "number", "cc-number", true],
      ["card-expiry", "Expiry (MM/YY)", "expiry", "cc-exp", true],
      ["card-cvc", "CVC", "cvc", "cc-csc", true],
      ["card-name", "Name on card", "name", "cc-name", false]
    ] as const
    for (const [id, label, name, autocomplete, numeric] of fields) {
      expect(html).toContain(`<label for="${id}">${label}</label>`)
      const input = tagWithId(html, id)
      expect(input).toContain(`name="${name}"`)
      expect(input).toContain(`autocomplete="${autocomplete}"`)
      expect(input.includes('inputmode="numeric"')).toBe(numeric)
      expect(input).not.toContain("aria-invalid")
    }
  })

  it("has one submit button reading Pay and the total", () => {
    expect(count(html, "<button")).toBe(1)
    expect(html).toMatch(/<button type="submit"[^>]*>Pay \$42\.10<\/button>/)
    expect(payPage({ ...view, totalDisplay: "€1.234,50" })).toContain(">Pay €1.234,50</button>")
  })

  it("escapes a hostile product title and recipient name, and runs no script", () => {
    expect(html).not.toContain(hostile)
    expect(html).not.toContain("<script")
    expect(html).toContain(`<strong>${escapedHostile}</strong>`)
    expect(html).toContain(`alt="${escapedHostile}"`)
    expect(html).toContain(`${escapedHostile} O&#39;Hara`)
    expect(html).toContain("Large &amp; blue")
  })

  it("shows the items with images, the all-in breakdown, the recipient, the address and the deadline", () => {
    expect(html).toContain('src="https://img.example.com/a.png?x=1&amp;y=2"')
    expect(count(html, "<img ")).toBe(1) // no image for null, none for a javascript: URL
    expect(html).not.toContain("javascript:")
    expect(html).toContain("Quantity 2")
    for (const [term, value] of [
      ["Items", "$30.00"],
      ["Shipping", "$5.00"],
      ["Duties and taxes", "$3.10"],
      ["Service fee", "$4.00"]
    ]) {
      expect(html).toContain(`<dt>${term}</dt><dd>${value}</dd>`)
    }
    expect(html).toContain('<dt class="total">Total</dt><dd class="total">$42.10</dd>')
    expect(html).toContain("ada@example.com")
    expect(html).toContain("+15551234567")
    expect(html).toContain("<address>1 Main St<br>Springfield IL 62701<br>United States</address>")
    expect(html).toContain('<time datetime="2026-05-15T12:30:00.000Z">May 15, 2026, 12:30 PM UTC</time>')
    expect(html).not.toContain("Digital delivery")
  })

  it("says digital delivery when nothing ships", () => {
    const digital = payPage({
      ...view,
      shippingRequired: false,
      address: { ...view.address, address1: null, city: null, postalCode: null, provinceCode: null }
    })
    expect(digital).toContain("Digital delivery — no shipping")
    expect(digital).not.toContain("<address>")
  })

  it("shows the test card notice unless told otherwise", () => {
    expect(html).toContain("4242 4242 4242 4242")
    expect(payPage({ ...view, testMode: false })).not.toContain("4242 4242 4242 4242")
  })

  it("never echoes the card number or CVC, even when handed the whole form", () => {
    const form: CardInput = { number: "4000 0000 0000 0002", expiry: "12/3<", cvc: "987", name: `Ann ${hostile}` }
    const again = payPage(view, {
      values: form,
      fieldErrors: [{ field: "expiry", message: cardMessages.expiryInvalid }]
    })
    expect(again).not.toContain("4000")
    expect(again).not.toContain("0002")
    expect(again).not.toContain("987")
    expect(tagWithId(again, "card-number")).not.toContain("value=")
    expect(tagWithId(again, "card-cvc")).not.toContain("value=")
    expect(tagWithId(again, "card-expiry")).toContain('value="12/3&lt;"')
    expect(tagWithId(again, "card-name")).toContain(`value="Ann ${escapedHostile}"`)
    expect(again).not.toContain(hostile)
  })

  it("ties field errors to their inputs and lists them in an alert", () => {
    const again = payPage(view, {
      values: { name: "Ann" },
      fieldErrors: [
        { field: "number", message: cardMessages.numberInvalid },
        { field: "cvc", message: cardMessages.cvc3 }
      ]
    })
    const number = tagWithId(again, "card-number")
    expect(number).toContain('aria-invalid="true"')
    expect(number).toContain('aria-describedby="card-number-error"')
    expect(again).toContain(`<p class="field-error" id="card-number-error">${cardMessages.numberInvalid}</p>`)
    expect(tagWithId(again, "card-cvc")).toContain('aria-describedby="card-cvc-error"')
    expect(tagWithId(again, "card-expiry")).not.toContain("aria-invalid")
    expect(tagWithId(again, "pay-errors")).toContain('role="alert"')
    expect(again).toContain(`<a href="#card-number">${cardMessages.numberInvalid}</a>`)
  })

  it("shows a decline in an alert region", () => {
    const declined = payPage(view, {
      values: { name: "Ann", expiry: "12/30" },
      declineMessage: "Your card was declined."
    })
    expect(tagWithId(declined, "pay-decline")).toContain('role="alert"')
    expect(declined).toMatch(/<div class="error" role="alert" id="pay-decline"><p>Your card was declined\.<\/p><\/div>/)
  })

  it("says when payments resume after too many declines, and whether the card was tried", () => {
    const paused = { until: "2026-05-15T12:31:00.000Z", minutes: 1 }
    const declined = payPage(view, { declineMessage: "Your card was declined.", paused })
    expect(tagWithId(declined, "pay-decline")).toContain('role="alert"')
    expect(declined).toContain(
      '<p>Your card was declined.</p><p>Too many payments were declined for this checkout. You can try again in 1 minute, after <time datetime="2026-05-15T12:31:00.000Z">May 15, 2026, 12:31 PM UTC</time>.</p></div>'
    )
    expect(declined).not.toContain("not charged")
    const untried = payPage(view, { values: { name: "Ann" }, paused: { ...paused, minutes: 2 } })
    expect(untried).toContain("You can try again in 2 minutes")
    expect(untried).toContain("This payment was not attempted: your card was not charged.")
    expect(tagWithId(untried, "card-name")).toContain('value="Ann"')
  })

  it("puts a nonce on the inline style when given one, matching noncedPageCsp", () => {
    const withNonce = payPage(view, {}, { nonce: "abc123" })
    expect(withNonce).toContain('<style nonce="abc123">')
    expect(noncedPageCsp("abc123")).toContain("style-src 'nonce-abc123'")
    expect(noncedPageCsp("abc123")).toContain("script-src 'nonce-abc123'")
    expect(html).toContain("<style>")
  })
})

describe("paymentStatusPage", () => {
  const eventTypes = ["checkout.paid", "checkout.placing", "checkout.confirmed", `</script><script>alert(1)//`]
  const eventsUrl = "/pay/0123456789abcdef01234567/events?t=a&b"
  const html = paymentStatusPage(view, { status: "paid", eventsUrl, eventTypes, nonce: "n0nce" })

  it("says the payment was received and has a live status region", () => {
    expect(html).toContain("<h1>Payment received</h1>")
    const region = tagWithId(html, "checkout-status")
    expect(region).toContain('role="status"')
    expect(region).toContain('aria-live="polite"')
    expect(region).toContain('data-status="paid"')
    expect(region).toContain('data-events-url="/pay/0123456789abcdef01234567/events?t=a&amp;b"')
    expect(html).toContain(`${region}${checkoutStatusLabels.paid}</p>`)
  })

  it("has a plain-words label for every status", () => {
    const statuses: ReadonlyArray<CheckoutStatus> = [
      "pending_payment",
      "paid",
      "placing",
      "confirmed",
      "partially_confirmed",
      "failed",
      "refunded",
      "expired",
      "cancelled"
    ]
    expect(Object.keys(checkoutStatusLabels).sort()).toEqual([...statuses].sort())
    for (const status of statuses) {
      expect(checkoutStatusLabels[status]).not.toContain("_")
      expect(paymentStatusPage(view, { status, eventsUrl, eventTypes: [] })).toContain(checkoutStatusLabels[status])
    }
  })

  it("escapes checkout data and cannot be broken out of its script", () => {
    expect(html).not.toContain(hostile)
    expect(count(html, "<script")).toBe(1)
    expect(count(html, "</script>")).toBe(1)
    expect(html).toContain('<script nonce="n0nce">')
    expect(html).toContain('<style nonce="n0nce">')
  })

  /** Runs the page's script against a stub DOM and EventSource; returns the region and the stream. */
  const runScript = (page: string) => {
    const script = /<script[^>]*>([\s\S]*?)<\/script>/.exec(page)![1]!
    const region = /<p id="checkout-status"[^>]*data-status="([^"]*)" data-events-url="([^"]*)">([^<]*)<\/p>/.exec(
      page
    )!
    const attributes: Record<string, string> = {
      "data-status": region[1]!,
      "data-events-url": region[2]!.replace(/&amp;/g, "&")
    }
    const element = {
      textContent: region[3]!,
      getAttribute: (name: string) => attributes[name] ?? null,
      setAttribute: (name: string, value: string) => {
        attributes[name] = value
      }
    }
    const streams: Array<{ url: string; listeners: Map<string, (e: { data: string }) => void>; closed: boolean }> = []
    class EventSource {
      readonly listeners = new Map<string, (e: { data: string }) => void>()
      closed = false
      constructor(readonly url: string) {
        streams.push(this)
      }
      addEventListener(type: string, listener: (e: { data: string }) => void) {
        this.listeners.set(type, listener)
      }
      close() {
        this.closed = true
      }
    }
    runInNewContext(script, {
      document: { getElementById: (id: string) => (id === "checkout-status" ? element : null) },
      EventSource
    })
    const send = (type: string, status: unknown) =>
      streams[0]!.listeners.get(type)!({
        data: JSON.stringify({ id: "1", type, createdAt: "now", data: { checkout: { status, id: view.checkoutId } } })
      })
    return { element, attributes, streams, send }
  }

  it("follows the events stream and closes it on a terminal status", () => {
    const { attributes, element, send, streams } = runScript(html)
    expect(streams).toHaveLength(1)
    expect(streams[0]!.url).toBe(eventsUrl)
    expect([...streams[0]!.listeners.keys()]).toEqual(eventTypes)
    send("checkout.placing", "placing")
    expect(element.textContent).toBe(checkoutStatusLabels.placing)
    expect(attributes["data-status"]).toBe("placing")
    expect(streams[0]!.closed).toBe(false)
    streams[0]!.listeners.get("checkout.paid")!({ data: "not json" })
    expect(element.textContent).toBe(checkoutStatusLabels.placing)
    send("checkout.confirmed", "confirmed")
    expect(element.textContent).toBe(checkoutStatusLabels.confirmed)
    expect(attributes["data-status"]).toBe("confirmed")
    expect(streams[0]!.closed).toBe(true)
  })

  it.each([...terminalStatuses])("does not open the stream when the status is already %s", (status) => {
    const { streams } = runScript(paymentStatusPage(view, { status, eventsUrl, eventTypes }))
    expect(streams).toHaveLength(0)
  })
})

describe("payProblemPage", () => {
  const expected: ReadonlyArray<readonly [PayProblemKind, string, RegExp]> = [
    ["already_paid", "This checkout is already paid", /nothing more to pay/],
    ["expired", "This payment link has expired", /Nothing was charged; ask .* to start a new checkout\./],
    ["cancelled", "This checkout was cancelled", /Nothing was charged/],
    ["not_found", "This payment link is not valid", /ask .* for a new one\./]
  ]

  it.each(expected)("%s has a clear heading and the next step", (kind, heading, next) => {
    const html = payProblemPage(kind)
    expect(html).toContain(`<title>${heading}</title>`)
    expect(html).toContain(`<h1>${heading}</h1>`)
    expect(html).toMatch(next)
    expect(html).not.toContain("<form")
    expect(payProblems[kind].heading).toBe(heading)
  })

  it("not_found reveals nothing about the checkout or the token", () => {
    const html = payProblemPage("not_found")
    expect(html).not.toMatch(/token|expired|paid|cancelled/i)
    expect(payProblems.not_found.status).toBe(404)
  })

  it("already_paid links to the status page when one is given", () => {
    expect(payProblemPage("already_paid", { statusUrl: "/pay/x/status?t=a&b" })).toContain(
      '<a href="/pay/x/status?t=a&amp;b">See the order status</a>'
    )
    expect(payProblemPage("already_paid")).not.toContain("<a ")
  })
})
