import { createHash } from "node:crypto"
import { Id } from "../../../domain/platform/Ids.js"

/**
 * Determinism for the seed: a small seeded PRNG (mulberry32) and ids derived from stable keys, so that the
 * same seed gives the same catalog, with the same ids, on every machine and every restart.
 */

/** A PRNG returning floats in [0, 1), from a 32-bit seed. Never use it for anything secret. */
export const mulberry32 = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** 32 bits of SHA-256 of a key: a PRNG seed per entity, stable whatever else the catalog holds. */
export const seedOf = (key: string) => createHash("sha256").update(key).digest().readUInt32BE(0)

export interface Rng {
  readonly next: () => number
  /** An integer in [min, max]. */
  readonly int: (min: number, max: number) => number
  readonly pick: <A>(items: ReadonlyArray<A>) => A
  readonly chance: (p: number) => boolean
  /** `count` distinct items, in their original order. */
  readonly sample: <A>(items: ReadonlyArray<A>, count: number) => ReadonlyArray<A>
}

export const rngFor = (key: string): Rng => {
  const next = mulberry32(seedOf(key))
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  return {
    next,
    int,
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
    sample: (items, count) => {
      const indexes = items.map((_, i) => i)
      for (let i = indexes.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1))
        ;[indexes[i], indexes[j]] = [indexes[j], indexes[i]]
      }
      return indexes
        .slice(0, Math.min(count, items.length))
        .sort((x, y) => x - y)
        .map((i) => items[i])
    }
  }
}

/**
 * A stable id in the house format (24 hex: 4 bytes of seconds, then 8 bytes): the seconds of `at`, then the
 * first 8 bytes of SHA-256 of `key`. Keys look like `product:gourmet-food-drink:3` or `gen:41`.
 */
export const stableId = (key: string, at: Date): Id =>
  Id.make(
    Math.floor(at.getTime() / 1000)
      .toString(16)
      .padStart(8, "0") + createHash("sha256").update(`ribbon:${key}`).digest("hex").slice(0, 16)
  )

/** When the curated catalog "was created": ids of reference entities carry this time. */
export const catalogEpoch = new Date("2025-01-06T09:00:00Z")

/** `Sea Salt Caramels` → `sea-salt-caramels`. */
export const slugify = (text: string) =>
  text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/&/g, " and ")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
