import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Cause, Duration, Effect, Either, Exit, Layer, Option } from "effect"
import {
  addressRefusal,
  checkOutboundUrl,
  OutboundHttp,
  OutboundPolicy,
  type OutboundPolicyShape,
  parseIp
} from "../../../src/services/platform/OutboundHttp.js"
import { TestDatabase } from "../../support/database.js"
import { certificate, httpsReceiver as receiver } from "../../support/receiver.js"

/**
 * The SSRF-guarded POST against a real HTTPS receiver on loopback (test/support/receiver.ts), whose
 * self-signed certificate (for 127.0.0.1, ::1 and localhost) is made with openssl when the file loads.
 */

const testPolicy: Partial<OutboundPolicyShape> = { allowLoopback: true, trustedCaPems: [certificate.cert] }

const post = (url: string, policy: Partial<OutboundPolicyShape> = testPolicy, body = '{"hello":"world"}') =>
  Effect.flatMap(OutboundHttp, (http) =>
    http.post(url, { body, headers: { "content-type": "application/json", "x-test": "yes" } })
  ).pipe(Effect.provide(OutboundHttp.Default.pipe(Layer.provide(OutboundPolicy.layer(policy)))))

describe("addressRefusal", () => {
  const strict = { allowLoopback: false }
  const loose = { allowLoopback: true }

  it("refuses every non-public IPv4 and IPv6 address, with its reason", () => {
    const refused: Array<[string, string]> = [
      ["0.0.0.0", "unspecified"],
      ["10.1.2.3", "private"],
      ["100.64.0.1", "CGNAT"],
      ["100.127.255.254", "CGNAT"],
      ["127.0.0.1", "loopback"],
      ["127.8.9.10", "loopback"],
      ["169.254.169.254", "link-local"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.0.0.8", "IETF"],
      ["192.0.2.1", "documentation"],
      ["192.168.1.1", "private"],
      ["198.18.0.1", "benchmarking"],
      ["224.0.0.251", "multicast"],
      ["255.255.255.255", "reserved"],
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["::ffff:127.0.0.1", "IPv4-mapped 127.0.0.1: loopback"],
      ["::ffff:a9fe:a9fe", "IPv4-mapped 169.254.169.254: link-local"],
      ["::ffff:10.0.0.1", "IPv4-mapped 10.0.0.1: private"],
      ["64:ff9b::a00:1", "NAT64 10.0.0.1: private"],
      ["::127.0.0.1", "IPv4-compatible"],
      ["fc00::1", "unique-local"],
      ["fd12:3456::1", "unique-local"],
      ["fe80::1", "link-local"],
      ["fe80::1%eth0", "link-local"],
      ["ff02::1", "multicast"],
      ["2001:db8::1", "documentation"],
      ["2001:0:4136:e378::1", "IETF"],
      ["2002:a00:1::1", "6to4"],
      ["100::1", "discard"],
      ["4000::1", "not a global unicast address"]
    ]
    for (const [address, reason] of refused) {
      const refusal = addressRefusal(address, strict)
      expect(Option.isSome(refusal), address).toBe(true)
      expect(Option.getOrThrow(refusal), address).toContain(reason)
    }
  })

  it("accepts public addresses, and loopback only when the policy allows it", () => {
    for (const address of [
      "8.8.8.8",
      "1.1.1.1",
      "172.32.0.1",
      "100.128.0.1",
      "2606:4700:4700::1111",
      "::ffff:8.8.8.8"
    ]) {
      expect(addressRefusal(address, strict), address).toEqual(Option.none())
    }
    for (const address of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      expect(addressRefusal(address, loose), address).toEqual(Option.none())
    }
    // Allowing loopback allows nothing else.
    for (const address of ["10.0.0.1", "169.254.169.254", "fc00::1", "0.0.0.0", "::"]) {
      expect(Option.isSome(addressRefusal(address, loose)), address).toBe(true)
    }
  })

  it("parses IPv6 in every notation", () => {
    expect(parseIp("::ffff:127.0.0.1")).toEqual(parseIp("::ffff:7f00:1"))
    expect(parseIp("0:0:0:0:0:0:0:1")).toEqual(parseIp("::1"))
    expect(Option.map(parseIp("2001:db8::8:800:200c:417a"), (bytes) => bytes.length)).toEqual(Option.some(16))
    expect(parseIp("example.com")).toEqual(Option.none())
    expect(addressRefusal("example.com", strict)).toEqual(Option.some("not an IP address"))
  })

  it("checks the URL before anything else: https only, no credentials", () => {
    expect(Either.isRight(checkOutboundUrl("https://agent.example/callback?x=1"))).toBe(true)
    for (const [url, reason] of [
      ["http://agent.example/callback", "must be https"],
      ["ftp://agent.example/", "must be https"],
      ["https://user:secret@agent.example/", "credentials"],
      ["not a url", "not a valid URL"]
    ] as const) {
      const checked = checkOutboundUrl(url)
      expect(Either.isLeft(checked), url).toBe(true)
      if (Either.isLeft(checked)) expect(checked.left.reason).toContain(reason)
    }
  })
})

describe("OutboundHttp", () => {
  it.scoped("POSTs the body and headers, and returns the status, headers and body", () =>
    Effect.gen(function* () {
      const server = yield* receiver(() => ({ status: 202, headers: { "x-reply": "ok" }, body: "accepted" }))
      const response = yield* post(server.url("/hook?a=1"))
      expect(response.status).toBe(202)
      expect(response.headers["x-reply"]).toBe("ok")
      expect(response.body).toBe("accepted")
      expect(response.truncated).toBe(false)
      expect(response.address).toBe("127.0.0.1")
      expect(server.received).toHaveLength(1)
      const [request] = server.received
      expect(request.method).toBe("POST")
      expect(request.path).toBe("/hook?a=1")
      expect(request.body).toBe('{"hello":"world"}')
      expect(request.headers["content-type"]).toBe("application/json")
      expect(request.headers["content-length"]).toBe("17")
      expect(request.headers["x-test"]).toBe("yes")
      expect(request.headers.host).toBe(`127.0.0.1:${server.port}`)
      // No SNI for an IP address.
      expect(request.servername).toBe(false)
    })
  )

  it.scoped("connects to the checked address, keeping the host name for SNI, the certificate and Host", () =>
    Effect.gen(function* () {
      const server = yield* receiver(() => ({ status: 200 }))
      const response = yield* post(server.url("/named", "localhost"))
      expect(response.status).toBe(200)
      expect(response.address).toBe("127.0.0.1")
      const [request] = server.received
      expect(request.headers.host).toBe(`localhost:${server.port}`)
      expect(request.servername).toBe("localhost")
    })
  )

  it.scoped("refuses non-https URLs and non-public addresses without connecting", () =>
    Effect.gen(function* () {
      const server = yield* receiver(() => ({ status: 200 }))
      const strict: Partial<OutboundPolicyShape> = { allowLoopback: false, trustedCaPems: [certificate.cert] }
      const cases: Array<[string, string]> = [
        [`http://127.0.0.1:${server.port}/hook`, "must be https"],
        [server.url("/hook"), "127.0.0.1 is not a public address (loopback)"],
        [server.url("/hook", "localhost"), "localhost resolves to 127.0.0.1, not a public address (loopback)"],
        [server.url("/hook", "[::1]"), "loopback"],
        [server.url("/hook", "[::ffff:127.0.0.1]"), "IPv4-mapped 127.0.0.1: loopback"],
        // The WHATWG parser reads these as 127.0.0.1.
        [server.url("/hook", "0x7f000001"), "loopback"],
        [server.url("/hook", "2130706433"), "loopback"],
        [`https://user:pw@127.0.0.1:${server.port}/hook`, "credentials"],
        ["https://10.0.0.1/hook", "private"],
        ["https://192.168.1.10/hook", "private"],
        ["https://172.20.0.1/hook", "private"],
        ["https://169.254.169.254/latest/meta-data/", "link-local"],
        ["https://100.64.0.1/hook", "CGNAT"],
        ["https://[fd00::1]/hook", "unique-local"],
        ["https://[fe80::1]/hook", "link-local"],
        ["https://0.0.0.0/hook", "unspecified"],
        ["https://224.0.0.1/hook", "multicast"]
      ]
      for (const [url, reason] of cases) {
        const error = yield* Effect.flip(post(url, strict))
        expect(error._tag, url).toBe("OutboundRefused")
        expect(error._tag === "OutboundRefused" ? error.reason : error.message, url).toContain(reason)
      }
      // Allowing loopback does not open anything else.
      for (const url of ["https://10.0.0.1/hook", "https://169.254.169.254/", `http://127.0.0.1:${server.port}/`]) {
        expect((yield* Effect.flip(post(url)))._tag, url).toBe("OutboundRefused")
      }
      expect(server.connections()).toBe(0)
      expect(server.received).toHaveLength(0)
    })
  )

  it.scoped("does not follow a redirect: the 3xx is the response", () =>
    Effect.gen(function* () {
      const server = yield* receiver((request) =>
        request.path === "/start"
          ? { status: 302, headers: { location: `https://${request.headers.host}/elsewhere` } }
          : { status: 200 }
      )
      const response = yield* post(server.url("/start"))
      expect(response.status).toBe(302)
      expect(response.headers.location).toBe(server.url("/elsewhere"))
      expect(server.received.map((request) => request.path)).toEqual(["/start"])
    })
  )

  it.scoped("reads at most 1 KB of the response body", () =>
    Effect.gen(function* () {
      const server = yield* receiver(() => ({ status: 500, body: "é".repeat(5000) }))
      const response = yield* post(server.url("/big"))
      expect(response.status).toBe(500)
      expect(response.truncated).toBe(true)
      expect(Buffer.byteLength(response.body)).toBeLessThanOrEqual(1024)
      expect(response.body).toBe("é".repeat(512))
    })
  )

  it.scoped("fails when no response comes within the time limit", () =>
    Effect.gen(function* () {
      const server = yield* receiver(() => ({ status: 200, hang: true }))
      const error = yield* Effect.flip(post(server.url("/slow"), { ...testPolicy, timeout: Duration.millis(300) }))
      expect(error._tag).toBe("OutboundFailed")
      expect(error.message).toContain("no response within")
      expect(server.received).toHaveLength(1)
    })
  )

  it.scoped("verifies the certificate: a receiver whose CA is not trusted fails", () =>
    Effect.gen(function* () {
      const server = yield* receiver(() => ({ status: 200 }))
      const error = yield* Effect.flip(post(server.url("/untrusted"), { allowLoopback: true }))
      expect(error._tag).toBe("OutboundFailed")
      expect(error.message).toMatch(/certificate/i)
      expect(server.received).toHaveLength(0)
    })
  )

  it.effect("a host that does not resolve is a failure to retry, not a refusal", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(post("https://does-not-exist.invalid/hook"))
      expect(error._tag).toBe("OutboundFailed")
      expect(error.message).toContain("could not resolve does-not-exist.invalid")
    })
  )
})

describe("OutboundHttp inside a database transaction", () => {
  layer(TestDatabase, { timeout: "60 seconds" })((it) => {
    it.scoped("is a defect, and nothing is resolved or sent: the transaction would hold its connection", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const server = yield* receiver(() => ({ status: 204 }))
        const checks = Effect.flatMap(OutboundHttp, (http) => http.check(server.url("/hook"))).pipe(
          Effect.provide(OutboundHttp.Default.pipe(Layer.provide(OutboundPolicy.layer(testPolicy))))
        )
        for (const outbound of [post(server.url("/hook")), checks]) {
          const exit = yield* Effect.exit(sql.withTransaction(outbound))
          expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
          expect(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toContain("inside a database transaction")
        }
        expect(server.received).toHaveLength(0)
        // Outside the transaction, the same request goes out.
        expect((yield* post(server.url("/hook"))).status).toBe(204)
      })
    )
  })
})
