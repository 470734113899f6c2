// How a rebuilt bridge batch differs from the baseline a person agreed to: the one shape that
// quote-aware `execute` decides on, `QuoteChangedError` carries and `describeQuoteChange` words.
import { readArgs } from '../core/args.js';
import { ArgumentError } from '../errors/client-errors.js';

/** One amount of the quote, before and after, in base units of its token. */
export interface AmountChange {
  baseline: { amount: string; amountRaw: bigint };
  next: { amount: string; amountRaw: bigint };
  /** `next − baseline`, in base units (negative when it fell). */
  deltaRaw: bigint;
  /**
   * The change in basis points, a whole number rounded towards refusing (away from zero for a
   * drop in what is received or a rise in a fee): of the baseline `amountOut` for `amountOut`,
   * of the bridged amount (`amountIn`, the fees' own token) for the fees.
   */
  deltaBps: number;
}

/** One time of the quote, before and after. */
export interface TimeChange {
  baseline: Date;
  next: Date;
}

/**
 * What moved between the baseline verified batch and the next one. Recipient, depositor, tokens
 * and chains cannot appear here: a difference in them is an error, never a question.
 */
export interface QuoteChange {
  amountOut: AmountChange;
  providerFee: AmountChange;
  gasFee: AmountChange;
  fillDeadline: TimeChange;
  quoteExpiresAt: TimeChange;
}

/** The figures of a verified batch that a comparison reads: a `VerifiedBridgeBatch` has them all. */
export interface ComparableBatch {
  wallet: string;
  source: { chainId: number; token: string; amountRaw: bigint; decimals: number };
  destination: { chainId: number; token: string; amount: string; amountRaw: bigint; decimals: number };
  providerFee: { amount: string; amountRaw: bigint };
  gasFee: { amount: string; amountRaw: bigint };
  fillDeadline: Date;
  quoteExpiresAt: Date;
}

/** How far a rebuilt batch may move from the baseline before a person is asked. */
export interface QuoteTolerance {
  /** Refuse less than this many base units of the destination token, whatever the baseline. */
  minAmountOutRaw?: bigint | undefined;
  /** The largest drop of `amountOut` below the baseline, in bps of the baseline's. */
  maxOutputDropBps: number;
  /** The largest rise of provider plus gas fee above the baseline's, in bps of the bridged amount. */
  maxFeeIncreaseBps: number;
}

const BPS = 10_000n;

/** `numerator / denominator` in whole bps, rounded up (towards +∞) or down (towards −∞). */
function bps(numerator: bigint, denominator: bigint, up: boolean): number {
  // A baseline of zero makes any change infinitely large: the largest number refuses it.
  if (denominator <= 0n) return numerator === 0n ? 0 : (numerator > 0n ? 1 : -1) * Number.MAX_SAFE_INTEGER;
  const scaled = numerator * BPS;
  let quotient = scaled / denominator; // truncates towards zero
  if (quotient * denominator !== scaled) {
    if (up && scaled > 0n) quotient += 1n;
    if (!up && scaled < 0n) quotient -= 1n;
  }
  const limit = BigInt(Number.MAX_SAFE_INTEGER);
  return Number(quotient > limit ? limit : quotient < -limit ? -limit : quotient);
}

function amountChange(
  baseline: { amount: string; amountRaw: bigint },
  next: { amount: string; amountRaw: bigint },
  of: bigint,
  refuseUp: boolean,
): AmountChange {
  const deltaRaw = next.amountRaw - baseline.amountRaw;
  return {
    baseline: { amount: baseline.amount, amountRaw: baseline.amountRaw },
    next: { amount: next.amount, amountRaw: next.amountRaw },
    deltaRaw,
    deltaBps: bps(deltaRaw, of, refuseUp),
  };
}

/**
 * What moved from `baseline` to `next`, each figure against the baseline (never against an attempt
 * in between, so that small moves cannot add up unseen). Bps are rounded towards refusing: a drop
 * of what is received rounds down (further from zero), a rise of a fee up. Takes two batches
 * `verifyBridgeBatch` returned (or objects with their figures); anything else is an `ArgumentError`.
 *
 * @example
 * const change = compareQuotes(agreed, rebuilt);
 * if (change.amountOut.deltaBps < -50) askAgain(change);
 */
