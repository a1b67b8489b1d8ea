import { Duration, Option } from "effect"

/**
 * The limit on declined payments of one checkout (docs/checkout.md, "Declined cards"). Whoever holds a
 * payment link could otherwise try card after card on it (card testing); a person whose card is declined
 * a few times can still pay. The first `FREE_DECLINES` declines cost nothing; from then on the page takes
 * no payment until a wait has passed since the latest decline: 1 minute, doubling with each further
 * decline, at most 30 minutes (the whole payment window). The checkout stays `pending_payment` meanwhile.
 */
export const FREE_DECLINES = 5

const firstWait = Duration.minutes(1)
const longestWait = Duration.minutes(30)

/** A checkout's declined payments: how many, and when the latest was recorded. */
export interface Declines {
  readonly count: number
  readonly latestAt: Option.Option<Date>
}

/** The wait that follows a checkout's `count`-th decline: none before the `FREE_DECLINES`-th. */
export const waitAfterDeclines = (count: number): Duration.Duration =>
  count < FREE_DECLINES
    ? Duration.zero
    : Duration.min(Duration.times(firstWait, 2 ** Math.min(count - FREE_DECLINES, 16)), longestWait)

/** When the checkout takes payments again after its declines; none when nothing holds them back. */
export const paymentsResumeAt = (declines: Declines): Option.Option<Date> =>
  declines.count < FREE_DECLINES
    ? Option.none()
    : Option.map(
        declines.latestAt,
        (latest) => new Date(latest.getTime() + Duration.toMillis(waitAfterDeclines(declines.count)))
      )
