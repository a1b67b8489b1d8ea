import type * as Http from "node:http"
import { Clock, Duration, Effect, Layer } from "effect"
import { Events } from "../services/checkout/Events.js"
import { Jobs } from "../services/platform/Jobs.js"
import { AppConfig } from "./Config.js"

/**
 * Graceful shutdown (docs/architecture.md). On SIGTERM or SIGINT the server's scope closes and, before
 * anything else is released, the instance drains within `SHUTDOWN_GRACE`:
 *
 * - the listeners stop accepting, and idle keep-alive connections are closed at once;
 * - responses sent from then on say `Connection: close`, and their connections close after them;
 * - event streams end with a farewell `retry` (src/http/checkout/Sse.ts), so that their clients reconnect to
 *   another instance with their `Last-Event-ID`;
 * - the worker claims nothing more, and jobs still running when the drain's time is up are stopped and handed
 *   to other instances at once (`Jobs.drain`);
 * - connections still open then are cut.
 *
 * The drain has the grace less a reserve (one second, at most half the grace) for what follows it: handing
 * jobs back, stopping the background fibers and closing the database pool, so that the process exits within
 * the grace.
 */

/** What the drain leaves of the grace for the rest of the shutdown. */
export const drainTime = (grace: Duration.Duration) =>
  Duration.subtract(grace, Duration.min(Duration.seconds(1), Duration.times(grace, 0.5)))

/**
 * One listener's side of the drain. It watches the responses in flight so that, once `drain` starts, each
 * closes its connection when it ends: one not started yet says `Connection: close` (Node then closes the
 * socket after it); one already under way (an event stream) leaves an idle connection, closed at once.
 */
const listenerDrain = (server: Http.Server) =>
  Effect.gen(function* () {
    let draining = false
    const inFlight = new Set<Http.ServerResponse>()
    const closeIdle = () => server.closeIdleConnections()
    const closeAfter = (response: Http.ServerResponse) => {
      if (!response.headersSent) response.shouldKeepAlive = false
      response.once("close", closeIdle)
    }
    const onRequest = (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
      inFlight.add(response)
      response.once("close", () => inFlight.delete(response))
      if (draining) closeAfter(response)
    }
    // Before the app's own listener, so that a response is marked before anything can be written.
    yield* Effect.acquireRelease(
      Effect.sync(() => server.prependListener("request", onRequest)),
      () => Effect.sync(() => server.off("request", onRequest))
    )

    const closed = Effect.async<void>((resume) => {
      // Stops accepting; the callback runs once the last connection has closed.
      server.close(() => resume(Effect.void))
      server.closeIdleConnections()
    })

    return (time: Duration.Duration) =>
      Effect.gen(function* () {
        draining = true
        for (const response of inFlight) closeAfter(response)
        // Interruptible, so that the timeout can stop the wait inside the (uninterruptible) finalizer.
        yield* Effect.interruptible(closed).pipe(
          Effect.timeout(time),
          Effect.catchTag("TimeoutException", () =>
            Effect.logWarning(`Shutdown: cutting ${inFlight.size} request(s) still open`).pipe(
              Effect.andThen(Effect.sync(() => server.closeAllConnections()))
            )
          )
        )
      })
  })

/**
 * The drain of these listeners, the event streams and the worker, run when the layer's scope closes. Build it
 * after the listeners (`drainOnShutdown(servers).pipe(Layer.provideMerge(listeners))`): it then runs before
 * their request handlers are removed, so a request that arrives during the drain is still answered.
 */
export const drainOnShutdown = (servers: ReadonlyArray<Http.Server>) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const { shutdownGrace } = yield* AppConfig
      const jobs = yield* Jobs
      const events = yield* Events
      const listeners = yield* Effect.forEach(servers, listenerDrain)
      yield* Effect.addFinalizer(() =>
        Effect.gen(function* () {
          const time = drainTime(Duration.decode(shutdownGrace))
          yield* Effect.logInfo(`Shutting down: draining for up to ${Duration.format(time)}`)
          const started = yield* Clock.currentTimeMillis
          yield* events.endStreams
          yield* Effect.all([jobs.drain(time), ...listeners.map((drain) => drain(time))], {
            concurrency: "unbounded",
            discard: true
          })
          const took = (yield* Clock.currentTimeMillis) - started
          yield* Effect.logInfo(`Shutting down: drained in ${took} ms`)
        })
      )
    })
  )
