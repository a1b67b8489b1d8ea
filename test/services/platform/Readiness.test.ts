import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { databaseOutageOf } from "../../../src/services/platform/Readiness.js"
import { TestDatabase } from "../../support/database.js"

/** An SqlError caused by the server's ErrorResponse, shaped as the driver hands it over. */
const serverError = (code: string, severity: "FATAL" | "ERROR", message: string) =>
  new SqlError({ cause: Object.assign(new Error(message), { code, severity }), message: "Failed to execute statement" })

/** An SqlError caused by Node's socket error. */
const socketError = (code: string) =>
  new SqlError({ cause: Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code }), message: "Failed" })

/** The SqlError a statement fails with on the test database. */
const failureOf = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, SqlError>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.flip(statement(sql)))

describe("databaseOutageOf", () => {
  it.each([
    ["08000", "FATAL", "connection exception"],
    ["08001", "FATAL", "could not establish connection"],
    ["08003", "FATAL", "connection does not exist"],
    ["08004", "FATAL", "the server rejected the connection"],
    ["08006", "FATAL", "connection failure"],
    ["08P01", "FATAL", "protocol violation"],
    ["53300", "FATAL", "sorry, too many clients already"],
    ["55000", "FATAL", 'database "ribbon" is not currently accepting connections'],
    ["57P01", "FATAL", "terminating connection due to administrator command"],
    ["57P02", "FATAL", "terminating connection because of crash of another server process"],
    ["57P03", "FATAL", "the database system is starting up"],
    ["57P03", "FATAL", "the database system is shutting down"]
  ] as const)("classes SQLSTATE %s (%s: %s) as an outage, named by its code", (code, severity, message) => {
    expect(databaseOutageOf(serverError(code, severity, message))).toBe(code)
  })

  it.each(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN"])(
    "classes Node's %s as an outage",
    (code) => {
      expect(databaseOutageOf(socketError(code))).toBe(code)
    }
  )

  it("classes a connection lost mid-query as an outage", () => {
    const lost = new SqlError({ cause: new Error("Connection terminated unexpectedly"), message: "Failed" })
    expect(databaseOutageOf(lost)).toBe("connection lost")
  })

  it("does not class other errors, nor a refusal that is not an SqlError, as an outage", () => {
    expect(databaseOutageOf(new Error("ECONNREFUSED"))).toBeUndefined()
    expect(databaseOutageOf(Object.assign(new Error("refused"), { code: "57P01" }))).toBeUndefined()
    expect(databaseOutageOf(undefined)).toBeUndefined()
    expect(databaseOutageOf(new SqlError({ message: "no cause" }))).toBeUndefined()
  })

  it.layer(TestDatabase)((it) => {
    it.effect(
      "does not class a statement's own failure as an outage: a unique violation, a syntax error, a 55000 raised by a statement",
      () =>
        Effect.gen(function* () {
          const uniqueViolation = yield* failureOf((sql) =>
            Effect.andThen(
              sql`CREATE TEMP TABLE outage_check (id text PRIMARY KEY)`,
              sql`INSERT INTO outage_check (id) VALUES ('a'), ('a')`
            )
          )
          expect(uniqueViolation.cause).toMatchObject({ code: "23505" })
          expect(databaseOutageOf(uniqueViolation)).toBeUndefined()

          const syntaxError = yield* failureOf((sql) => sql`SELEC 1`)
          expect(syntaxError.cause).toMatchObject({ code: "42601" })
          expect(databaseOutageOf(syntaxError)).toBeUndefined()

          // "currval … is not yet defined in this session": 55000 at severity ERROR, the connection still serves.
          const notInState = yield* failureOf((sql) =>
            Effect.andThen(sql`CREATE TEMP SEQUENCE outage_check_seq`, sql`SELECT currval('outage_check_seq')`)
          )
          expect(notInState.cause).toMatchObject({ code: "55000", severity: "ERROR" })
          expect(databaseOutageOf(notInState)).toBeUndefined()
        })
    )
  })
})
