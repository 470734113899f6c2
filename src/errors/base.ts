import { MAX_DEPTH, scrubForeign, TRUNCATED } from './redact.js';

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
 * An error that wraps another (`cause`) says why in its own message: it ends with the reason of the
 * root of the `cause` chain (docs/errors.md, "Errors say why", has the rules), and `cause` keeps
 * the chain as it was.
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
    const cause = options?.cause;
    super(withReason(message, cause), cause === undefined ? undefined : { cause });
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

/** How far down a `cause` chain the root is looked for; a cycle ends the walk earlier. */
const MAX_CAUSE_DEPTH = 8;

/**
 * `message`, ending with the reason of the root of `cause`'s chain (`message: reason`) unless it
 * already ends with it: the one place every wrapping error (a tracker's store failure, a signer's,
 * a broken connection, an unclear submit, …) gets its "why", so that a log line of the message
 * alone says it. The start of the message is never changed. The reason is {@link reasonOf} the root.
 */
function withReason(message: string, cause: unknown): string {
  if (cause === undefined) return message;
  const reason = reasonOf(rootOf(cause));
  return reason === '' || message.endsWith(reason) ? message : `${message}: ${reason}`;
}

/** The last error of a `cause` chain: the one that says why. */
function rootOf(cause: unknown): unknown {
  let root = cause;
  const seen = new Set<unknown>();
  for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth++) {
    if (typeof root !== 'object' || root === null || seen.has(root)) break;
    seen.add(root);
    let next: unknown;
    try {
      next = (root as { cause?: unknown }).cause;
    } catch {
      break;
    }
    if (next === undefined || next === null) break;
    root = next;
  }
  return root;
}

/**
 * What a root cause may say in a message. The SDK's own error gives its message, safe by
 * construction (a `PostgresStoreError` keeps the SQLSTATE and a text that echoes no value; what a
 * server sent is redacted). Anything else (a signer's or a store's thrown error, a driver's, a
 * DOMException) gives its name (left out when it is only `Error`), its `code` when it is a string or
 * a number (not a DOMException's legacy number), and the first line of its message, each scrubbed
 * by {@link scrubForeign}: ECONNREFUSED's `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4010`, a
 * signer's `TypeError: HSM offline`. The client's own secrets and tokens are already masked in what
 * reaches a `ConnectionError` (its cause is a redacted copy). A value whose reads throw gives nothing.
 */
function reasonOf(root: unknown): string {
  try {
    if (isPartnerError(root)) return typeof root.message === 'string' ? root.message : '';
    if (typeof root !== 'object' || root === null) {
      // A thrown string or number says why; a function, a symbol or null do not.
      return ['string', 'number', 'bigint', 'boolean'].includes(typeof root)
        ? scrubForeign(String(root))
        : '';
    }
    const { name, code, message } = root as { name?: unknown; code?: unknown; message?: unknown };
    const text = typeof message === 'string' ? scrubForeign(message) : '';
    // A DOMException's numeric `code` is the legacy number of its name (20 for AbortError).
    const legacy = typeof DOMException === 'function' && root instanceof DOMException;
    const shownCode =
      !legacy && (typeof code === 'string' || typeof code === 'number') ? scrubForeign(String(code), 60) : '';
    const shownName = typeof name === 'string' ? scrubForeign(name, 60) : '';
    const label = [shownName === 'Error' && (shownCode || text) ? '' : shownName, shownCode]
      .filter(Boolean)
      .join(' ');
    return label && text ? `${label}: ${text}` : label || text;
  } catch {
    return '';
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
