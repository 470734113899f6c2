// The options of `describeBridgeBatch` and `describeQuoteChange`, read and checked before anything
// is described: a locale the runtime cannot format or a time zone it does not know is an
// `ArgumentError`, never a silent fallback to another language or zone.
import { readArgs } from '../../core/args.js';
import { DEFAULTS } from '../../core/defaults.js';
import { ArgumentError } from '../../errors/client-errors.js';
import type { Issue } from '../../schemas/issues.js';
import { MOST_FRACTION_DIGITS } from './format.js';

/** How a description is written: the locale of its numbers and dates, its time zone, its clock. */
export interface DescribeOptions {
  /**
   * A BCP 47 locale the runtime can format (e.g. `de-DE`, `hi-IN`, `ar-EG`): numbers, dates and
   * times follow it, digits included; the wording is English. `machine` never depends on it.
   * @default DEFAULTS.describe.locale
   */
  locale?: string;
  /**
   * The IANA time zone times are written in (e.g. `Europe/Berlin`).
   * @default DEFAULTS.describe.timeZone
   */
  timeZone?: string;
  /**
   * The time the relative times count from (a `Date` or milliseconds since 1970).
   * @default new Date()
   */
  now?: Date | number;
  /**
   * The most fraction digits an amount is written with (0 to 20). When an amount has more, a
   * received amount is truncated and a paid one rounded up; `machine` keeps every base unit.
   * @default DEFAULTS.describe.maxFractionDigits
   */
  maxFractionDigits?: number;
  /**
   * Fees (provider plus gas, in basis points of the amount) above this are a `HIGH_FEE` warning.
   * @default DEFAULTS.describe.highFeeBps
   */
  highFeeBps?: number;
}

/** The options with their defaults, checked. */
export interface ReadDescribeOptions {
  locale: string;
  timeZone: string;
  nowMs: number;
  maxFractionDigits: number;
  highFeeBps: number;
}

/** Before 2001-09-09 in milliseconds, or any time at all in seconds: never a real `now`. */
const EARLIEST_NOW_MS = 1e12;

function readLocale(value: unknown, issues: Issue[]): string {
  if (value === undefined) return DEFAULTS.describe.locale;
  if (typeof value !== 'string' || value.length === 0) {
    issues.push({ path: 'locale', message: 'must be a BCP 47 locale such as "en-US"' });
    return DEFAULTS.describe.locale;
  }
  try {
    const [canonical] = Intl.getCanonicalLocales(value);
    if (canonical && Intl.NumberFormat.supportedLocalesOf([canonical]).length === 1) return canonical;
  } catch {
    // Not a well-formed tag: the same issue as an unknown one.
  }
  issues.push({
    path: 'locale',
    message: `${JSON.stringify(value)} is not a locale this runtime can format`,
  });
  return DEFAULTS.describe.locale;
}

function readTimeZone(value: unknown, issues: Issue[]): string {
  if (value === undefined) return DEFAULTS.describe.timeZone;
  try {
    if (typeof value === 'string' && value.length > 0) {
      new Intl.DateTimeFormat('en', { timeZone: value });
      return value;
    }
  } catch {
    // An unknown zone: named below.
  }
  issues.push({
    path: 'timeZone',
    message: `must be an IANA time zone such as "UTC" or "Europe/Berlin", got ${typeof value === 'string' ? JSON.stringify(value) : typeof value}`,
  });
  return DEFAULTS.describe.timeZone;
}

function readNow(value: unknown, issues: Issue[]): number {
  if (value === undefined) return Date.now();
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Number.NaN;
  if (Number.isFinite(ms) && ms >= EARLIEST_NOW_MS) return ms;
  issues.push({ path: 'now', message: 'must be a Date or milliseconds since 1970 (not seconds)' });
  return Date.now();
}

function readWhole(value: unknown, path: string, fallback: number, most: number, issues: Issue[]): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= most) return value;
  issues.push({ path, message: `must be a whole number from 0 to ${most}` });
  return fallback;
}

/** Reads the options of `where`; every problem is named at once in one `ArgumentError`. */
export function readDescribeOptions(where: string, options: unknown): ReadDescribeOptions {
  return readArgs(where, () => {
    if (options !== undefined && (typeof options !== 'object' || options === null))
      throw new ArgumentError({ where, issues: [{ path: '', message: 'options must be an object' }] });
    const given = (options ?? {}) as Record<string, unknown>;
    const issues: Issue[] = [];
    const read: ReadDescribeOptions = {
      locale: readLocale(given.locale, issues),
      timeZone: readTimeZone(given.timeZone, issues),
      nowMs: readNow(given.now, issues),
      maxFractionDigits: readWhole(
        given.maxFractionDigits,
        'maxFractionDigits',
        DEFAULTS.describe.maxFractionDigits,
        MOST_FRACTION_DIGITS,
        issues,
      ),
      highFeeBps: readWhole(given.highFeeBps, 'highFeeBps', DEFAULTS.describe.highFeeBps, 1_000_000, issues),
    };
    if (issues.length > 0) throw new ArgumentError({ where, issues });
    return read;
  });
}
