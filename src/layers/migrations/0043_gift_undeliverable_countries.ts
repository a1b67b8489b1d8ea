import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The countries where a gift had nothing to offer (docs/decisions/0073-gifts-that-reach-any-country.md): neither
 * what its campaign allows nor a digital gift within its budget could reach the country its recipient chose. One
 * row per gift and country, written with the `gift-undeliverable` event, so that the event is sent once per gift and
 * country, and the dashboard's gift detail lists them.
 *
 * - `company_webhook_endpoints.event_types` may now list all 9 event types (`gift-undeliverable` is the ninth).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE gift_undeliverable_countries (
      gift_id text NOT NULL REFERENCES gifts (id),
      country_code text NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (gift_id, country_code)
    )`
  yield* sql`
    ALTER TABLE company_webhook_endpoints
      DROP CONSTRAINT company_webhook_endpoints_event_types_check,
      ADD CONSTRAINT company_webhook_endpoints_event_types_check CHECK (
        jsonb_typeof(event_types) = 'array' AND jsonb_array_length(event_types) BETWEEN 1 AND 9)`
})
