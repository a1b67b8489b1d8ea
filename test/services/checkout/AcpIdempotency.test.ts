import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { AcpIdempotency, bodyFingerprint } from "../../../src/services/checkout/AcpIdempotency.js"
import { Users } from "../../../src/services/identity/Users.js"
import { TestDatabase } from "../../support/database.js"

/** The agent protocols' idempotency store: an answer is kept for its 24 hours, then purged with what it held. */

describe("AcpIdempotency", () => {
  it.layer(Layer.mergeAll(AcpIdempotency.Default, Users.Default).pipe(Layer.provideMerge(TestDatabase)), {
    timeout: 60_000
  })((it) => {
    it.effect("replays an answer within 24 hours; the hourly purge then deletes it, and the key runs afresh", () =>
      Effect.gen(function* () {
        const idempotency = yield* AcpIdempotency
        const sql = yield* SqlClient.SqlClient
        const user = yield* Effect.flatMap(Users, (users) =>
          users.create({ email: "idem@example.com", password: "correct horse battery" })
        )
        let runs = 0
        const request = {
          userId: user.id,
          endpoint: "POST /acp/webhook_endpoints",
          key: "key-1",
          fingerprint: bodyFingerprint({ url: "https://platform.example/events" })
        }
        const answer = Effect.sync(() => {
          runs++
          return { status: 201, body: { secret: `whsec_${runs}` } }
        })
        const first = yield* idempotency.run(request, answer)
        expect(first).toEqual({ status: 201, body: { secret: "whsec_1" }, replayed: false })
        yield* TestClock.adjust("23 hours")
        expect(yield* idempotency.purgeExpired()).toBe(0)
        expect(yield* idempotency.run(request, answer)).toEqual({ ...first, replayed: true })

        yield* TestClock.adjust("2 hours")
        expect(yield* idempotency.purgeExpired()).toBe(1)
        const kept = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM acp_idempotency_keys`.pipe(Effect.orDie)
        expect(kept[0]!.n).toBe(0)
        expect(yield* idempotency.run(request, answer)).toEqual({
          status: 201,
          body: { secret: "whsec_2" },
          replayed: false
        })
        expect(runs).toBe(2)
      })
    )
  })
})
