import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import type { TestProject } from "vitest/node"
import { makeDatabaseTemplates } from "./databaseTemplates.js"

/**
 * Once per run, before any test file: the bundle the CLI tests run (rebuilt only when a source is newer than it),
 * and the database templates every test file's database is copied from.
 */
export default async function setup(project: TestProject) {
  execFileSync(process.execPath, ["scripts/build.mjs"], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    stdio: "inherit"
  })
  const { templates, drop } = await Effect.runPromise(makeDatabaseTemplates)
  project.provide("databaseTemplates", templates)
  return () => Effect.runPromise(drop)
}
