import { Effect } from "effect"
import { codeOf, isDomainError } from "../domain/platform/Errors.js"
import { type AcpIdempotency, type Answer, bodyFingerprint } from "../services/checkout/AcpIdempotency.js"
import { render } from "./ErrorLines.js"

/**
 * The agent protocols' answers, shared by their REST bindings (`/acp`, `/ucp`) and their MCP tools: an operation's
 * result or 4xx as the protocol's response, and the same under an idempotency key.
 */

/**
 * What an operation answers as a protocol's response (`line`: ACP's or UCP's error body): its result with `status`,
 * or the 4xx it failed with as the protocol's error object (with that status); a 5xx or a defect stays a failure.
 */
export const protocolAnswer = <E, R>(line: "acp" | "ucp", status: number, operation: Effect.Effect<unknown, E, R>) =>
  operation.pipe(
    Effect.map((answer): Answer => ({ status, body: answer })),
    Effect.catchIf(
      (failure): failure is E => isDomainError(failure) && (codeOf(failure)?.status ?? 500) < 500,
      (failure) => {
        const rendered = render(line, failure as never)
        return Effect.succeed<Answer>({ status: rendered.status, body: rendered.body })
      }
    )
  )

/**
 * An operation under the agent protocols' idempotency (src/services/checkout/AcpIdempotency.ts) for `key` on
 * `endpoint` (`POST /acp/checkout_sessions/...`, the same for REST and MCP): the body fingerprinted as sent
 * (extension fields too), a 4xx of the operation kept as its answer like a success, in `line`'s error shape.
 */
export const keyedAnswer = <E, R>(
  idempotency: AcpIdempotency,
  request: { readonly userId: string; readonly endpoint: string; readonly key: string; readonly body: unknown },
  status: number,
  operation: Effect.Effect<unknown, E, R>,
  line: "acp" | "ucp" = "acp"
) =>
  idempotency.run(
    {
      userId: request.userId,
      endpoint: request.endpoint,
      key: request.key,
      fingerprint: bodyFingerprint(request.body)
    },
    protocolAnswer(line, status, operation)
  )
