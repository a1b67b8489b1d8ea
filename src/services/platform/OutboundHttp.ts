import type { LookupAddress } from "node:dns"
import { lookup as dnsLookup } from "node:dns/promises"
import type { IncomingHttpHeaders } from "node:http"
import { request } from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { rootCertificates } from "node:tls"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Data, Duration, Effect, Either, Layer, Option } from "effect"
import ipaddr from "ipaddr.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"

/**
 * Outbound HTTP requests to URLs that somebody else chose (agent callback URLs, client metadata documents), guarded against
 * server-side request forgery (docs/decisions/0030-callbacks-and-delivery.md, docs/webhooks.md):
 *
 * - the URL must be `https` (no credentials in it);
 * - its host is resolved, and every address it resolves to must be public: no loopback, private
 *   (RFC 1918), link-local, shared (CGNAT 100.64/10), unique-local (fc00::/7), multicast, unspecified,
 *   documentation, benchmarking or reserved address, nor an IPv4-mapped / NAT64 / 6to4 form of one;
 * - the connection goes to the addresses that were checked (the socket's `lookup` returns them), while
 *   the TLS server name (SNI), the certificate check and the `Host` header keep the original host name,
 *   so a second DNS answer cannot move the request elsewhere (no DNS rebinding);
 * - redirects are never followed: a 3xx is returned like any other status;
 * - the whole exchange (DNS included) has a time limit (10 s), and at most 1 KB of the response body is read;
 * - it never runs inside a database transaction (a defect): the transaction's connection would be held for
 *   the whole exchange, and on embedded PGlite, whose pool has one connection, every other statement of the
 *   instance would wait for the receiver (docs/operations.md).
 *
 * The time limit and the measured duration are network round trips, so they use a real clock (as
 * Signals does), not the ambient `Clock` a test may drive.
 */

export interface OutboundPolicyShape {
  /** Allow loopback addresses (127.0.0.0/8, ::1): for tests and local development only. */
  readonly allowLoopback: boolean
  /** Extra certificate authorities (PEM) trusted besides the system's, e.g. a test receiver's self-signed one. */
  readonly trustedCaPems: ReadonlyArray<string>
  /** The time limit for one whole request (connect, TLS, send, response head and body excerpt). */
  readonly timeout: Duration.Duration
  /** How much of a response body is read (bytes); the rest is discarded. */
  readonly maxResponseBytes: number
}

/** The policy outbound requests follow. Production: `OutboundPolicy.Default`. */
export class OutboundPolicy extends Context.Tag("OutboundPolicy")<OutboundPolicy, OutboundPolicyShape>() {
  static readonly defaults: OutboundPolicyShape = {
    allowLoopback: false,
    trustedCaPems: [],
    timeout: Duration.seconds(10),
    maxResponseBytes: 1024
  }
  /** Public addresses only, system CAs, 10 s, 1 KB. */
  static readonly Default: Layer.Layer<OutboundPolicy> = Layer.succeed(OutboundPolicy, OutboundPolicy.defaults)
  /** The defaults with some values changed. */
  static layer(options: Partial<OutboundPolicyShape>): Layer.Layer<OutboundPolicy> {
    return Layer.succeed(OutboundPolicy, { ...OutboundPolicy.defaults, ...options })
  }
}

/** The request was not sent: the URL or the addresses it resolves to break the policy. Not worth retrying. */
export class OutboundRefused extends Data.TaggedError("OutboundRefused")<{
  readonly url: string
  readonly reason: string
  readonly message: string
}> {}

/** The request was (maybe) sent, but no response came: DNS, connection, TLS or time limit. Worth retrying. */
export class OutboundFailed extends Data.TaggedError("OutboundFailed")<{
  readonly url: string
  readonly message: string
}> {}

