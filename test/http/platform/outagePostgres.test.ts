import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Config, Effect, Option } from "effect"
import { TestDatabase } from "../../support/database.js"
import { adminClient } from "../../support/databaseTemplates.js"
import { get, serveRibbon } from "../../support/http.js"

/**
 * A real Postgres refusing connections to the test's own database (`ALLOW_CONNECTIONS false`, SQLSTATE 55000
 * at connect): 503 with Retry-After, then served again without a restart. test/http/platform/outage.test.ts
 * covers the other refusals (and this one) on every run, with a relay that answers as Postgres does.
 */
const databaseUrl = Effect.runSync(Config.option(Config.redacted("DATABASE_URL")))

describe.skipIf(Option.isNone(databaseUrl))("a database that refuses connections (Postgres)", () => {
  it.layer(serveRibbon(TestDatabase))((it) => {
    it.scoped("answers 503 while ALLOW_CONNECTIONS is false, and serves again once it is true", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [{ name }] = yield* sql<{ name: string }>`SELECT current_database() AS name`
        const admin = yield* adminClient(Option.getOrThrow(databaseUrl))
        const allowConnections = (allow: boolean) =>
          admin`ALTER DATABASE ${admin(name)} ALLOW_CONNECTIONS ${admin.literal(String(allow))}`
        // The test's own database: refuse new connections and end the pool's.
        yield* allowConnections(false)
        yield* Effect.addFinalizer(() => Effect.orDie(allowConnections(true)))
        yield* admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = ${name} AND pid <> pg_backend_pid()`

        const apiKey = { "x-api-key": "0123456789abcdef01234567" }
        for (let attempt = 0; attempt < 2; attempt++) {
          const v3 = yield* get("/public-api/v3/authentication/api-keys", apiKey)
          expect(v3.status).toBe(503)
          expect(v3.headers["retry-after"]).toBe("5")
          expect(v3.body).toEqual({ status: 503, errorCode: "503_PBLC_001", message: expect.any(String) })
        }
        const v1 = yield* get("/v1/me", { authorization: "Bearer not-a-token" })
        expect(v1.status).toBe(503)
        expect(v1.body).toMatchObject({ status: 503, code: "service_unavailable" })
        expect((yield* get("/ready")).status).toBe(503)

        yield* allowConnections(true)
        expect((yield* get("/ready")).status).toBe(200)
        expect((yield* get("/public-api/v3/authentication/api-keys", apiKey)).status).toBe(401)
      })
    )
  })
})
