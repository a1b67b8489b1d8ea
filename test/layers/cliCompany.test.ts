import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { onPostgresRun, run, tempDataDir, withNode } from "../support/cli.js"

/** `ribbon company …` and `ribbon keys …`, run as child processes on a temporary embedded DATA_DIR. */

describe.skipIf(onPostgresRun)("ribbon company and keys", () => {
  it.scopedLive(
    "creates a company with its first key, manages keys and rate limits",
    () =>
      withNode(
        Effect.gen(function* () {
          const env = { DATA_DIR: yield* tempDataDir }
          const ribbon = (args: ReadonlyArray<string>) => run(args, env)
          const created = yield* ribbon(["company", "create", "--name", "Acme Gifts", "--env", "live", "--json"])
          expect(created.code, created.stderr).toBe(0)
          const company = JSON.parse(created.stdout)
          expect(company).toEqual({
            companyId: expect.stringMatching(/^[A-Za-z0-9]{8,}$/),
            accountId: expect.stringMatching(/^[0-9a-f]{24}$/),
            environment: "live",
            apiKey: expect.stringMatching(/^[0-9a-f]{24}$/),
            apiKeyId: expect.stringMatching(/^[0-9a-f]{24}$/)
          })

          // Already live (created so): activating again changes nothing and names its live default account.
          const activated = yield* ribbon(["company", "activate", "--company", company.companyId, "--json"])
          expect(activated.code, activated.stderr).toBe(0)
          expect(JSON.parse(activated.stdout)).toEqual({
            companyId: company.companyId,
            accountId: company.accountId,
            created: false
          })

          const bad = yield* ribbon([
            "keys",
            "create",
            "--company",
            company.companyId,
            "--name",
            "x",
            "--permissions",
            "products:read,bogus"
          ])
          expect(bad.code).toBe(1)
          expect(bad.stdout + bad.stderr).toContain("--permissions")

          const key = yield* ribbon([
            "keys",
            "create",
            "--company",
            company.companyId,
            "--env",
            "live",
            "--name",
            "zapier",
            "--permissions",
            "products:read",
            "--json"
          ])
          expect(key.code, key.stderr).toBe(0)
          const second = JSON.parse(key.stdout)
          expect(second.apiKey).toMatch(/^[0-9a-f]{24}$/)

          const listed = yield* ribbon(["keys", "list", "--company", company.companyId, "--env", "live", "--json"])
          expect(listed.code, listed.stderr).toBe(0)
          const keys = JSON.parse(listed.stdout)
          expect(keys.map((k: any) => k.name).sort()).toEqual(["Default key", "zapier"])
          expect(listed.stdout).not.toContain(company.apiKey)
          expect(listed.stdout).not.toContain(second.apiKey)

          const revoked = yield* ribbon(["keys", "revoke", "--company", company.companyId, "--id", second.id])
          expect(revoked.code, revoked.stderr).toBe(0)

          const limits = yield* ribbon([
            "company",
            "limits",
            "--company",
            company.companyId,
            "--scope",
            "global",
            "--rate",
            "100",
            "--burst",
            "1000",
            "--json"
          ])
          expect(limits.code, limits.stderr).toBe(0)
          const shown = JSON.parse(limits.stdout)
          expect(shown.overrides).toEqual({ global: { rate: 100, burst: 1000 } })
          expect(shown.effective["authentication:write"]).toEqual({ rate: 5, burst: 10 })
        })
      ),
    420_000
  )
})