export interface OutboundResponse {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  /** The first `maxResponseBytes` of the body, decoded as UTF-8 (NUL characters removed). */
  readonly body: string
  /** Whether the body was longer than what was read. */
  readonly truncated: boolean
  /** The address the request was sent to. */
  readonly address: string
  readonly durationMs: number
}

export interface OutboundRequest {
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
}

/** A GET's own limits, tighter or looser than the policy's (a client metadata document: 3 s, 5 KB). */
export interface OutboundGetOptions {
  readonly headers?: Readonly<Record<string, string>>
  readonly timeout?: Duration.Duration
  readonly maxResponseBytes?: number
}

// ---------------------------------------------------------------------------------------------------------
// Addresses

/** An address from its text: dotted-quad IPv4 or any IPv6 form; a zone (`%eth0`) is ignored. */
const parseAddress = (text: string): Option.Option<ipaddr.IPv4 | ipaddr.IPv6> => {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return Option.some(ipaddr.IPv4.parse(text))
  // ipaddr.js reads any IPv6 text ending in a dotted quad as IPv4-mapped (`::1.2.3.4` as `::ffff:102:304`),
  // so the quad is written as its two hex groups first.
  const address = text.replace(/%.*$/, "").replace(/:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/, (quad, ipv4: string) =>
    ipaddr.IPv4.isValidFourPartDecimal(ipv4)
      ? `:${ipaddr.IPv4.parse(ipv4)
          .toIPv4MappedAddress()
          .parts.slice(6)
          .map((group) => group.toString(16))
          .join(":")}`
      : quad
  )
  return ipaddr.IPv6.isValid(address) ? Option.some(ipaddr.IPv6.parse(address)) : Option.none()
}

/** An IPv4 (4 bytes) or IPv6 (16 bytes) address from its text, or none. A zone (`%eth0`) is ignored. */
export const parseIp = (text: string): Option.Option<Uint8Array> =>
  Option.map(parseAddress(text), (address) => Uint8Array.from(address.toByteArray()))

interface Range {
  readonly cidr: [ipaddr.IPv4 | ipaddr.IPv6, number]
  readonly reason: string
}

const range = (cidr: string, reason: string): Range => ({ cidr: ipaddr.parseCIDR(cidr), reason })

const inRange = (address: ipaddr.IPv4 | ipaddr.IPv6, { cidr }: Range) =>
  address.kind() === cidr[0].kind() && address.match(cidr)

const loopbackReason = "loopback"

/** IANA special-purpose IPv4 ranges that are not globally reachable (RFC 6890 and updates). */
const ipv4Refused: ReadonlyArray<Range> = [
  range("0.0.0.0/8", "unspecified ('this network')"),
  range("10.0.0.0/8", "private (RFC 1918)"),
  range("100.64.0.0/10", "shared address space (CGNAT, RFC 6598)"),
  range("127.0.0.0/8", loopbackReason),
  range("169.254.0.0/16", "link-local"),
  range("172.16.0.0/12", "private (RFC 1918)"),
  range("192.0.0.0/24", "IETF protocol assignments"),
  range("192.0.2.0/24", "documentation"),
  range("192.88.99.0/24", "6to4 relay anycast"),
  range("192.168.0.0/16", "private (RFC 1918)"),
  range("198.18.0.0/15", "benchmarking"),
  range("198.51.100.0/24", "documentation"),
  range("203.0.113.0/24", "documentation"),
  range("224.0.0.0/4", "multicast"),
  range("240.0.0.0/4", "reserved (or broadcast)")
]

/** IPv6 forms that carry an IPv4 address in their last 4 bytes: that address decides. */
const ipv6Embedding: ReadonlyArray<Range> = [range("::ffff:0:0/96", "IPv4-mapped"), range("64:ff9b::/96", "NAT64")]

