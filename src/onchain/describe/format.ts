// The locale-aware pieces of a description: amounts, times, durations, percentages. Every amount is
// formatted from base units and decimals, cut (when it is cut at all) by bigint arithmetic in the
// direction that never overstates what is received or understates what is paid, and only then
// handed to Intl as an exact decimal string that has no digit left to round.
import { fromRawAmount } from '../../core/amounts.js';

/**
 * How an amount is cut when it has more digits than are shown: what is received (a minimum, a
 * refund) is truncated, what is paid (an amount sent, a fee, a total) is rounded up.
 */
export type Cut = 'received' | 'paid';

/** Intl.NumberFormat takes at most 20 fraction digits on every supported Node line. */
export const MOST_FRACTION_DIGITS = 20;

const numberFormats = new Map<string, Intl.NumberFormat>();

/** One formatter per locale and digit count: building one costs far more than using it. */
function numberFormat(locale: string, digits: number): Intl.NumberFormat {
  const key = `${locale}\u0000${digits}`;
  let format = numberFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(locale, {
      minimumFractionDigits: 0,
      maximumFractionDigits: digits,
      notation: 'standard',
    });
    if (numberFormats.size > 256) numberFormats.clear();
    numberFormats.set(key, format);
  }
  return format;
}

/** Intl formats a decimal string exactly (Intl.NumberFormat v3); the types only know numbers. */
type ExactFormat = (value: string) => string;

/**
 * `raw` base units with `decimals`, kept to at most `shown` fraction digits: truncated for a
 * received amount, rounded up for a paid one, and `cut` true when a non-zero digit was dropped.
 */
export function cutAmount(
  raw: bigint,
  decimals: number,
  shown: number,
  cut: Cut,
): { raw: bigint; decimals: number; cut: boolean } {
  const keep = Math.min(decimals, shown);
  if (keep === decimals) return { raw, decimals, cut: false };
  const unit = 10n ** BigInt(decimals - keep);
  const kept = raw / unit;
  const dropped = raw % unit !== 0n;
  return { raw: kept + (dropped && cut === 'paid' ? 1n : 0n), decimals: keep, cut: dropped };
}

/**
 * An amount in the locale's digits and separators, never in scientific notation.
 *
 * @example
 * formatAmount(25_500_000n, 6, 'de-DE', 18, 'paid'); // '25,5'
 */
export function formatAmount(raw: bigint, decimals: number, locale: string, shown: number, cut: Cut): string {
  const kept = cutAmount(raw, decimals, Math.min(shown, MOST_FRACTION_DIGITS), cut);
  const format = numberFormat(locale, kept.decimals).format as unknown as ExactFormat;
  return format(fromRawAmount(kept.raw, kept.decimals));
}

/** A decimal string (as the verifier writes amounts) as base units and its own decimals. */
export function decimalUnits(amount: string): { raw: bigint; decimals: number } {
  const point = amount.indexOf('.');
  if (point < 0) return { raw: BigInt(amount), decimals: 0 };
  return {
    raw: BigInt(amount.slice(0, point) + amount.slice(point + 1)),
    decimals: amount.length - point - 1,
  };
}

/** A whole number in the locale's digits (a count of basis points, a nonce). */
export function formatInteger(value: number | bigint, locale: string): string {
  return numberFormat(locale, 0).format(value);
}

/**
 * Basis points as a signed percentage in the locale's form, exact (a basis point is 0.01 %).
 * `sign` writes a plus before a rise.
 */
export function formatBpsAsPercent(bps: number, locale: string, sign = false): string {
  const key = `${locale}\u0000%${sign}`;
  let format = numberFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(locale, {
      style: 'percent',
      maximumFractionDigits: 2,
      signDisplay: sign ? 'exceptZero' : 'auto',
    });
    numberFormats.set(key, format);
  }
  // bps / 10 000 as an exact decimal string: no float ever holds it.
  const magnitude = Math.abs(bps).toString().padStart(5, '0');
  const text = `${bps < 0 ? '-' : ''}${magnitude.slice(0, -4)}.${magnitude.slice(-4)}`;
  return (format.format as unknown as ExactFormat)(text);
}

const dateFormats = new Map<string, Intl.DateTimeFormat>();

/** An absolute time with its zone named, e.g. `Nov 22, 2026, 10:05:00 AM UTC`. */
export function formatTime(at: Date, locale: string, timeZone: string): string {
  const key = `${locale}\u0000${timeZone}`;
  let format = dateFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { timeZone, dateStyle: 'medium', timeStyle: 'long' });
    if (dateFormats.size > 64) dateFormats.clear();
    dateFormats.set(key, format);
  }
  return format.format(at);
}

/**
 * How far `at` is from `now`, e.g. `in 4 minutes` or `2 hours ago`, rounded towards now: a quote
 * is never said to last longer than it does.
 */
export function formatRelative(at: Date, now: number, locale: string): string {
  const seconds = (at.getTime() - now) / 1000;
  const size = Math.abs(seconds);
  const [value, unit]: [number, Intl.RelativeTimeFormatUnit] =
    size < 120 ? [size, 'second'] : size < 7200 ? [size / 60, 'minute'] : [size / 3600, 'hour'];
  const whole = Math.floor(value) * (seconds < 0 ? -1 : 1);
  return new Intl.RelativeTimeFormat(locale, { numeric: 'always' }).format(whole, unit);
}

interface DurationFormatLike {
  format(duration: Record<string, number>): string;
}
type DurationFormatConstructor = new (locale: string, options: { style: 'short' }) => DurationFormatLike;

/** The units a duration is written in, largest first. */
const DURATION_UNITS = [
  ['hours', 'hour', 3_600_000],
  ['minutes', 'minute', 60_000],
  ['seconds', 'second', 1_000],
] as const;

/** A duration as its largest whole units, e.g. `{ hours: 1, minutes: 5 }`; zero as `{ seconds: 0 }`. */
export function durationParts(ms: number): Record<string, number> {
  let rest = Math.floor(Math.abs(ms) / 1000) * 1000;
  const parts: Record<string, number> = {};
  for (const [plural, , size] of DURATION_UNITS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0) parts[plural] = count;
  }
  return Object.keys(parts).length > 0 ? parts : { seconds: 0 };
}

/**
 * A duration such as `1 hr, 5 min`: `Intl.DurationFormat` where the runtime has it, otherwise the
 * same composition by hand (unit-style numbers joined by a unit list), which is how that API is
 * specified to write its `short` style, so the text does not change with the Node line.
 */
export function formatDuration(ms: number, locale: string, native = nativeDurationFormat()): string {
  const parts = durationParts(ms);
  if (native) return new native(locale, { style: 'short' }).format(parts);
  return durationFallback(parts, locale);
}

export function durationFallback(parts: Record<string, number>, locale: string): string {
  const words = DURATION_UNITS.filter(([plural]) => parts[plural] !== undefined).map(([plural, unit]) =>
    new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'short' }).format(parts[plural]!),
  );
  return new Intl.ListFormat(locale, { type: 'unit', style: 'short' }).format(words);
}

export function nativeDurationFormat(): DurationFormatConstructor | undefined {
  return (Intl as unknown as { DurationFormat?: DurationFormatConstructor }).DurationFormat;
}
