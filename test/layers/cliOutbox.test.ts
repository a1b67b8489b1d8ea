import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { onPostgresRun, run, serve, tempDataDir, withNode } from "../support/cli.js"
import { DashboardBrowser, newEmail } from "../support/dashboard.js"

/**
 * `ribbon outbox`, run as child processes beside a running `ribbon serve` on a temporary embedded DATA_DIR: a
 * company signed up and an invitation sent in the dashboard, then the invitation e-mail printed by the CLI (as
 * plain text through a pipe, and as JSON with its link), all of the outbox or one company's; refused in production
 * but for a sandbox company, as the dashboard's outbox page is.
 */

describe.skipIf(onPostgresRun)("ribbon outbox", () => {
  it.scopedLive(
    "prints the newest messages with their links; in production only a sandbox company's",
    () =>
      withNode(
        Effect.gen(function* () {
          const dataDir = yield* tempDataDir
          const server = yield* serve(dataDir)
          const owner = new DashboardBrowser(server.url)
          yield* Effect.promise(() => owner.signUp("Outbox Gifts"))
          const home = yield* Effect.promise(() => owner.get("/dashboard"))
          const companyId = /Company id<\/dt><dd><code>([^<]+)<\/code>/.exec(home.text)![1]!
          const invitee = newEmail("invitee")
          const invited = yield* Effect.promise(() =>
            owner.submit(
              "/dashboard/members",
              { email: invitee, role: "viewer", accounts: "all" },
              "/dashboard/members/invitations"
            )
          )
          expect(invited.status).toBe(303)

          const env = { DATA_DIR: dataDir }
          const [plain, json, production, sandbox, unknown, badLimit] = yield* Effect.all(
            [
              run(["outbox"], { ...env, NO_COLOR: "" }),
              run(["outbox", "--company", companyId, "--limit", "5", "--json"], env),
              run(["outbox"], { ...env, NODE_ENV: "production" }),
              run(["outbox", "--company", companyId], { ...env, NODE_ENV: "production" }),
              run(["outbox", "--company", "nosuchcompany"], env),
              run(["outbox", "--limit", "0"], env)
            ],
            { concurrency: 3 }
          )

          // Through a pipe: plain text, one message a block, its link on a line of its own.
          expect(plain.code, plain.stderr).toBe(0)
          expect(plain.stdout).not.toContain("\x1b[")
          expect(plain.stdout).toMatch(
            new RegExp(
              `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC {2}e-mail to ${invitee} {2}\\(invitation\\)$`,
              "m"
            )
          )
          expect(plain.stdout).toMatch(/^ {2}.+ invites you to Outbox Gifts on Ribbon$/m)
          expect(plain.stdout).toMatch(/^ {2}http:\/\/\S+\/dashboard\/invitations\/\S+$/m)

          expect(json.code, json.stderr).toBe(0)
          const messages = JSON.parse(json.stdout)
          expect(messages).toEqual([
            {
              id: expect.any(String),
              createdAt: expect.stringMatching(/Z$/),
              kind: "invitation",
              channel: "email",
              to: invitee,
              subject: expect.stringContaining("invites you to Outbox Gifts"),
              body: expect.any(String),
              links: [expect.stringMatching(/\/dashboard\/invitations\//)]
            }
          ])

          // Production: not the whole outbox, but a sandbox company's, as on the dashboard.
          expect(production.code).toBe(1)
          expect(production.stdout).toBe("")
          expect(production.stderr).toContain("The outbox is not shown in production")
          expect(sandbox.code, sandbox.stderr).toBe(0)
          expect(sandbox.stdout).toContain(`e-mail to ${invitee}`)

          expect(unknown.code).toBe(1)
          expect(unknown.stderr).toContain("No company nosuchcompany.")
          expect(badLimit.code).toBe(1)
          expect(badLimit.stderr).toContain("--limit must be a whole number from 1 to 200")
        })
      ),
    420_000
  )
})
