import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Stock availability changes, for `stock-availability-updates` webhooks (docs/decisions/0050-company-webhooks.md,
 * docs/webhooks.md "Stock availability").
 *
 * A variant is available in a country when its location has stock (or does not track it) and ships there.
 * A variant has one location, so a row change of `variant_locations` says everything: the trigger compares
 * the countries where the old row made the variant available with the new row's, and records one row in
 * `stock_availability_changes` per country that differs (stock to zero, a restock, a country added to or
 * removed from `ships_to`, a location added or deleted). Every writer of stock, now and later, is covered,
 * and nothing is written when an order leaves stock above zero. A catalog load sets `ribbon.catalog_load`
 * for its transaction and records nothing. The rows are an outbox: the notifier takes
 * them in order of `id`, batched per window, and deletes them as it sends.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE stock_availability_changes (
      id bigserial PRIMARY KEY,
      variant_id text NOT NULL,
      country_code text NOT NULL,
      available boolean NOT NULL
    )`
  yield* sql`
    CREATE FUNCTION record_stock_availability() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      before text[] := '{}';
      after text[] := '{}';
      variant text;
    BEGIN
      -- A catalog load (the seed) is not a change of availability anyone follows.
      IF current_setting('ribbon.catalog_load', true) = 'on' THEN RETURN NULL; END IF;
      IF TG_OP <> 'INSERT' AND (OLD.stock IS NULL OR OLD.stock > 0) THEN before := OLD.ships_to; END IF;
      IF TG_OP <> 'DELETE' AND (NEW.stock IS NULL OR NEW.stock > 0) THEN after := NEW.ships_to; END IF;
      IF before @> after AND after @> before THEN RETURN NULL; END IF;
      variant := CASE WHEN TG_OP = 'DELETE' THEN OLD.variant_id ELSE NEW.variant_id END;
      INSERT INTO stock_availability_changes (variant_id, country_code, available)
        SELECT variant, code, false FROM unnest(before) AS code WHERE NOT code = ANY (after)
        UNION ALL
        SELECT variant, code, true FROM unnest(after) AS code WHERE NOT code = ANY (before);
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER variant_locations_availability
      AFTER INSERT OR UPDATE OF stock, ships_to OR DELETE ON variant_locations
      FOR EACH ROW EXECUTE FUNCTION record_stock_availability()`
})