export function compareQuotes(baseline: ComparableBatch, next: ComparableBatch): QuoteChange {
  return readArgs('compareQuotes', () => {
    const issues = [...shapeIssues(baseline, 'baseline'), ...shapeIssues(next, 'next')];
    if (issues.length > 0) throw new ArgumentError({ where: 'compareQuotes', issues });
    return quoteChange(baseline, next);
  });
}

/** The figures a comparison reads that are missing or of the wrong type. */
function shapeIssues(batch: ComparableBatch, path: string): { path: string; message: string }[] {
  if (typeof batch !== 'object' || batch === null)
    return [{ path, message: 'must be a batch verifyBridgeBatch returned' }];
  const issues: { path: string; message: string }[] = [];
  const amounts = [
    ['source', batch.source],
    ['destination', batch.destination],
    ['providerFee', batch.providerFee],
    ['gasFee', batch.gasFee],
  ] as const;
  for (const [name, figure] of amounts)
    if (typeof figure?.amountRaw !== 'bigint')
      issues.push({ path: `${path}.${name}.amountRaw`, message: 'must be a bigint' });
  for (const name of ['fillDeadline', 'quoteExpiresAt'] as const)
    if (!(batch[name] instanceof Date)) issues.push({ path: `${path}.${name}`, message: 'must be a Date' });
  return issues;
}

/** `compareQuotes` on figures known to be of the right types. */
export function quoteChange(baseline: ComparableBatch, next: ComparableBatch): QuoteChange {
  const amountIn = baseline.source.amountRaw;
  return {
    amountOut: amountChange(baseline.destination, next.destination, baseline.destination.amountRaw, false),
    providerFee: amountChange(baseline.providerFee, next.providerFee, amountIn, true),
    gasFee: amountChange(baseline.gasFee, next.gasFee, amountIn, true),
    fillDeadline: { baseline: baseline.fillDeadline, next: next.fillDeadline },
    quoteExpiresAt: { baseline: baseline.quoteExpiresAt, next: next.quoteExpiresAt },
  };
}

/**
 * The figures that may never change between the baseline and a rebuild (who receives, who pays,
 * which tokens, which chains), as `[field, baseline, next]` for each that did. A difference is an
 * error, never a question for a person.
 */
export function pinnedDifferences(
  baseline: ComparableBatch,
  next: ComparableBatch,
): [field: string, baseline: string, next: string][] {
  const pairs: [string, string | number, string | number, boolean][] = [
    ['wallet', baseline.wallet, next.wallet, true],
    ['source.chainId', baseline.source.chainId, next.source.chainId, false],
    ['source.token', baseline.source.token, next.source.token, true],
    ['destination.chainId', baseline.destination.chainId, next.destination.chainId, false],
    ['destination.token', baseline.destination.token, next.destination.token, true],
  ];
  const same = (a: string | number, b: string | number, address: boolean) =>
    address ? String(a).toLowerCase() === String(b).toLowerCase() : a === b;
  return pairs
    .filter(([, a, b, address]) => !same(a, b, address))
    .map(([field, a, b]) => [field, String(a), String(b)]);
}

/**
 * Why a change is outside the tolerance, one reason a line; empty when it is within. The fee rise
 * is provider plus gas fee together, in bps of the baseline's bridged amount, rounded up.
 */
export function outsideTolerance(
  change: QuoteChange,
  tolerance: QuoteTolerance,
  amountInRaw: bigint,
): string[] {
  const reasons: string[] = [];
  const out = change.amountOut;
  if (tolerance.minAmountOutRaw !== undefined && out.next.amountRaw < tolerance.minAmountOutRaw)
    reasons.push(`amountOut ${out.next.amount} is below the floor`);
  if (-out.deltaBps > tolerance.maxOutputDropBps)
    reasons.push(`amountOut fell ${-out.deltaBps} bps, more than ${tolerance.maxOutputDropBps}`);
  const feeBps = bps(change.providerFee.deltaRaw + change.gasFee.deltaRaw, amountInRaw, true);
  if (feeBps > tolerance.maxFeeIncreaseBps)
    reasons.push(`fees rose ${feeBps} bps of the amount, more than ${tolerance.maxFeeIncreaseBps}`);
  return reasons;
}
