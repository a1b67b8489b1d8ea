import { Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import type { CompanyOutboxMessage } from "../domain/checkout/Notifications.js"
import { Notifications, outboxShown } from "../services/checkout/Notifications.js"
import { Companies } from "../services/company/Companies.js"
import { AppConfig } from "./Config.js"

/**
 * `ribbon outbox` (docs/dashboard.md "Outbox"): the newest e-mails and text messages Ribbon would send, read from
 * the outbox the dashboard's outbox page reads (`Notifications`), for following a flow from a terminal. Shown where
 * the page shows: outside production, for any company or all of them; in production (NODE_ENV=production) only
 * a sandbox company's, named with `--company`. src/layers/cli.ts mounts it with the migrated database.
 */

const OutboxServices = Layer.mergeAll(Notifications.Default, Companies.Default)

/** The most messages one run prints. */
const limitMaximum = 200

/** A refusal: the message on stderr (the entry point prints nothing more for ValidationError), exit code 1. */
const fail = (message: string) =>
  Console.error(message).pipe(Effect.zipRight(Effect.fail(ValidationError.invalidValue(HelpDoc.p(message)))))

const urlPattern = /https?:\/\/[^\s<>"]+/g

/** Bold on a terminal; the entry point strips it when stdout is not one (or NO_COLOR is set). */
const bold = (text: string) => `\x1b[1m${text}\x1b[22m`

const channelNames = { email: "e-mail", sms: "text" } as const

/** A message as `--json` prints it. */
const jsonOf = (message: CompanyOutboxMessage) => ({
  id: message.id,
  createdAt: message.createdAt.toISOString(),
  kind: message.kind,
  channel: message.channel,
  to: message.recipient,
  subject: message.subject,
  body: message.body,
  links: message.body.match(urlPattern) ?? []
})

/**
 * A message as text: its time (UTC), channel, recipient and kind on one line, its subject (a text message's first
 * line) under it, then each link it holds on a line of its own.
 */
const textOf = (message: CompanyOutboxMessage) => {
  const time = `${message.createdAt.toISOString().slice(0, 19).replace("T", " ")} UTC`
  const subject = message.channel === "sms" ? (message.body.split("\n")[0] ?? "") : message.subject
  return [
    `${time}  ${channelNames[message.channel]} to ${message.recipient}  (${message.kind})`,
    `  ${bold(subject)}`,
    ...(message.body.match(urlPattern) ?? []).map((link) => `  ${link}`)
  ].join("\n")
}

const company = Options.text("company").pipe(
  Options.withDescription("Only this company's messages: invitations to it and its gifts' messages."),
  Options.optional
)
const limit = Options.integer("limit").pipe(
  Options.withDescription(`How many of the newest messages to print (1 to ${limitMaximum}; default 20).`),
  Options.withDefault(20)
)
const json = Options.boolean("json").pipe(Options.withDescription("Print JSON on stdout."))

export const outbox = Command.make("outbox", { company, limit, json }, (options) =>
  Effect.gen(function* () {
    if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > limitMaximum) {
      return yield* fail(`--limit must be a whole number from 1 to ${limitMaximum}`)
    }
    const production = (yield* AppConfig).environment === "production"
    const notifications = yield* Notifications
    let messages: ReadonlyArray<CompanyOutboxMessage>
    if (Option.isNone(options.company)) {
      if (production) {
        return yield* fail(
          "The outbox is not shown in production (NODE_ENV=production): only a sandbox company's, named with --company."
        )
      }
      messages = yield* notifications.newest(options.limit)
    } else {
      const companyId = options.company.value
      const companies = yield* Companies
      yield* companies.exists(companyId)
      if (!outboxShown({ live: yield* companies.isLive(companyId) }, production)) {
        return yield* fail(
          `Company ${companyId} is live: its outbox is not shown in production (NODE_ENV=production), as on the dashboard.`
        )
      }
      messages = (yield* notifications.forCompany(companyId, 1, options.limit)).rows
    }
    if (options.json) return yield* Console.log(JSON.stringify(messages.map(jsonOf), null, 2))
    yield* Console.log(messages.length === 0 ? "No messages." : messages.map(textOf).join("\n\n"))
  }).pipe(
    Effect.catchTag("CompanyNotFound", (e) => fail(e.message)),
    Effect.provide(OutboxServices)
  )
).pipe(
  Command.withDescription(
    "Print the newest e-mails and text messages Ribbon would send (time, channel, recipient, subject, links); not in production but for a sandbox company."
  )
)
