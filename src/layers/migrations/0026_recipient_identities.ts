import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A recipient's `externalId` and e-mail are unique per account, no longer per company (docs/company-api.md
 * "Recipients"): two accounts of one company may each hold a recipient with the same e-mail, so a key limited
 * to one of them makes its own rather than reaching the other's.
 *
 * A recipient lists several accounts, which no unique index over `recipients` can compare, so each
 * (account, field, value) a live recipient holds is a row of `recipient_identities`, whose primary key makes
 * it unique. A trigger keeps the rows in step with every write of `account_ids`, `external_id` and `email`
 * (a deleted recipient's are null, so it holds none): a write that would give one account two recipients
 * with one value fails with a unique violation, and of two racing writes one waits for the other and fails.
 * The old company-wide indexes become plain lookup indexes.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE recipient_identities (
      account_id text NOT NULL,
      field text NOT NULL CHECK (field IN ('externalId', 'email')),
      value text NOT NULL,
      recipient_id text NOT NULL REFERENCES recipients (id) ON DELETE CASCADE,
      PRIMARY KEY (account_id, field, value)
    )`
  yield* sql`CREATE INDEX recipient_identities_recipient ON recipient_identities (recipient_id)`
  yield* sql`
    CREATE FUNCTION record_recipient_identities() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM recipient_identities WHERE recipient_id = NEW.id;
      INSERT INTO recipient_identities (account_id, field, value, recipient_id)
        SELECT account, identity.field, identity.value, NEW.id
        FROM unnest(NEW.account_ids) AS account,
          (VALUES ('externalId', NEW.external_id), ('email', lower(NEW.email))) AS identity (field, value)
        WHERE identity.value IS NOT NULL;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER recipients_identities
      AFTER INSERT OR UPDATE OF account_ids, external_id, email ON recipients
      FOR EACH ROW EXECUTE FUNCTION record_recipient_identities()`
  // Today's rows are unique per company, hence per account.
  yield* sql`
    INSERT INTO recipient_identities (account_id, field, value, recipient_id)
      SELECT account, identity.field, identity.value, r.id
      FROM recipients r CROSS JOIN LATERAL unnest(r.account_ids) AS account
        CROSS JOIN LATERAL (VALUES ('externalId', r.external_id), ('email', lower(r.email))) AS identity (field, value)
      WHERE identity.value IS NOT NULL`
  yield* sql`DROP INDEX recipients_external_id`
  yield* sql`DROP INDEX recipients_email`
  yield* sql`CREATE INDEX recipients_external_id ON recipients (company_id, environment, external_id)
    WHERE external_id IS NOT NULL`
  yield* sql`CREATE INDEX recipients_email ON recipients (company_id, environment, lower(email))
    WHERE email IS NOT NULL`
})
