import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { AddressNotFound, EmailTaken, InvalidCredentials } from "../../domain/identity/Errors.js"
import { type NewAddress, SavedAddress, type UserPatch } from "../../domain/identity/Users.js"
import { InvalidRequest } from "../../domain/platform/Errors.js"
import { makeId } from "../../domain/platform/Ids.js"
import { Addresses } from "../catalog/Addresses.js"
import { nowDate } from "../platform/Time.js"
import { toUser, type UserChange, UsersRepo } from "./UsersRepo.js"

/**
 * People who sign in on the authorize pages, and their profile and saved addresses (spec "Profile";
 * docs/oauth.md). Passwords are hashed with scrypt; e-mail addresses are unique case-insensitively.
 */

/** scrypt cost: N = 2^14, r = 8, p = 1 (about 16 MiB and tens of milliseconds per hash). */
const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 } as const

const scryptAsync = (password: string, salt: Buffer, params: { N: number; r: number; p: number; keylen: number }) =>
  Effect.async<Buffer>((resume) => {
    scrypt(password.normalize("NFKC"), salt, params.keylen, { N: params.N, r: params.r, p: params.p }, (e, key) =>
      resume(e === null ? Effect.succeed(key) : Effect.die(e))
    )
  })

/** `scrypt$N$r$p$salt$hash` (base64url), so the cost can rise later without invalidating stored hashes. */
export const hashPassword = (password: string) =>
  Effect.gen(function* () {
    const salt = randomBytes(16)
    const key = yield* scryptAsync(password, salt, SCRYPT)
    return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64url")}$${key.toString("base64url")}`
  })

export const verifyPassword = (password: string, stored: string) =>
  Effect.gen(function* () {
    const [scheme, n, r, p, salt, hash] = stored.split("$")
    if (scheme !== "scrypt" || salt === undefined || hash === undefined) return false
    const expected = Buffer.from(hash, "base64url")
    const key = yield* scryptAsync(password, Buffer.from(salt, "base64url"), {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      keylen: expected.length
    })
    return timingSafeEqual(key, expected)
  })

/** A hash nobody's password matches, so an unknown e-mail costs as much as a wrong password. */
const decoyHash = Effect.runSync(Effect.cached(hashPassword(randomBytes(16).toString("hex"))))

export const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,63}$/

export const PASSWORD_MIN = 8
const PASSWORD_MAX = 200

/**
 * NIST SP 800-63B §5.1.1.2: new passwords are checked against a list of commonly used ones, here the 49,000 of
 * zxcvbn-ts (all lower case, so `Password1` counts as `password1`). Loaded once, on the first sign-up.
 */
const commonPasswords = Effect.runSync(
  Effect.cached(
    Effect.promise(() => import("@zxcvbn-ts/language-common")).pipe(
      Effect.map(({ dictionary }) => new Set(dictionary["passwords-common"]))
    )
  )
)

/** Why a new password is refused beyond its length, if it is: a common one, or the e-mail address itself. */
const passwordProblem = (password: string, email: string) =>
  Effect.gen(function* () {
    const lowered = password.normalize("NFKC").toLowerCase()
    const address = email.toLowerCase()
    if (lowered === address || lowered === address.slice(0, address.indexOf("@"))) {
      return Option.some("Must not be your e-mail address")
    }
    if ((yield* commonPasswords).has(lowered)) {
      return Option.some("Too common: it is on the lists attackers try first. Choose one that is harder to guess")
    }
    return Option.none()
  })

/** The demo user seeded outside production (printed by `npm start`). */
export const demoUser = { email: "demo@ribbon.dev", password: "ribbon-demo-2026", displayName: "Demo User" } as const

export interface NewUser {
  readonly email: string
  readonly password: string
  readonly displayName?: string | undefined
  readonly defaultCountry?: string | undefined
}

/** A new account that passed `Users.prepare`'s checks, its password hashed; only `Users.register` stores one. */
export interface PreparedUser {
  readonly [PreparedUserBrand]: true
  readonly email: string
  readonly passwordHash: string
  readonly displayName: string | null
  readonly defaultCountry: string
}
declare const PreparedUserBrand: unique symbol