const ipv6Refused: ReadonlyArray<Range> = [
  range("::/128", "unspecified"),
  range("::1/128", loopbackReason),
  range("::/96", "IPv4-compatible (deprecated)"),
  range("64:ff9b:1::/48", "local-use NAT64"),
  range("100::/64", "discard-only"),
  range("2001::/23", "IETF protocol assignments (Teredo…)"),
  range("2001:db8::/32", "documentation"),
  range("2002::/16", "6to4"),
  range("3fff::/20", "documentation"),
  range("fc00::/7", "unique-local"),
  range("fe80::/10", "link-local"),
  range("fec0::/10", "site-local (deprecated)"),
  range("ff00::/8", "multicast")
]

const globalUnicast = range("2000::/3", "")

/**
 * Why `address` (an IP address as text) may not be connected to under `policy`, or none when it is a
 * public address (or an allowed loopback one).
 */
export const addressRefusal = (
  address: string,
  policy: Pick<OutboundPolicyShape, "allowLoopback">
): Option.Option<string> => {
  const parsed = parseAddress(address)
  if (Option.isNone(parsed)) return Option.some("not an IP address")
  const ip = parsed.value
  const check = (ranges: ReadonlyArray<Range>) =>
    Option.flatMap(Option.fromNullable(ranges.find((r) => inRange(ip, r))), (r) =>
      r.reason === loopbackReason && policy.allowLoopback ? Option.none() : Option.some(r.reason)
    )
  if (ip.kind() === "ipv4") return check(ipv4Refused)
  const embedding = ipv6Embedding.find((r) => inRange(ip, r))
  if (embedding !== undefined) {
    const ipv4 = ipaddr.fromByteArray(ip.toByteArray().slice(12)).toString()
    return Option.map(addressRefusal(ipv4, policy), (reason) => `${embedding.reason} ${ipv4}: ${reason}`)
  }
  if (ipv6Refused.some((r) => inRange(ip, r))) return check(ipv6Refused)
  return inRange(ip, globalUnicast) ? Option.none() : Option.some("not a global unicast address")
}

/** The URL, when it may be requested at all (scheme, credentials); addresses are checked after resolving. */
export const checkOutboundUrl = (url: string): Either.Either<URL, OutboundRefused> => {
  const refuse = (reason: string) =>
    Either.left(new OutboundRefused({ url, reason, message: `refused to request ${url}: ${reason}` }))
  if (!URL.canParse(url)) return refuse("not a valid URL")
  const parsed = new URL(url)
  if (parsed.protocol !== "https:") return refuse(`the URL must be https, not ${parsed.protocol.slice(0, -1)}`)
  if (parsed.username !== "" || parsed.password !== "") return refuse("the URL must not contain credentials")
  if (parsed.hostname === "") return refuse("the URL has no host")
  return Either.right(parsed)
}

/** The host name of a URL without the brackets of an IPv6 literal. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** A socket `lookup` that answers with these (already checked) addresses, whatever it is asked. */
const pinnedLookup =
  (addresses: ReadonlyArray<LookupAddress>): LookupFunction =>
  (_hostname, options, callback) => {
    const family = options.family === 4 || options.family === "IPv4" ? 4 : options.family === 6 ? 6 : 0
    const usable = addresses.filter((a) => family === 0 || a.family === family)
    if (usable.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`no checked IPv${family} address`)
      error.code = "ENOTFOUND"
      return callback(error, "", 0)
    }
    if (options.all === true)
      return callback(
        null,
        usable.map((a) => ({ ...a }))
      )
    callback(null, usable[0].address, usable[0].family)
  }

const realClock = Clock.make()

const describeError = (error: unknown) => {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code
    return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message
  }
  return String(error)
}

/** At most `max` bytes of UTF-8 text; a character cut in half is dropped, NUL characters are removed. */
const excerpt = (bytes: Buffer, max: number) => {
  let text = new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(0, max)).replaceAll("\u0000", "")
  // A cut multi-byte character decodes as U+FFFD (3 bytes): trim until the text fits.
  while (Buffer.byteLength(text) > max) text = text.slice(0, -1)
  return text
}

