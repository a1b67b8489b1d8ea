import { Effect, FiberRef } from "effect"
import type { Actor } from "../domain/company/Audit.js"
import { setActor } from "../services/company/Audit.js"
import { clientSource } from "./AuthFailures.js"
import { currentRequestId } from "./Middleware.js"

/**
 * Makes the key or member behind the request being served the actor of its fiber, with the request's source address
 * (as the rate limits count it) and its request id: what the request then changes is recorded in the company's audit
 * log as theirs (docs/decisions/0057-audit-log.md). The API-key middleware calls it for its key; the dashboard's
 * session calls it for its member.
 */
export const actAs = (who: Pick<Actor, "type" | "id" | "name">) =>
  Effect.flatMap(Effect.all([clientSource, FiberRef.get(currentRequestId)]), ([sourceAddress, requestId]) =>
    setActor({ ...who, sourceAddress, requestId })
  )
