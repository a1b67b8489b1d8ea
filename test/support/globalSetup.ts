import { Effect } from "effect"
import type { TestProject } from "vitest/node"
import { makeDatabaseTemplates } from "./databaseTemplates.js"

/** Once per run, before any test file: the database templates every test file's database is copied from. */
export default async function setup(project: TestProject) {
  const { templates, drop } = await Effect.runPromise(makeDatabaseTemplates)
  project.provide("databaseTemplates", templates)
  return () => Effect.runPromise(drop)
}
