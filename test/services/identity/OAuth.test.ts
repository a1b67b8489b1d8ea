import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { AssertionJtisRepo } from "../../../src/services/identity/AssertionJtisRepo.js"
import {
  ClientMetadataLimits,
  clientIdUrlProblem,
  lifetimeOf
} from "../../../src/services/identity/ClientMetadataDocuments.js"
import {
  challengeScope,
  redirectUriMatches,
  redirectUriProblem,
  s256
} from "../../../src/services/identity/OAuthRules.js"
import { hashPassword, Users, verifyPassword } from "../../../src/services/identity/Users.js"
import { SigningKeys } from "../../../src/services/platform/SigningKeys.js"
import { TestDatabase } from "../../support/database.js"

describe("OAuth helpers", () => {
  it("computes S256 as RFC 7636 appendix B does", () => {
    expect(s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
  })

  it("matches redirect URIs exactly, except a loopback port (RFC 8252)", () => {
    const cases: ReadonlyArray<readonly [string, string, boolean]> = [
      ["https://a.example/cb", "https://a.example/cb", true],
      ["https://a.example/cb", "https://a.example/cb/", false],
      ["https://a.example/cb", "https://A.example/cb", false],
      ["https://a.example/cb", "https://a.example/cb?x=1", false],
      ["https://a.example:8443/cb", "https://a.example:9443/cb", false],
      ["http://127.0.0.1/cb", "http://127.0.0.1:53121/cb", true],
      ["http://127.0.0.1:8080/cb", "http://127.0.0.1:9090/cb", true],
      ["http://[::1]:1/cb?a=b", "http://[::1]:2/cb?a=b", true],
      ["http://localhost/cb", "http://localhost:3000/cb", true],
      ["http://localhost/cb", "http://127.0.0.1/cb", false],
      ["http://127.0.0.1/cb", "http://127.0.0.1:80/cb/", false],
      ["http://127.0.0.1/cb", "http://127.0.0.1.evil.example/cb", false],
      // A port no redirect can go to is no variant.
      ["http://127.0.0.1:8080/cb", "http://127.0.0.1:99999/cb", false],
      ["http://127.0.0.1:8080/cb", "http://127.0.0.1:0/cb", false],
      ["http://127.0.0.1:8080/cb", "http://127.0.0.1:65535/cb", true]
    ]
    for (const [registered, requested, expected] of cases) {
      expect(redirectUriMatches(registered, requested), `${registered} vs ${requested}`).toBe(expected)
    }
  })

  it("accepts https and loopback http redirect URIs only", () => {
    for (const ok of ["https://a.example/cb", "http://127.0.0.1/cb", "http://[::1]:8/cb", "http://localhost/cb"]) {
      expect(redirectUriProblem(ok), ok).toBeUndefined()
    }
    for (const bad of [
      "http://a.example/cb",
      "https://a.example/cb#f",
      "https://user:pw@a.example/cb",
      "com.example.app:/cb",
      "/relative",
      "http://127.0.0.2/cb",
      "http://127.0.0.1:0/cb",
      "https://a.example:70000/cb"
    ]) {
      expect(redirectUriProblem(bad), bad).toBeDefined()
    }
    expect(redirectUriProblem("http://127.0.0.1:99999/cb")).toContain("impossible port (99999)")
  })
})

describe("client ID metadata documents and scope challenges", () => {
  it("takes https URLs with a path as client ids, without credentials, fragment or dot segments", () => {
    for (const good of [
      "https://app.example/client.json",
      "https://app.example:8443/a/b?v=1",
      "https://app.example/"
    ]) {
      expect(clientIdUrlProblem(good), good).toBeUndefined()
    }
    for (const [bad, why] of [
      ["https://app.example", "path"],
      ["https://app.example?x=1", "path"],
      ["https://user:pw@app.example/c", "user name"],
      ["https://app.example/c#f", "fragment"],
      ["https://app.example/a/../c", ". or .."],
      ["https://app.example/./c", ". or .."],
      ["https://app.example/%2E%2E/c", ". or .."]
    ] as const) {
      expect(clientIdUrlProblem(bad), bad).toContain(why)
    }
  })

  it("keeps a document as its Cache-Control says, within the cap", () => {
    const limits = ClientMetadataLimits.defaultValue()
    const seconds = (cacheControl?: string) =>
      Duration.toSeconds(lifetimeOf(cacheControl === undefined ? {} : { "cache-control": cacheControl }, limits))
    expect(seconds()).toBe(300)
    expect(seconds("max-age=60")).toBe(60)
    expect(seconds("public, s-maxage=30, max-age=60")).toBe(30)
    expect(seconds("max-age=31536000")).toBe(24 * 60 * 60)
    expect(seconds("max-age=0")).toBe(0)
    expect(seconds("no-store")).toBe(0)
    expect(seconds("max-age=60, no-cache")).toBe(0)
    expect(seconds("private, max-age=60")).toBe(0)
    expect(seconds("max-age=soon")).toBe(0)
  })

  it("challenges with the token's scopes and the ones needed, in the canonical order", () => {
    expect(challengeScope(["catalog:read"], ["profile"])).toBe("profile catalog:read")
    expect(challengeScope(["orders:read", "catalog:read"], ["orders:write", "catalog:read"])).toBe(
      "catalog:read orders:read orders:write"
    )
  })
})

describe("Users and SigningKeys", () => {
  it.layer(
    Layer.mergeAll(Users.Default, SigningKeys.Default, AssertionJtisRepo.Default).pipe(
      Layer.provideMerge(TestDatabase)
    ),
    {
      timeout: 60_000
    }
  )((it) => {
    it.effect("hashes passwords with scrypt and a salt of their own", () =>
      Effect.gen(function* () {
        const a = yield* hashPassword("correct horse")
        const b = yield* hashPassword("correct horse")
        expect(a).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
        expect(a).not.toBe(b)
        expect(yield* verifyPassword("correct horse", a)).toBe(true)
        expect(yield* verifyPassword("correct horsE", a)).toBe(false)
        expect(yield* verifyPassword("correct horse", "bcrypt$whatever")).toBe(false)
      })
    )

    it.effect("keeps e-mails unique case-insensitively and seeds the demo user once", () =>
      Effect.gen(function* () {
        const users = yield* Users
        yield* users.create({ email: "Mixed@Example.com", password: "long enough" })
        const taken = yield* Effect.flip(users.create({ email: "mixed@example.COM", password: "long enough" }))
        expect(taken._tag).toBe("EmailTaken")
        const user = yield* users.authenticate("MIXED@example.com", "long enough")
        expect(user.email).toBe("Mixed@Example.com")
        expect((yield* users.ensureDemoUser()).created).toBe(true)
        expect((yield* users.ensureDemoUser()).created).toBe(false)
      })
    )

    it.effect("refuses common passwords (any case) and the e-mail address as a password, storing nothing", () =>
      Effect.gen(function* () {
        const users = yield* Users
        const refused = (email: string, password: string) =>
          Effect.map(Effect.flip(users.create({ email, password })), (e) => e.message)
        for (const common of ["12345678", "password", "qwertyuiop", "Password1", "ILOVEYOU", "iloveyou1"]) {
          expect(yield* refused("common@example.com", common), common).toMatch(/^password: Too common/)
        }
        expect(yield* refused("Grace.Hopper@example.com", "grace.hopper@EXAMPLE.com")).toBe(
          "password: Must not be your e-mail address"
        )
        expect(yield* refused("grace.hopper@example.com", "Grace.Hopper")).toBe(
          "password: Must not be your e-mail address"
        )
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM users WHERE lower(email) IN ('common@example.com', 'grace.hopper@example.com')`
        expect(stored[0]!.n).toBe(0)
        // A password that is on no list and is not the address is fine.
        const user = yield* users.create({ email: "grace.hopper@example.com", password: "grace hopper's compiler" })
        expect(user.email).toBe("grace.hopper@example.com")
      })
    )

    it.effect("takes a client assertion's jti once until it expires, however many ask at once", () =>
      Effect.gen(function* () {
        const jtis = yield* AssertionJtisRepo
        const now = new Date("2026-11-01T12:00:00Z")
        const until = new Date("2026-11-01T12:05:00Z")
        const taken = yield* Effect.all(
          Array.from({ length: 8 }, () => jtis.claim("client-a", "jti-1", until, now)),
          { concurrency: "unbounded" }
        )
        expect(taken.filter(Boolean)).toHaveLength(1)
        // Another client's jti of the same value is its own.
        expect(yield* jtis.claim("client-b", "jti-1", until, now)).toBe(true)
        // Once the assertion has expired, its jti may be taken again; the purge deletes every expired one.
        expect(yield* jtis.claim("client-a", "jti-2", until, now)).toBe(true)
        const later = new Date("2026-11-01T12:06:00Z")
        expect(yield* jtis.claim("client-a", "jti-1", new Date("2026-11-01T12:10:00Z"), later)).toBe(true)
        expect(yield* jtis.purge(later)).toBe(2)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ clientId: string; jti: string }>`
          SELECT client_id, jti FROM oauth_assertion_jtis ORDER BY client_id, jti`
        expect(rows).toEqual([{ clientId: "client-a", jti: "jti-1" }])
      })
    )

    it.effect("creates one signing key pair however many ask at once, and keeps it", () =>
      Effect.gen(function* () {
        const keys = yield* SigningKeys
        const all = yield* Effect.all(
          Array.from({ length: 5 }, () => keys.jwks()),
          { concurrency: "unbounded" }
        )
        for (const jwks of all) expect(jwks).toEqual(all[0])
        const { privatePkcs8 } = yield* keys.current()
        expect(privatePkcs8).toContain("BEGIN PRIVATE KEY")
      })
    )
  })
})
