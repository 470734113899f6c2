import { MAX_DEPTH, TRUNCATED } from './redact.js';

/** Marks every error thrown by this package; `Symbol.for` makes it the same symbol in every copy. */
export const ERROR_BRAND: unique symbol = Symbol.for('partner-s2s-sdk.error') as never;
/** Marks errors that carry an HTTP answer of a data endpoint. */
export const API_ERROR_BRAND: unique symbol = Symbol.for('partner-s2s-sdk.api-error') as never;

/**
 * Turns bigints into strings and truncates past {@link MAX_DEPTH} (a cycle included), so that
 * `JSON.stringify(error)` never throws and stays bounded.
 */
export function jsonSafe(value: unknown, depth = 0): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return TRUNCATED;
  if (Array.isArray(value)) return value.map((item) => jsonSafe(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[key] = jsonSafe(inner, depth + 1);
  return out;
}

/**
 * The base of every error this SDK throws. Use {@link isPartnerError} rather than `instanceof`
 * when two copies of the package may be loaded (a bundled dependency, ESM and CJS side by side).
 *
 * @example
 * try { await client.bridge.routes(); }
 * catch (e) { if (isPartnerError(e)) log.warn(e.toJSON()); else throw e; }
 */
export class PartnerError extends Error {
  override name = 'PartnerError';
  readonly [ERROR_BRAND] = true;
  /**
   * How many attempts the call made before it ended with this error: `maxRetries + 1` when every
   * retry was spent, 1 when the error is not retried. Undefined on errors raised before any
   * request (an `ArgumentError`), outside calls (verify, sign, callbacks), and on errors that sum
   * up several requests (`SubmitOutcomeUnknownError`: its `cause` has it).
   *
   * @example
   * catch (e) { if (isPartnerError(e)) log.warn({ error: e.name, attempts: e.attempts }); }
   */
  declare readonly attempts?: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }

  /** A log-safe plain object: no secrets, no tokens, bigints as decimal strings. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [key, value] of Object.entries(this)) {
      if (key === 'cause' || key === 'stack') continue;
      out[key] = jsonSafe(value);
    }
    return out;
  }
}

/**
 * True for any error thrown by this SDK, from any copy of the package.
 *
 * @example
 * if (isPartnerError(e)) console.error(e.name, e.message);
 */
export function isPartnerError(error: unknown): error is PartnerError {
  return hasBrand(error, ERROR_BRAND);
}

/**
 * Reads a brand without letting the read throw: a guard answers about any value, a Proxy or an
 * object with a throwing getter included, and such a value is not the SDK's error.
 */
export function hasBrand(value: unknown, brand: symbol): boolean {
  if (typeof value !== 'object' || value === null) return false;
  try {
    return (value as Record<symbol, unknown>)[brand] === true;
  } catch {
    return false;
  }
}

/**
 * The same error again (class, fields, message) with `retryAfterMs` set: what a call that is refused
 * during a stopped credential's backoff throws, without sending anything.
 */
export function withRetryAfter<E extends PartnerError>(error: E, retryAfterMs: number): E {
  const copy = Object.create(Object.getPrototypeOf(error)) as E;
  for (const key of Reflect.ownKeys(error)) {
    if (key !== 'stack') Object.defineProperty(copy, key, Object.getOwnPropertyDescriptor(error, key)!);
  }
  Object.defineProperty(copy, 'retryAfterMs', { value: retryAfterMs, enumerable: true });
  Error.captureStackTrace?.(copy, withRetryAfter);
  return copy;
}
