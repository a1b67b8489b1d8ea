import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { SqlClient } from "@effect/sql"
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { openPGlite, postgres, servePGlite } from "../../src/layers/Database.js"
import { MigrationsLive } from "../../src/layers/Migrations.js"
import { Seed } from "../../src/services/catalog/Seed.js"

/**
 * The databases a test file starts from, made once per run (test/support/globalSetup.ts): migrated, and
 * migrated with the demo catalog. On PGlite, making one (initdb, the migrations, the seed) takes 2.5–5 s;
 * loading its dump, ~0.5 s.
 */
export type Template = "migrated" | "seeded"

export interface DatabaseTemplates {
  /** Dumps of a PGlite data directory (`PGlite.dumpDataDir`), by file path. */
  readonly pglite?: Readonly<Record<Template, string>>
  /** Databases on the DATABASE_URL server, by name, for `CREATE DATABASE … TEMPLATE`. */
  readonly postgres?: Readonly<Record<Template, string>>
}

/** The URL of database `name` on the server of `serverUrl`. */
export const databaseUrl = (serverUrl: Redacted.Redacted<string>, name: string) => {
  const url = new URL(Redacted.value(serverUrl))
  url.pathname = `/${name}`
  return url.toString()
}

const migrate = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  Layer.build(Layer.provideMerge(MigrationsLive, client))

/** The demo catalog, seeded unless it already is. */
export const ensureDemoCatalog = Effect.flatMap(Seed, (seed) => seed.ensureDemoCatalog())

const seed = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  ensureDemoCatalog.pipe(Effect.provide(Seed.Default.pipe(Layer.provide(client))))

/** Both PGlite templates, dumped into `dir`. */
const pgliteTemplates = (dir: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const db = yield* openPGlite({})
      const client = Layer.succeedContext(yield* Layer.build(yield* servePGlite(db)))
      const dump = (template: Template) =>
        Effect.promise(async () => {
          const path = Path.join(dir, `${template}.tar`)
          Fs.writeFileSync(path, Buffer.from(await (await db.dumpDataDir("none")).arrayBuffer()))
          return path
        })
      yield* migrate(client)
      const migrated = yield* dump("migrated")
      yield* seed(client)
      return { migrated, seeded: yield* dump("seeded") }
    })
  )

/** A client of the DATABASE_URL server itself, for creating and dropping databases; closed with the scope. */
export const adminClient = (serverUrl: Redacted.Redacted<string>) =>
  Effect.map(Layer.build(postgres(serverUrl, { maxConnections: 1 })), Context.get(SqlClient.SqlClient))

const dropDatabase = (admin: SqlClient.SqlClient, name: string) =>
  admin`DROP DATABASE IF EXISTS ${admin(name)} WITH (FORCE)`

/** Both Postgres templates, as databases named after `prefix`: migrated, then a copy of it seeded. */
const postgresTemplates = (serverUrl: Redacted.Redacted<string>, prefix: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const admin = yield* adminClient(serverUrl)
      const migrated = `${prefix}_migrated`
      const seeded = `${prefix}_seeded`
      const clientOf = (name: string) => postgres(Redacted.make(databaseUrl(serverUrl, name)), { maxConnections: 1 })
      yield* dropDatabase(admin, seeded)
      yield* dropDatabase(admin, migrated)
      yield* admin`CREATE DATABASE ${admin(migrated)}`
      yield* Effect.scoped(migrate(clientOf(migrated)))
      yield* admin`CREATE DATABASE ${admin(seeded)} TEMPLATE ${admin(migrated)}`
      yield* seed(clientOf(seeded))
      return { migrated, seeded }
    })
  )

/** Makes the templates for the database tests will use; the returned effect removes them. */
export const makeDatabaseTemplates = Effect.gen(function* () {
  const serverUrl = yield* Config.option(Config.redacted("DATABASE_URL"))
  if (Option.isSome(serverUrl)) {
    const prefix = `ribbon_test_template_${process.pid}`
    const templates = yield* postgresTemplates(serverUrl.value, prefix)
    const drop = Effect.scoped(
      Effect.flatMap(adminClient(serverUrl.value), (admin) =>
        Effect.forEach(Object.values(templates), (name) => dropDatabase(admin, name))
      )
    ).pipe(Effect.orDie)
    return { templates: { postgres: templates } satisfies DatabaseTemplates, drop }
  }
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ribbon-test-templates-"))
  const templates = yield* pgliteTemplates(dir)
  const drop = Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  return { templates: { pglite: templates } satisfies DatabaseTemplates, drop }
})
