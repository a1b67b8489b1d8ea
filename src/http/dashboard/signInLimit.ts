import { Effect, Option } from "effect"
import { clientSource } from "../AuthFailures.js"
import { AuthRateLimits, consume } from "../identity/AuthRateLimits.js"
import { tooManyAttemptsPage } from "./pages.js"

/**
 * The limit per source of the forms that take a password from someone signed out (sign-in, sign-up, joining by
 * an invitation): the OAuth sign-in's budget. Yields the 429 page to answer with once it is spent, else none.
 */
export const makeSignInFormLimit = Effect.map(AuthRateLimits, (limits) =>
  Effect.gen(function* () {
    const limited = yield* Effect.flip(consume(`sign-in:ip:${yield* clientSource}`, limits.signInPerIp)).pipe(
      Effect.option
    )
    return Option.map(limited, (error) => tooManyAttemptsPage(error.retryAfterSeconds))
  })
)