/** Dies inside a `sql.withTransaction`: no network round trip may hold a database connection. */
const outsideTransaction = (what: string) =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
    Option.isSome(transaction)
      ? Effect.dieMessage(`OutboundHttp.${what} inside a database transaction: run it before or after the transaction`)
      : Effect.void
  )

export class OutboundHttp extends Effect.Service<OutboundHttp>()("OutboundHttp", {
  effect: Effect.gen(function* () {
    const policy = yield* OutboundPolicy

    /** The addresses of `url`'s host, every one of them allowed by the policy. */
    const resolve = (url: URL, raw: string) =>
      Effect.gen(function* () {
        const host = bareHost(url)
        const family = isIP(host)
        const addresses: ReadonlyArray<LookupAddress> =
          family !== 0
            ? [{ address: host, family }]
            : yield* Effect.tryPromise({
                try: () => dnsLookup(host, { all: true, verbatim: true }),
                catch: (error) =>
                  new OutboundFailed({ url: raw, message: `could not resolve ${host}: ${describeError(error)}` })
              })
        if (addresses.length === 0) {
          return yield* new OutboundFailed({ url: raw, message: `${host} resolves to no address` })
        }
        for (const { address } of addresses) {
          const refusal = addressRefusal(address, policy)
          if (Option.isSome(refusal)) {
            const reason =
              address === host
                ? `${address} is not a public address (${refusal.value})`
                : `${host} resolves to ${address}, not a public address (${refusal.value})`
            return yield* new OutboundRefused({ url: raw, reason, message: `refused to request ${raw}: ${reason}` })
          }
        }
        return addresses
      })

    const send = (
      url: URL,
      raw: string,
      addresses: ReadonlyArray<LookupAddress>,
      req: OutboundRequest & { readonly method: "GET" | "POST"; readonly maxResponseBytes: number }
    ) =>
      Effect.async<Omit<OutboundResponse, "durationMs">, OutboundFailed>((resume) => {
        let settled = false
        const finish = (effect: Effect.Effect<Omit<OutboundResponse, "durationMs">, OutboundFailed>) => {
          if (settled) return
          settled = true
          resume(effect)
        }
        const body = Buffer.from(req.body)
        const outgoing = request(
          {
            protocol: "https:",
            hostname: bareHost(url),
            port: url.port === "" ? 443 : Number(url.port),
            path: `${url.pathname}${url.search}`,
            method: req.method,
            headers: req.method === "POST" ? { ...req.headers, "content-length": String(body.length) } : req.headers,
            // A fresh connection per request: no pooled socket outlives the address check.
            agent: false,
            lookup: pinnedLookup(addresses),
            ...(policy.trustedCaPems.length > 0 ? { ca: [...rootCertificates, ...policy.trustedCaPems] } : {})
          },
          (response) => {
            const chunks: Array<Buffer> = []
            let size = 0
            let truncated = false
            const done = () => {
              const bytes = Buffer.concat(chunks)
              finish(
                Effect.succeed({
                  status: response.statusCode ?? 0,
                  headers: response.headers,
                  body: excerpt(bytes, req.maxResponseBytes),
                  truncated: truncated || bytes.length > req.maxResponseBytes,
                  address: outgoing.socket?.remoteAddress ?? addresses[0].address
                })
              )
            }
            response.on("data", (chunk: Buffer) => {
              chunks.push(chunk)
              size += chunk.length
              if (size > req.maxResponseBytes) {
                truncated = true
                done()
                response.destroy()
              }
            })
            response.on("end", done)
            // The status line and headers arrived: a body cut short still counts as this response.
            response.on("close", done)
            response.on("error", done)
          }
        )
        outgoing.on("error", (error) =>
          finish(Effect.fail(new OutboundFailed({ url: raw, message: `request failed: ${describeError(error)}` })))
        )
        if (req.method === "POST") outgoing.end(body)
        else outgoing.end()
        return Effect.sync(() => outgoing.destroy())
      })

    /** One request of `post` or `get`: the URL and its addresses checked, then sent within `timeout`. */
    const exchange = (
      url: string,
      req: OutboundRequest & { readonly method: "GET" | "POST"; readonly maxResponseBytes: number },
      timeout: Duration.Duration
    ) =>
      Effect.gen(function* () {
        yield* Effect.annotateCurrentSpan({ "http.request.method": req.method, "url.full": url })
        yield* outsideTransaction(req.method === "POST" ? "post" : "get")
        const checked = checkOutboundUrl(url)
        if (Either.isLeft(checked)) return yield* checked.left
        const parsed = checked.right
        yield* Effect.annotateCurrentSpan({ "server.address": parsed.hostname })
        const started = yield* realClock.currentTimeMillis
        const response = yield* resolve(parsed, url).pipe(
          Effect.flatMap((addresses) => send(parsed, url, addresses, req)),
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () => new OutboundFailed({ url, message: `no response within ${Duration.format(timeout)}` })
          }),
          Effect.withClock(realClock)
        )
        const durationMs = (yield* realClock.currentTimeMillis) - started
        yield* Effect.annotateCurrentSpan({ "http.response.status_code": response.status })
        return { ...response, durationMs } satisfies OutboundResponse
      })

    /**
     * POSTs `body` to `url` under the policy. A response of any status (3xx included, never followed)
     * succeeds; `OutboundRefused` means nothing was sent, `OutboundFailed` that no response came. Its span
     * is the request's client span; the URL's query values are redacted when it is exported
     * (src/layers/Telemetry.ts).
     */
    const post = Effect.fn("OutboundHttp.post", { kind: "client" })((url: string, req: OutboundRequest) =>
      exchange(url, { ...req, method: "POST", maxResponseBytes: policy.maxResponseBytes }, policy.timeout)
    )

    /**
     * GETs `url` under the same rules as `post` (addresses checked and pinned, no redirect followed), with
     * the time limit and body size of `options` when given, else the policy's.
     */
    const get = Effect.fn("OutboundHttp.get", { kind: "client" })((url: string, options: OutboundGetOptions = {}) =>
      exchange(
        url,
        {
          method: "GET",
          body: "",
          headers: options.headers ?? {},
          maxResponseBytes: options.maxResponseBytes ?? policy.maxResponseBytes
        },
        options.timeout ?? policy.timeout
      )
    )

    /**
     * Whether `url` may be requested under the policy, sending nothing: the URL rules, then every address
     * its host resolves to (within the time limit). `screen` runs it on the URLs requests give; `post`
     * checks again on every request, since DNS answers change.
     */
    const check = Effect.fn("OutboundHttp.check")(function* (url: string) {
      yield* outsideTransaction("check")
      const checked = checkOutboundUrl(url)
      if (Either.isLeft(checked)) return yield* checked.left
      yield* resolve(checked.right, url).pipe(
        Effect.timeoutFail({
          duration: policy.timeout,
          onTimeout: () =>
            new OutboundFailed({ url, message: `no DNS answer within ${Duration.format(policy.timeout)}` })
        }),
        Effect.withClock(realClock)
      )
    })

    /**
     * `check` for a URL a request gives (a company endpoint's `url`, an agent's `callbackUrl`): a URL the
     * policy refuses, or whose host does not resolve now, is a 400 on `field`, so a mistake shows at once
     * rather than in a delivery log.
     */
    const screen = Effect.fn("OutboundHttp.screen")(function* (field: string, url: string) {
      yield* check(url).pipe(
        Effect.catchTags({
          OutboundRefused: (refused) => Effect.fail(InvalidRequest.field(field, refused.reason)),
          OutboundFailed: (failed) => Effect.fail(InvalidRequest.field(field, failed.message))
        })
      )
    })

    return { post, get, check, screen } as const
  })
}) {}
