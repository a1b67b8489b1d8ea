import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Agentic Commerce Protocol vault tokens (docs/decisions/0079-acp-delegated-payment.md): what
 * `POST /agentic_commerce/delegate_payment` made. `token_hash` is the SHA-256 of the `vt_` token the agent holds (the
 * token itself is not kept); `payment_method` is the card as the payment provider saved it (its token, brand and
 * last four: never the number). The allowance bounds its use: at most `max_amount` in `currency`, before
 * `expires_at`, for the checkout session `checkout_session_id`, once (`used_at`, and the checkout it paid).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE acp_vault_tokens (
      id text PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      user_id text NOT NULL REFERENCES users (id),
      payment_method text NOT NULL,
      card_brand text NOT NULL,
      card_last4 text NOT NULL CHECK (card_last4 ~ '^[0-9]{4}$'),
      max_amount integer NOT NULL CHECK (max_amount > 0),
      currency text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
      checkout_session_id text NOT NULL,
      merchant_id text NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      checkout_id text REFERENCES checkouts (id),
      created_at timestamptz NOT NULL
    )`
})
