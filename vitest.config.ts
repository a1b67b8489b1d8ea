import { configDefaults, defineConfig } from "vitest/config"

/**
 * What the run against a Postgres server (DATABASE_URL set: CI's second run) leaves out, since a database server
 * cannot change its outcome: the browser suites, the docs walkthroughs and the CLI's child processes run on
 * embedded databases of their own (each skips itself there too), and the domain and lint checks use none.
 * Left out rather than skipped, they cost that run nothing (each file costs seconds to load).
 */
const embeddedRunOnly = [
  "test/e2e/**",
  "test/docs/**",
  "test/lint/**",
  "test/domain/**",
  "test/layers/cli*.test.ts",
  "test/layers/EmbeddedInit.test.ts"
]

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...(process.env.DATABASE_URL === undefined ? [] : embeddedRunOnly)],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } }
  }
})
