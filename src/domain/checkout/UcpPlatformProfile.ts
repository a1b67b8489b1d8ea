import { Schema } from "effect"

/**
 * A platform's UCP profile as Ribbon reads it (the protocol's `platform_profile`, release 2026-04-08): its version,
 * its capabilities with their `config` (the order capability's `webhook_url`), and the public keys it signs with.
 * Other members pass through unread.
 */

/** A public key in `signing_keys` (RFC 7517); EC keys carry `crv`, `x` and `y`. */
export const UcpSigningJwk = Schema.Struct({
  kid: Schema.String,
  kty: Schema.String,
  crv: Schema.optional(Schema.String),
  x: Schema.optional(Schema.String),
  y: Schema.optional(Schema.String),
  use: Schema.optional(Schema.String),
  alg: Schema.optional(Schema.String)
})
export type UcpSigningJwk = typeof UcpSigningJwk.Type

const CapabilityEntry = Schema.Struct({
  version: Schema.String,
  config: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

export const UcpPlatformProfile = Schema.Struct({
  ucp: Schema.Struct({
    version: Schema.String,
    capabilities: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Array(CapabilityEntry) }), {
      default: () => ({})
    })
  }),
  signing_keys: Schema.optionalWith(Schema.Array(UcpSigningJwk), { default: () => [] })
})
export type UcpPlatformProfile = typeof UcpPlatformProfile.Type

/** The order capability's `config.webhook_url` of a profile: where the platform takes order events, if anywhere. */
export const orderWebhookUrl = (profile: UcpPlatformProfile): string | undefined => {
  for (const entry of profile.ucp.capabilities["dev.ucp.shopping.order"] ?? []) {
    const url = entry.config?.webhook_url
    if (typeof url === "string" && URL.canParse(url)) return url
  }
  return undefined
}

/**
 * The profile URL of a `UCP-Agent` header (an RFC 8941 dictionary: `profile="https://…"`), or undefined when it
 * names none. Whether it may be fetched (https, a public address) is the outbound guard's to say.
 */
export const ucpAgentProfile = (header: string): string | undefined => {
  const profile = /(?:^|[;,]\s*)profile="(https?:\/\/[^"]+)"/.exec(header)?.[1]
  return profile !== undefined && URL.canParse(profile) ? profile : undefined
}
