import { Clock, Effect, Schema } from "effect"

/** Every resource id: 24 lowercase hex characters, 4 bytes of Unix seconds then 8 random bytes. */
export const Id = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{24}$/), Schema.brand("Id"))
export type Id = typeof Id.Type

/**
 * Random bytes drawn from the platform's CSPRNG a pool at a time, as node's own `randomUUID` draws them: one
 * call per 512 ids rather than one per id.
 */
const pool = new Uint8Array(4096)
let taken = pool.length

const byteHex = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"))

/** 8 random bytes as 16 hex characters. */
const randomHex = (): string => {
  if (taken === pool.length) {
    globalThis.crypto.getRandomValues(pool)
    taken = 0
  }
  let out = ""
  for (const end = taken + 8; taken < end; taken++) out += byteHex[pool[taken] as number]
  return out
}

/** A new id, time-ordered to the second, from the effect Clock and the platform's CSPRNG. */
export const makeId: Effect.Effect<Id> = Effect.map(Clock.currentTimeMillis, (millis) => {
  const seconds = Math.floor(millis / 1000)
    .toString(16)
    .padStart(8, "0")
  // Built to the pattern, so not checked against it again.
  return Id.make(seconds + randomHex(), { disableValidation: true })
})
