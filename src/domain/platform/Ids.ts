import { Clock, Effect, Schema } from "effect"

/** Every resource id: 24 lowercase hex characters, 4 bytes of Unix seconds then 8 random bytes. */
export const Id = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{24}$/), Schema.brand("Id"))
export type Id = typeof Id.Type

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

/** A new id, time-ordered to the second, from the effect Clock and the platform's CSPRNG. */
export const makeId: Effect.Effect<Id> = Effect.map(Clock.currentTimeMillis, (millis) => {
  const seconds = Math.floor(millis / 1000)
    .toString(16)
    .padStart(8, "0")
  return Id.make(seconds + hex(globalThis.crypto.getRandomValues(new Uint8Array(8))))
})
