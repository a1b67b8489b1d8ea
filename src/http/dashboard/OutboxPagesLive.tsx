import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { CompanyOutboxMessage } from "../../domain/checkout/Notifications.js"
import { Notifications } from "../../services/checkout/Notifications.js"
import { maskEmail, maskPhone } from "../../services/company/Masking.js"
import { Api } from "../Api.js"
import { Badge, EmptyState, type PageLinks, Pagination } from "./components.js"
import { dashboardPage } from "./layout.js"
import { notFoundPage } from "./pages.js"
import { pageNumber } from "./params.js"
import { type CurrentMember, holds, makeDashboardAuth } from "./session.js"

/** Messages per page. */
const messagesPerPage = 20

const urlPattern = /https?:\/\/[^\s<>"]+/g

/** Text with its links made clickable. */
const Linked = ({ text }: { readonly text: string }) => {
  const parts: Array<preact.ComponentChildren> = []
  let last = 0
  for (const match of text.matchAll(urlPattern)) {
    parts.push(text.slice(last, match.index))
    parts.push(
      <a href={match[0]} key={match.index}>
        {match[0]}
      </a>
    )
    last = match.index + match[0].length
  }
  parts.push(text.slice(last))
  return <>{parts}</>
}

/**
 * A gift message as a role without `gifts:read:unmasked` may see it: the recipient masked as the API masks it, the
 * body (which greets the recipient by name) replaced by its links alone.
 */
const masked = (message: CompanyOutboxMessage): CompanyOutboxMessage => ({
  ...message,
  recipient: message.channel === "email" ? maskEmail(message.recipient) : maskPhone(message.recipient),
  body: [
    "(The message is hidden: your role may not read recipients' personal data.)",
    ...(message.body.match(urlPattern) ?? [])
  ].join("\n")
})

const kindNames: Readonly<Record<string, string>> = {
  invitation: "Invitation",
  "gift.sent": "Gift sent",
  "gift.reminder": "Gift reminder",
  "gift.last-reminder": "Gift reminder (last)"
}

const Message = ({ message }: { readonly message: CompanyOutboxMessage }) => {
  const iso = message.createdAt.toISOString()
  return (
    <article class="card" aria-labelledby={`message-${message.id}`}>
      <h2 id={`message-${message.id}`}>{message.subject}</h2>
      <p>
        <Badge tone="neutral">{kindNames[message.kind] ?? message.kind}</Badge>{" "}
        <Badge tone="neutral">{message.channel === "email" ? "E-mail" : "Text message"}</Badge> to{" "}
        <code>{message.recipient}</code>,{" "}
        <time dateTime={iso}>
          {iso.slice(0, 10)} {iso.slice(11, 19)} UTC
        </time>
      </p>
      <pre>
        <Linked text={message.body} />
      </pre>
    </article>
  )
}

const OutboxBody = (props: { readonly messages: ReadonlyArray<CompanyOutboxMessage>; readonly links: PageLinks }) => (
  <>
    <h1>Outbox</h1>
    <p>
      The e-mails and text messages Ribbon would send for this company, newest first: invitations to join it and its
      gifts' messages. Nothing here is sent: follow a flow by its links.
    </p>
    {props.messages.length === 0 ? (
      <EmptyState title="No messages yet." />
    ) : (
      props.messages.map((message) => <Message message={message} key={message.id} />)
    )}
    <Pagination links={props.links} />
  </>
)

/**
 * The dashboard's outbox (docs/dashboard.md "Outbox"): any member of a company whose outbox shows (a sandbox, or any
 * company outside production) reads its messages, paged in SQL by `Notifications.forCompany`; gift messages are
 * masked unless the role holds `gifts:read:unmasked`. Elsewhere the page is not there (404).
 */
export const OutboxPagesLive = HttpApiBuilder.group(Api, "dashboardOutbox", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* makeDashboardAuth
    const notifications = yield* Notifications

    const pageOf = (current: CurrentMember, page: number) =>
      Effect.gen(function* () {
        const found = yield* notifications.forCompany(current.company.id, page, messagesPerPage)
        const unmasked = holds(current.grant, "gifts:read:unmasked")
        const messages = found.rows.map((message) => (message.giftId === null || unmasked ? message : masked(message)))
        const links = { path: "/dashboard/outbox", params: {}, page, hasNext: found.hasNext }
        return dashboardPage("Outbox", current, <OutboxBody messages={messages} links={links} />, {
          section: "/dashboard/outbox"
        })
      })

    return handlers.handle("page", ({ request, urlParams }) =>
      auth.page(request, {}, (current) =>
        current.outboxShown ? pageOf(current, pageNumber(urlParams.page)) : Effect.succeed(notFoundPage(current))
      )
    )
  })
)