export class Users extends Effect.Service<Users>()("Users", {
  dependencies: [Addresses.Default, UsersRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* UsersRepo
    const addresses = yield* Addresses

    /**
     * A new account, checked and its password hashed, not yet stored: the e-mail must look like one and the
     * password be 8 to 200 characters, not a common password and not the e-mail address. Hashing takes tens of
     * milliseconds, so a caller that stores the user in a transaction prepares it before (the dashboard's sign-up).
     */
    const prepare = Effect.fn("Users.prepare")(function* (input: NewUser) {
      const email = input.email.trim()
      if (!EMAIL.test(email)) return yield* InvalidRequest.field("email", "Expected an e-mail address")
      if (input.password.length < PASSWORD_MIN || input.password.length > PASSWORD_MAX) {
        return yield* InvalidRequest.field("password", `Expected ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`)
      }
      const problem = yield* passwordProblem(input.password, email)
      if (Option.isSome(problem)) return yield* InvalidRequest.field("password", problem.value)
      const displayName = input.displayName?.trim() || null
      if (displayName !== null && displayName.length > 80)
        return yield* InvalidRequest.field("displayName", "At most 80 characters")
      const passwordHash = yield* hashPassword(input.password)
      return { email, passwordHash, displayName, defaultCountry: input.defaultCountry ?? "US" } as PreparedUser
    })

    /** Stores a prepared account, in the caller's transaction if there is one; the e-mail must be free (case-insensitively). */
    const register = Effect.fn("Users.register")(function* (prepared: PreparedUser) {
      const created = yield* repo.insert({
        id: yield* makeId,
        email: prepared.email,
        passwordHash: prepared.passwordHash,
        displayName: prepared.displayName,
        phone: null,
        defaultCountry: prepared.defaultCountry,
        receiptPreference: "email",
        createdAt: yield* nowDate
      })
      if (Option.isNone(created))
        return yield* new EmailTaken({ message: "An account with this e-mail already exists." })
      return toUser(created.value)
    })

    /** A new account: `prepare`, then `register`. */
    const create = Effect.fn("Users.create")(function* (input: NewUser) {
      return yield* register(yield* prepare(input))
    })

    /** The user with that e-mail and password; the same failure whichever is wrong. */
    const authenticate = Effect.fn("Users.authenticate")(function* (email: string, password: string) {
      const row = Option.getOrUndefined(yield* repo.findByEmail(email.trim()))
      const ok = yield* verifyPassword(password, row?.passwordHash ?? (yield* decoyHash))
      if (row === undefined || !ok) {
        return yield* new InvalidCredentials({ message: "The e-mail or password is not right." })
      }
      return toUser(row)
    })

    /**
     * The signed-in user's password asked again before a sensitive change (turning two-factor sign-in off,
     * new recovery codes); the same failure as a wrong sign-in. The caller counts failures as sign-ins.
     */
    const confirmPassword = Effect.fn("Users.confirmPassword")(function* (id: string, password: string) {
      const row = Option.getOrUndefined(yield* repo.findById(id))
      const ok = yield* verifyPassword(password, row?.passwordHash ?? (yield* decoyHash))
      if (row === undefined || !ok) return yield* new InvalidCredentials({ message: "The password is not right." })
    })

    const get = Effect.fn("Users.get")(function* (id: string) {
      return Option.map(yield* repo.findById(id), toUser)
    })

    /** How the user wants receipts sent; none for an unknown user. One column, read in a payment's transaction. */
    const receiptPreference = Effect.fn("Users.receiptPreference")((id: string) => repo.receiptPreference(id))

    const update = Effect.fn("Users.update")(function* (id: string, patch: UserPatch) {
      const set: { -readonly [K in keyof UserChange]: UserChange[K] } = {}
      if (patch.displayName !== undefined) set.displayName = patch.displayName?.trim() || null
      if (patch.phone !== undefined) set.phone = patch.phone?.trim() || null
      if (patch.defaultCountry !== undefined) set.defaultCountry = patch.defaultCountry
      if (patch.receiptPreference !== undefined) set.receiptPreference = patch.receiptPreference
      const row = Object.keys(set).length === 0 ? yield* repo.findById(id) : yield* repo.update(id, set)
      return toUser(Option.getOrThrow(row))
    })

    /** The default address first, then the others oldest first. */
    const listAddresses = Effect.fn("Users.addresses")(function* (userId: string) {
      const rows = yield* repo.addresses(userId)
      return rows.map((row) => SavedAddress.make(row))
    })

    /** Saves an address (normalised); the first becomes the default, and `isDefault: true` moves it. */
    const addAddress = Effect.fn("Users.addAddress")(function* (userId: string, input: NewAddress) {
      const normalized = yield* addresses.normalize(input)
      const clean = (s: string | undefined) => s?.trim() || null
      return yield* sql
        .withTransaction(
          Effect.gen(function* () {
            // Lock the user's row so that two concurrent first addresses cannot both become the default.
            yield* repo.lock(userId)
            const count = yield* repo.countAddresses(userId)
            const isDefault = count === 0 || input.isDefault === true
            if (isDefault) yield* repo.clearDefaultAddress(userId)
            const saved = yield* repo.insertAddress({
              id: yield* makeId,
              userId,
              label: clean(input.label),
              firstName: input.firstName.trim(),
              lastName: input.lastName.trim(),
              phone: clean(input.phone),
              address1: normalized.address1 ?? null,
              address2: normalized.address2 ?? null,
              city: normalized.city ?? null,
              provinceCode: normalized.provinceCode ?? null,
              postalCode: normalized.postalCode ?? null,
              countryCode: normalized.countryCode,
              isDefault,
              createdAt: yield* nowDate
            })
            return SavedAddress.make(saved)
          })
        )
        .pipe(Effect.orDie)
    })

    /** Deletes one of the user's addresses; the oldest remaining one becomes the default if it was. */
    const deleteAddress = Effect.fn("Users.deleteAddress")(function* (userId: string, addressId: string) {
      const deleted = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const row = yield* repo.deleteAddress(userId, addressId)
            if (Option.isSome(row) && row.value.isDefault) yield* repo.defaultOldestAddress(userId)
            return Option.isSome(row)
          })
        )
        .pipe(Effect.orDie)
      if (!deleted) return yield* new AddressNotFound({ message: "No saved address with this id.", addressId })
    })

    /** The demo user, created once; returns whether this call created it. */
    const ensureDemoUser = Effect.fn("Users.ensureDemoUser")(function* () {
      const created = yield* create(demoUser).pipe(
        Effect.as(true),
        Effect.catchTag("EmailTaken", () => Effect.succeed(false)),
        Effect.catchTag("InvalidRequest", Effect.die)
      )
      return { ...demoUser, created }
    })

    return {
      prepare,
      register,
      create,
      authenticate,
      confirmPassword,
      get,
      receiptPreference,
      update,
      listAddresses,
      addAddress,
      deleteAddress,
      ensureDemoUser
    } as const
  })
}) {}
