import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Audit } from "../../services/company/Audit.js"
import { Api } from "../Api.js"
import { CurrentCaller } from "./ApiKeyAuth.js"
import { auditEventsV3Query } from "./AuditApi.js"
import { auditEventV3, numberedList } from "./v3.js"

export const AuditEventsV3Live = HttpApiBuilder.group(Api, "auditEventsV3", (handlers) =>
  Effect.gen(function* () {
    const audit = yield* Audit
    return handlers.handle("list", () =>
      Effect.flatMap(CurrentCaller, (caller) =>
        numberedList(auditEventsV3Query, (query) => audit.page(caller.scope, query), auditEventV3)
      )
    )
  })
)
