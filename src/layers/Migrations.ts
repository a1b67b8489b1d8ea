import { NodeContext } from "@effect/platform-node"
import { Migrator } from "@effect/sql"
import { PgMigrator } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import extensions from "./migrations/0001_extensions.js"
import jobs from "./migrations/0002_jobs.js"
import catalog from "./migrations/0003_catalog.js"

/** Every migration, in order. File names are `NNNN_name.ts`; ids never change once shipped. */
export const migrations = {
  "0001_extensions": extensions,
  "0002_jobs": jobs,
  "0003_catalog": catalog
}

export const latestMigrationId = Object.keys(migrations).length

/** Runs pending migrations when built. */
export const MigrationsLive = PgMigrator.layer({ loader: Migrator.fromRecord(migrations) }).pipe(
  Layer.provide(NodeContext.layer)
)

export const runMigrations = PgMigrator.run({ loader: Migrator.fromRecord(migrations) }).pipe(
  Effect.provide(NodeContext.layer)
)
