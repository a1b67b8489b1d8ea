import { Sse } from "@effect/experimental"
import { HttpServerResponse } from "@effect/platform"
import { Effect, Random, Schedule, Stream } from "effect"
import { type CheckoutStatus, terminalStatuses } from "../../domain/checkout/Checkout.js"
import { type EventRow, Events } from "../../services/checkout/Events.js"

/**
 * A checkout's events as `text/event-stream` (docs/decisions/0029-events-and-sse.md): each event with its `id` (for
 * `Last-Event-ID`), its type as the SSE `event` name and the JSON envelope `{id, type, createdAt, data}` as
 * `data`; a keep-alive comment every 15 seconds; the response ends when the event stream does (after a
 * final status). A client that reconnects after the final event gets 204, which tells `EventSource` to stop.
 * When the server shuts down, the stream ends with a comment saying so and a short `retry`, and the client
 * reconnects, with its `Last-Event-ID`, to another instance.
 */

export const keepAliveEvery = Schedule.spaced("15 seconds")

/** One event, framed by `@effect/experimental`'s SSE encoder. */
export const formatEvent = (event: EventRow) =>
  Sse.encoder.write({
    _tag: "Event",
    id: event.id,
    event: event.type,
    data: JSON.stringify({ id: event.id, type: event.type, createdAt: event.createdAt.toISOString(), data: event.data })
  })

/**
 * The last lines of a stream that a shutdown ended: reconnect soon, each client after its own 0.5 to 2.5 s,
 * so that the other instances do not get every stream back in the same instant.
 */
const farewell = Effect.map(
  Random.nextIntBetween(500, 2500),
  (retry) => `: shutting down, reconnect with Last-Event-ID\nretry: ${retry}\n\n`
)

/** `events` as an SSE response; `endedByShutdown` says, once they end, whether a shutdown ended them. */
export const eventStreamResponse = (events: Stream.Stream<EventRow>, endedByShutdown: Effect.Effect<boolean>) =>
  HttpServerResponse.stream(
    // Reconnect after 3 s; the comment (which the encoder has no form for) flushes the headers at once.
    Stream.make("retry: 3000\n: stream open\n\n").pipe(
      Stream.concat(
        Stream.merge(
          Stream.map(events, formatEvent),
          Stream.map(Stream.fromSchedule(keepAliveEvery), () => ": keep-alive\n\n"),
          { haltStrategy: "left" }
        )
      ),
      Stream.concat(
        Stream.unwrap(Effect.map(endedByShutdown, (ended) => (ended ? Stream.fromEffect(farewell) : Stream.empty)))
      ),
      Stream.encodeText
    ),
    {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
    }
  )

/** The response for a checkout's stream after `lastEventId`, given the checkout's current status. */
export const checkoutEvents = (checkoutId: string, status: CheckoutStatus, lastEventId: string) =>
  Effect.gen(function* () {
    const events = yield* Events
    const final = terminalStatuses.has(status)
    if (final && (yield* events.after(checkoutId, lastEventId, 1)).length === 0) {
      return HttpServerResponse.empty({ status: 204 })
    }
    return eventStreamResponse(events.stream(checkoutId, lastEventId, { follow: !final }), events.streamsEnded)
  })
