import { describe, expect, it } from 'vitest';
import { ArgumentError, describeQuoteChange } from '../../src/index.js';
import { durationFallback, formatDuration, nativeDurationFormat } from '../../src/onchain/describe/format.js';
import type { AmountChange, QuoteChange } from '../../src/onchain/quote-change.js';

const plain = (text: string) => text.replace(/[\u202f\u00a0]/g, ' ');

function amount(baseline: string, next: string, decimals: number, deltaBps: number): AmountChange {
  const raw = (text: string) =>
    BigInt(text.replace('.', '').replace(/^0+(?=\d)/, '')) *
    10n ** BigInt(decimals - (text.split('.')[1]?.length ?? 0));
  return {
    baseline: { amount: baseline, amountRaw: raw(baseline) },
    next: { amount: next, amountRaw: raw(next) },
    deltaRaw: raw(next) - raw(baseline),
    deltaBps,
  };
}

const DEADLINE = Date.parse('2026-11-22T13:00:00.000Z');
const EXPIRES = Date.parse('2026-11-22T10:05:00.000Z');

function change(overrides: Partial<QuoteChange> = {}): QuoteChange {
  return {
    amountOut: amount('25.41', '25.38', 18, -12),
    providerFee: amount('0.05', '0.06', 6, 4),
    gasFee: amount('0.12', '0.12', 6, 0),
    fillDeadline: { baseline: new Date(DEADLINE), next: new Date(DEADLINE + 120_000) },
    quoteExpiresAt: { baseline: new Date(EXPIRES), next: new Date(EXPIRES + 90_000) },
    ...overrides,
  };
}

describe('describeQuoteChange', () => {
  it('sets each figure against the baseline, in the documented order (en-US)', () => {
    const view = describeQuoteChange(change(), {
      locale: 'en-US',
      symbols: { amountOut: 'USDC', fees: 'USDC' },
    });
    expect(plain(view.title)).toBe(
      'The quote changed: you receive at least 25.38 USDC instead of 25.41 USDC (-0.12%)',
    );
    expect(view.lines.map(plain)).toEqual([
      'You receive at least 25.38 USDC instead of 25.41 USDC (-0.12%)',
      'Provider fee 0.06 USDC instead of 0.05 USDC (+0.04% of the amount)',
      'Gas fee 0.12 USDC, as before',
      'Fill deadline Nov 22, 2026, 1:02:00 PM UTC, 2 min later than before',
      'Quote valid until Nov 22, 2026, 10:06:30 AM UTC (the first until Nov 22, 2026, 10:05:00 AM UTC)',
    ]);
  });

  it('without symbols, in another locale, cutting digits towards refusal', () => {
    const view = describeQuoteChange(
      change({
        amountOut: amount('25.419', '25.381', 18, -15),
        providerFee: amount('0.051', '0.051', 6, 0),
        fillDeadline: { baseline: new Date(DEADLINE), next: new Date(DEADLINE - 3_900_000) },
      }),
      { locale: 'de-DE', timeZone: 'Europe/Berlin', maxFractionDigits: 2 },
    );
    // What is received truncated (25,38 not 25,39), a fee rounded up (0,06 not 0,05). Other locales
    // than en are checked by their parts, never as whole strings: ICU differs between Node lines.
    expect(view.lines[0]).toMatch(/^You receive at least 25,38 instead of 25,41 \(-0,15\s?%\)$/u);
    expect(view.lines[1]).toBe('Provider fee 0,06, as before');
    expect(view.lines[3]).toMatch(
      /^Fill deadline 22\.11\.2026, 12:55:00 \S+, 1\s?\S+, 5\s?\S+ earlier than before$/u,
    );
  });

  it('an unchanged amount received leaves the title plain', () => {
    expect(describeQuoteChange(change({ amountOut: amount('25.41', '25.41', 18, 0) })).title).toBe(
      'The quote changed',
    );
  });

  it('refuses what is not a QuoteChange, and bad options, naming each problem', () => {
    const broken = {
      ...change(),
      gasFee: { baseline: { amount: '-1' } },
      fillDeadline: { baseline: 'then' },
    };
    expect(() => describeQuoteChange(broken as never)).toThrow(ArgumentError);
    try {
      describeQuoteChange(broken as never);
    } catch (error) {
      expect((error as ArgumentError).issues.map((issue) => issue.path)).toEqual(['gasFee', 'fillDeadline']);
    }
    expect(() => describeQuoteChange(null as never)).toThrow(ArgumentError);
    expect(() => describeQuoteChange(change(), { locale: 'zz-ZZ' })).toThrow(/locale/);
  });
});

describe('durations without Intl.DurationFormat', () => {
  it('are written as its short style writes them', () => {
    expect(plain(formatDuration(3_900_000, 'en', undefined))).toBe('1 hr, 5 min');
    expect(plain(formatDuration(59_999, 'en', undefined))).toBe('59 sec');
    expect(plain(formatDuration(7_200_000, 'en', undefined))).toBe('2 hr');
  });

  // Only a runtime with the API can compare: Node 24 has it, Node 20 and 22 do not.
  it.runIf(nativeDurationFormat() !== undefined)('give the same text as Intl.DurationFormat', () => {
    for (const locale of ['en-US', 'de-DE', 'fr-FR', 'hi-IN', 'ja-JP', 'ar-EG'])
      for (const parts of [
        { hours: 1, minutes: 5 },
        { seconds: 59 },
        { hours: 2 },
        { minutes: 3, seconds: 1 },
      ])
        expect(durationFallback(parts, locale)).toBe(
          new (nativeDurationFormat()!)(locale, { style: 'short' }).format(parts),
        );
  });
});
