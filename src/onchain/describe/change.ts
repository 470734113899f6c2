// describeQuoteChange: how a rebuilt quote differs from the one a person agreed to, in words they
// can consent to. Each figure is set against the baseline, never against a previous attempt.
import { readArgs } from '../../core/args.js';
import { ArgumentError } from '../../errors/client-errors.js';
import type { Issue } from '../../schemas/issues.js';
import type { AmountChange, QuoteChange, TimeChange } from '../quote-change.js';
import {
  type Cut,
  decimalUnits,
  formatAmount,
  formatBpsAsPercent,
  formatDuration,
  formatTime,
} from './format.js';
import { type DescribeOptions, readDescribeOptions } from './options.js';
import { shown } from './text.js';

/** How `describeQuoteChange` writes: the options of `describeBridgeBatch` but the clock, and the symbols. */
export interface DescribeQuoteChangeOptions extends Omit<DescribeOptions, 'now' | 'highFeeBps'> {
  /**
   * The symbols to write after the amounts (a `QuoteChange` carries base units, not tokens): that
   * of the destination token for `amountOut`, that of the source token for the fees.
   * @example { symbols: { amountOut: baseline.destination.symbol, fees: baseline.source.symbol } }
   */
  symbols?: { amountOut?: string; fees?: string };
}

/** A change of quote as a person reads it. */
export interface QuoteChangeView {
  /** `The quote changed`, with what is received when that moved. */
  title: string;
  /** One line each, in this order: the amount received, the provider fee, the gas fee, the fill deadline, the quote's validity. */
  lines: string[];
}

const DECIMAL = /^\d+(\.\d+)?$/;

function checkAmount(value: unknown, path: string, issues: Issue[]): void {
  const change = value as Partial<AmountChange> | undefined;
  const sides = [change?.baseline, change?.next];
  if (
    sides.some((side) => typeof side?.amount !== 'string' || !DECIMAL.test(side.amount)) ||
    typeof change?.deltaRaw !== 'bigint' ||
    !Number.isInteger(change.deltaBps)
  )
    issues.push({ path, message: 'must be an AmountChange: { baseline, next, deltaRaw, deltaBps }' });
}

function checkTime(value: unknown, path: string, issues: Issue[]): void {
  const change = value as Partial<TimeChange> | undefined;
  if ([change?.baseline, change?.next].some((at) => !(at instanceof Date) || Number.isNaN(at.getTime())))
    issues.push({ path, message: 'must be a TimeChange: { baseline: Date, next: Date }' });
}

function readChange(change: unknown): QuoteChange {
  return readArgs('describeQuoteChange', () => {
    const issues: Issue[] = [];
    const given = (typeof change === 'object' && change !== null ? change : {}) as Record<string, unknown>;
    for (const key of ['amountOut', 'providerFee', 'gasFee'] as const) checkAmount(given[key], key, issues);
    for (const key of ['fillDeadline', 'quoteExpiresAt'] as const) checkTime(given[key], key, issues);
    if (issues.length > 0) throw new ArgumentError({ where: 'describeQuoteChange', issues });
    return change as QuoteChange;
  });
}

/**
 * Describes how a rebuilt quote differs from the baseline: what is received, each fee, the fill
 * deadline and the quote's validity, each against the baseline the person agreed to. Amounts are
 * written exactly (cut as `describeBridgeBatch` cuts them: a minimum truncated, a fee rounded up).
 *
 * @throws {ArgumentError} `change` is not a `QuoteChange`, or an option is wrong.
 *
 * @example
 * requote: {
 *   accept: async (change) => {
 *     const { title, lines } = describeQuoteChange(change, { locale: 'en-US', symbols: { amountOut: 'USDC', fees: 'USDC' } });
 *     return askApprover(title, lines); // "You receive at least 25.38 USDC instead of 25.41 USDC (-0.12%)"
 *   },
 * }
 */
export function describeQuoteChange(
  change: QuoteChange,
  options?: DescribeQuoteChangeOptions,
): QuoteChangeView {
  const read = readDescribeOptions('describeQuoteChange', options);
  const { locale, timeZone, maxFractionDigits } = read;
  const symbols = readArgs('describeQuoteChange', () => options?.symbols ?? {});
  const valid = readChange(change);
  const amount = (text: string, cut: Cut, symbol: string | undefined): string => {
    const { raw, decimals } = decimalUnits(text);
    const figure = formatAmount(raw, decimals, locale, maxFractionDigits, cut);
    return typeof symbol === 'string' ? `${figure} ${shown(symbol)}` : figure;
  };
  const compare = (what: string, moved: AmountChange, cut: Cut, symbol: string | undefined, of = '') => {
    const next = amount(moved.next.amount, cut, symbol);
    if (moved.deltaRaw === 0n) return `${what} ${next}, as before`;
    const base = amount(moved.baseline.amount, cut, symbol);
    return `${what} ${next} instead of ${base} (${formatBpsAsPercent(moved.deltaBps, locale, true)}${of})`;
  };
  const time = (at: Date) => formatTime(at, locale, timeZone);
  const received = compare('You receive at least', valid.amountOut, 'received', symbols.amountOut);
  const { fillDeadline, quoteExpiresAt } = valid;
  const shift = fillDeadline.next.getTime() - fillDeadline.baseline.getTime();
  const lines = [
    received,
    compare('Provider fee', valid.providerFee, 'paid', symbols.fees, ' of the amount'),
    compare('Gas fee', valid.gasFee, 'paid', symbols.fees, ' of the amount'),
    shift === 0
      ? `Fill deadline ${time(fillDeadline.next)}, as before`
      : `Fill deadline ${time(fillDeadline.next)}, ${formatDuration(shift, locale)} ${shift > 0 ? 'later' : 'earlier'} than before`,
    `Quote valid until ${time(quoteExpiresAt.next)} (the first until ${time(quoteExpiresAt.baseline)})`,
  ];
  return {
    title:
      valid.amountOut.deltaRaw === 0n
        ? 'The quote changed'
        : `The quote changed: ${received.charAt(0).toLowerCase()}${received.slice(1)}`,
    lines,
  };
}
