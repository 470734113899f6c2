import { ArgumentError } from '../errors/client-errors.js';
import { readArgs } from './args.js';

/** A decimal amount in source-token units: a string (`'25.5'`, sent digit for digit) or a number. */
export type AmountInput = string | number;

/** A value as an error message shows it; never calls the value's own `toString`. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  return value === null ? 'null' : `a value of type ${typeof value}`;
}

/** A JSON number literal without sign or exponent: what a decimal amount may look like on the wire. */
const DECIMAL = /^(0|[1-9]\d*)(\.\d+)?$/;

/** Writes a finite number as plain decimal digits (no exponent), shortest round-trip form. */
function numberToDecimal(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  const [mantissa = '', exponentText = '0'] = text.toLowerCase().split('e');
  const exponent = Number(exponentText);
  const [whole = '', fraction = ''] = mantissa.split('.');
  const digits = whole + fraction;
  const point = whole.length + exponent;
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`.replace(/0+$/, '');
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * Checks a decimal amount and returns it as the exact literal to send: strings pass through
 * digit for digit; numbers are written in their shortest exact decimal form.
 * Returns an error message instead when the amount is not a positive decimal.
 */
export function decimalLiteral(amount: unknown): { literal: string } | { error: string } {
  let text: string;
  if (typeof amount === 'string') text = amount.trim();
  else if (typeof amount === 'number') {
    if (!Number.isFinite(amount)) return { error: 'must be a finite number' };
    text = numberToDecimal(amount);
  } else return { error: 'must be a decimal string such as "25.5" (or a number)' };
  if (!DECIMAL.test(text)) {
    return {
      error: `must be a positive decimal such as "25.5" (no sign, exponent or leading zeros), got ${shown(amount)}`,
    };
  }
  if (!/[1-9]/.test(text)) return { error: 'must be greater than zero' };
  return { literal: text };
}

function decimalsOf(token: number | { decimals: number }, where: string): number {
  const decimals = readArgs(where, () =>
    typeof token === 'number'
      ? token
      : typeof token === 'object' && token !== null
        ? token.decimals
        : undefined,
  );
  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 255) {
    throw new ArgumentError({
      where,
      issues: [{ path: 'decimals', message: 'must be an integer from 0 to 255' }],
    });
  }
  return decimals;
}

/**
 * Converts a decimal amount to base units for one token side. Never rounds: more fractional
 * digits than the token has is an `ArgumentError`.
 *
 * @example
 * toRawAmount('25.5', route.from);  // 25500000n for a 6-decimal token
 * toRawAmount('1', 18);             // 1000000000000000000n
 */
export function toRawAmount(amount: string | number, token: number | { decimals: number }): bigint {
  const decimals = decimalsOf(token, 'toRawAmount');
  const text =
    typeof amount === 'number'
      ? Number.isFinite(amount)
        ? numberToDecimal(amount)
        : ''
      : typeof amount === 'string'
        ? amount.trim()
        : '';
  if (!/^\d+(\.\d+)?$/.test(text)) {
    throw new ArgumentError({
      where: 'toRawAmount',
      issues: [{ path: 'amount', message: `not a decimal amount: ${shown(amount)}` }],
    });
  }
  // Sliced at the point, not destructured from split: the verifier converts five amounts a batch,
  // and array destructuring (an iterator) cost more than the rest of the conversion.
  const point = text.indexOf('.');
  const whole = point < 0 ? text : text.slice(0, point);
  const trimmed = point < 0 ? '' : text.slice(point + 1).replace(/0+$/, '');
  if (trimmed.length > decimals) {
    throw new ArgumentError({
      where: 'toRawAmount',
      issues: [
        {
          path: 'amount',
          message: `${text} has more than ${decimals} fractional digits; it would need rounding`,
        },
      ],
    });
  }
  return BigInt(whole + trimmed.padEnd(decimals, '0'));
}

/**
 * Converts base units to a decimal amount for one token side, without trailing zeros.
 *
 * @example
 * fromRawAmount(25500000n, route.from);   // '25.5' for a 6-decimal token
 * fromRawAmount(quote.amountOutRaw, route.to);
 */
export function fromRawAmount(raw: bigint | string, token: number | { decimals: number }): string {
  const decimals = decimalsOf(token, 'fromRawAmount');
  if (typeof raw !== 'bigint' && (typeof raw !== 'string' || !/^-?\d+$/.test(raw))) {
    throw new ArgumentError({
      where: 'fromRawAmount',
      issues: [{ path: 'raw', message: `not a base-unit integer: ${shown(raw)}` }],
    });
  }
  const value = BigInt(raw);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
