import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema, Struct } from "effect"
import { ReceiptPreference, SavedAddress, User } from "../../domain/identity/Users.js"

/** A user as stored: the profile with its password hash and creation time. */
export const UserRow = Schema.Struct({
  ...Struct.omit(User.fields, "createdAt"),
  passwordHash: Schema.String,
  createdAt: Schema.DateFromSelf
})
export type UserRow = typeof UserRow.Type

/** A new user's row, its columns in the order they are inserted. */
const NewUserRow = UserRow.pick(
  "id",
  "email",
  "passwordHash",
  "displayName",
  "phone",
  "defaultCountry",
  "receiptPreference",
  "createdAt"
)

export const toUser = (row: Omit<UserRow, "passwordHash">) =>
  new User({
    id: row.id,
    email: row.email,
    displayName: row.displayName,
    phone: row.phone,
    defaultCountry: row.defaultCountry,
    receiptPreference: row.receiptPreference,
    createdAt: new Date(row.createdAt).toISOString()
  })

/** The profile columns a change sets. */
export const UserChange = Schema.Struct({
  displayName: Schema.optional(Schema.NullOr(Schema.String)),
  phone: Schema.optional(Schema.NullOr(Schema.String)),
  defaultCountry: Schema.optional(Schema.String),
  receiptPreference: Schema.optional(ReceiptPreference)
})
export type UserChange = typeof UserChange.Type

/** A saved address as stored: exactly the SavedAddress resource's fields. */
const AddressRow = Schema.Struct(SavedAddress.fields)

/** A new saved address's row, its columns in the order they are inserted. */
export const NewAddressRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  ...Struct.omit(SavedAddress.fields, "id"),
  createdAt: Schema.DateFromSelf
})
export type NewAddressRow = typeof NewAddressRow.Type

/**
 * The `users` and `user_addresses` tables. Only the identity context's services use it; other contexts ask
 * `Users`. Unexpected database errors are defects.
 */
export class UsersRepo extends Effect.Service<UsersRepo>()("UsersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findById = SqlSchema.findOne({
      Request: Schema.String,
      Result: UserRow,
      execute: (id) => sql`SELECT * FROM users WHERE id = ${id}`
    })

    /** Inserts the user unless the e-mail is taken: the row, or none. */
    const insert = SqlSchema.findOne({
      Request: NewUserRow,
      Result: UserRow,
      execute: (row) => sql`
        INSERT INTO users ${sql.insert(row)} ON CONFLICT DO NOTHING RETURNING *`
    })

    const findByEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: UserRow,
      execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email})`
    })

    const findReceiptPreference = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ receiptPreference: ReceiptPreference }),
      execute: (id) => sql`SELECT receipt_preference FROM users WHERE id = ${id}`
    })

    const update = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, set: UserChange }),
      Result: UserRow,
      execute: ({ id, set }) => sql`UPDATE users SET ${sql.update(set)} WHERE id = ${id} RETURNING *`
    })

    /** Locks the user's row until the transaction ends. */
    const lock = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`SELECT id FROM users WHERE id = ${id} FOR UPDATE`
    })

    const addresses = SqlSchema.findAll({
      Request: Schema.String,
      Result: AddressRow,
      execute: (userId) => sql`
        SELECT * FROM user_addresses WHERE user_id = ${userId} ORDER BY is_default DESC, created_at, id`
    })

    const countAddresses = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ count: Schema.Number }),
      execute: (userId) => sql`
        SELECT count(*)::int AS count FROM user_addresses WHERE user_id = ${userId}`
    })

    const clearDefaultAddress = SqlSchema.void({
      Request: Schema.String,
      execute: (userId) => sql`UPDATE user_addresses SET is_default = false WHERE user_id = ${userId}`
    })

    const insertAddress = SqlSchema.single({
      Request: NewAddressRow,
      Result: AddressRow,
      execute: (row) => sql`INSERT INTO user_addresses ${sql.insert(row)} RETURNING *`
    })

    /** Deletes one of the user's addresses: whether it was the default, or none when there was no such address. */
    const deleteAddress = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.String, addressId: Schema.String }),
      Result: Schema.Struct({ isDefault: Schema.Boolean }),
      execute: ({ userId, addressId }) => sql`
        DELETE FROM user_addresses WHERE id = ${addressId} AND user_id = ${userId} RETURNING is_default`
    })

    /** Makes the user's oldest address the default. */
    const defaultOldestAddress = SqlSchema.void({
      Request: Schema.String,
      execute: (userId) => sql`
        UPDATE user_addresses SET is_default = true WHERE id = (
          SELECT id FROM user_addresses WHERE user_id = ${userId} ORDER BY created_at, id LIMIT 1)`
    })

    return {
      findById: Effect.fn("UsersRepo.findById")((id: string) => Effect.orDie(findById(id))),
      insert: Effect.fn("UsersRepo.insert")((row: typeof NewUserRow.Type) => Effect.orDie(insert(row))),
      findByEmail: Effect.fn("UsersRepo.findByEmail")((email: string) => Effect.orDie(findByEmail(email))),
      receiptPreference: Effect.fn("UsersRepo.receiptPreference")((id: string) =>
        Effect.map(
          Effect.orDie(findReceiptPreference(id)),
          Option.map((row) => row.receiptPreference)
        )
      ),
      update: Effect.fn("UsersRepo.update")((id: string, set: UserChange) => Effect.orDie(update({ id, set }))),
      lock: Effect.fn("UsersRepo.lock")((id: string) => Effect.orDie(lock(id))),
      addresses: Effect.fn("UsersRepo.addresses")((userId: string) => Effect.orDie(addresses(userId))),
      countAddresses: Effect.fn("UsersRepo.countAddresses")((userId: string) =>
        Effect.map(Effect.orDie(countAddresses(userId)), (row) => row.count)
      ),
      clearDefaultAddress: Effect.fn("UsersRepo.clearDefaultAddress")((userId: string) =>
        Effect.orDie(clearDefaultAddress(userId))
      ),
      insertAddress: Effect.fn("UsersRepo.insertAddress")((row: NewAddressRow) => Effect.orDie(insertAddress(row))),
      deleteAddress: Effect.fn("UsersRepo.deleteAddress")((userId: string, addressId: string) =>
        Effect.orDie(deleteAddress({ userId, addressId }))
      ),
      defaultOldestAddress: Effect.fn("UsersRepo.defaultOldestAddress")((userId: string) =>
        Effect.orDie(defaultOldestAddress(userId))
      )
    } as const
  })
}) {}
