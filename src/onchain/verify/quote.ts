// The checks of a quote: its arithmetic, its fees, its amount and its expiry.
import { toRawAmount } from '../../core/amounts.js';
import type { Fail } from './calls.js';
import { LIMITS_ROOM_DIVISOR, MAX_DATE_MS, MAX_DECIMALS } from './options.js';
import type { QuoteFacts, RouteFacts } from './summary.js';

/** The quote's figures in base units. */
export type QuoteFigures = Pick<QuoteFacts, 'amountInRaw' | 'amountOutRaw' | 'providerFeeRaw' | 'gasFeeRaw'>;

/**
 * Quote, its arithmetic: the provider fee is taken out of the amount, and what arrives is the rest,
 * in the destination's decimals, rounded down. A relayer may round by one base unit; it may not
 * keep more.
 */
export function checkArithmetic(route: RouteFacts['route'], figures: QuoteFigures, fail: Fail): void {
  const { amountInRaw, amountOutRaw, providerFeeRaw } = figures;
  // A uint256 holds 77 decimal digits; more decimals is no token, and 10^decimals would be a
  // number large enough to stall the verifier.
  if (route.from.decimals > MAX_DECIMALS || route.to.decimals > MAX_DECIMALS) {
    fail(
      'route.tokenDecimals',
      'a token of the route has more decimals than a uint256 has digits',
      `at most ${MAX_DECIMALS}`,
      Math.max(route.from.decimals, route.to.decimals),
    );
    return; // nothing to convert with
  }
  if (providerFeeRaw >= amountInRaw) {
    fail(
      'quote.arithmetic',
      'the provider fee is not below the amount',
      `below ${amountInRaw}`,
      providerFeeRaw,
    );
    return;
  }
  const net = amountInRaw - providerFeeRaw;
  const scale = route.to.decimals - route.from.decimals;
  const expectedOut = scale >= 0 ? net * 10n ** BigInt(scale) : net / 10n ** BigInt(-scale);
  if (amountOutRaw > expectedOut + 1n || amountOutRaw + 1n < expectedOut) {
    fail(
      'quote.arithmetic',
      'the amount delivered is not the amount less the provider fee',
      expectedOut,
      amountOutRaw,
    );
  }
}

/** Quote, its fees: the built-in ceilings, then the partner's policy. Returns the fees in bps, rounded up. */
export function checkFees(facts: RouteFacts, figures: QuoteFigures, fail: Fail): number {
  const { amountInRaw, providerFeeRaw, gasFeeRaw } = figures;
  const { maxFeeBps } = facts.options;
  // Built-in ceilings that hold with any policy: production never charges this much.
  if (gasFeeRaw >= amountInRaw)
    fail('quote.gasFeeCeiling', 'the gas fee is not below the amount', `below ${amountInRaw}`, gasFeeRaw);
  if (providerFeeRaw * 4n >= amountInRaw) {
    fail(
      'quote.providerFeeCeiling',
      'the provider fee is not below a quarter of the amount',
      `below ${amountInRaw / 4n}`,
      providerFeeRaw,
    );
  }
  const feesRaw = providerFeeRaw + gasFeeRaw;
  const feeBps = amountInRaw > 0n ? Number((feesRaw * 10_000n + amountInRaw - 1n) / amountInRaw) : 10_000;
  if (maxFeeBps !== undefined && feesRaw * 10_000n > BigInt(maxFeeBps) * amountInRaw) {
    fail(
      'quote.maxFeeBps',
      'provider fee plus gas fee is above the maxFeeBps policy',
      `at most ${maxFeeBps} bps`,
      `${feeBps} bps`,
    );
  }
  return feeBps;
}

/** Quote, its amount: within the route's limits, and the amount asked when one was. */
export function checkAmount(facts: RouteFacts, amountInRaw: bigint, fail: Fail): void {
  const { route, amount } = facts;
  if (route.limits) {
    const min = BigInt(route.limits.minAmountRaw);
    const max = BigInt(route.limits.maxAmountRaw);
    if (amountInRaw > max + max / LIMITS_ROOM_DIVISOR || amountInRaw < min - min / LIMITS_ROOM_DIVISOR) {
      fail(
        'quote.limits',
        "the amount is outside the route's limits (with room for limits that moved)",
        `${min} to ${max}`,
        amountInRaw,
      );
    }
  }
  if (amount === undefined) return;
  let asked: bigint | undefined;
  try {
    asked = toRawAmount(amount, route.from.decimals);
  } catch {
    fail(
      'request.amount',
      `the amount asked has more decimals than ${route.from.symbol} (${route.from.decimals})`,
    );
  }
  if (asked !== undefined && asked !== amountInRaw) {
    fail('request.amount', 'the batch deposits another amount than asked', asked, amountInRaw);
  }
}

/** Quote, its expiry: valid long enough after `now` to sign and submit. Returns the expiry in ms. */
export function checkExpiry(facts: RouteFacts, fail: Fail): number {
  const { quote, nowMs } = facts;
  const expiresAt = Date.parse(quote.expiresAt);
  const margin = facts.options.expiryMarginMs;
  if (!(expiresAt - nowMs > margin)) {
    fail(
      'quote.expiry',
      `the quote expires in less than ${margin} ms`,
      nowMs + margin <= MAX_DATE_MS
        ? `after ${new Date(nowMs + margin).toISOString()}`
        : `${margin} ms from now`,
      quote.expiresAt,
    );
  }
  return expiresAt;
}
