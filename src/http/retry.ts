import { sleep } from '../core/time.js';
import { ApiError, RateLimitError, ServiceUnavailableError } from '../errors/api-error.js';
import { isPartnerError } from '../errors/base.js';
import { AbortError, ChainRpcError, ConnectionError, TimeoutError } from '../errors/client-errors.js';

/** How the SDK retries. Every field is optional; the defaults suit most partners. */
export interface RetryOptions {
  /**
   * First backoff delay; each further retry doubles it, with jitter (×1 to ×2).
   * @default DEFAULTS.retry.minDelayMs (500)
   */
  minDelayMs?: number;
  /**
   * Largest backoff delay.
   * @default DEFAULTS.retry.maxDelayMs (8000)
   */
  maxDelayMs?: number;
  /**
   * Bound on the time spent retrying one call, waits included.
   * @default DEFAULTS.retry.maxRetryTimeMs (60000)
   */
  maxRetryTimeMs?: number;
  /**
   * Largest `Retry-After` the SDK honours; a longer one is waited for this long.
   * @default DEFAULTS.retry.maxRetryAfterMs (60000)
   */
  maxRetryAfterMs?: number;
}

export interface RetryPolicy {
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  maxRetryTimeMs: number;
  maxRetryAfterMs: number;
}

/**
 * Connection errors, timeouts, 429 and every 5xx (the specification's rule 4), and a chain node's
 * passing overload: the failures that a later attempt may not see. Whether a call may be repeated
 * at all is the caller's to say.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
  if (error instanceof ChainRpcError) return error.retryable;
  return error instanceof ApiError && (error.status === 429 || (error.status >= 500 && error.status <= 599));
}

/** Codes of a connection that never reached the service: nothing was sent, so nothing can have acted. */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function neverConnected(error: unknown): boolean {
  let cause: unknown = error instanceof ConnectionError ? error.cause : undefined;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && NEVER_CONNECTED.has(code)) return true;
    cause = cause.cause;
  }
  return false;
}

/**
 * The failures after which a request that may act twice is still repeated: a 429 (refused before
 * anything acted) and a connection that never reached the service. Not a timeout, not a 5xx, not a
 * connection that broke after sending: the service may have acted on those.
 */
export function isRetryableUnacted(error: unknown): boolean {
  return (error instanceof ApiError && error.status === 429) || neverConnected(error);
}

function retryAfterOf(error: unknown): number | undefined {
  return error instanceof RateLimitError || error instanceof ServiceUnavailableError
    ? error.retryAfterMs
    : undefined;
}

/**
 * After which failures work may be done again: `any` retryable one (a read), only those where the
 * service `unacted` (a write that may act twice), or `never` (a submit).
 */
export type RetryRule = 'any' | 'unacted' | 'never';

/** What `retry` repeats work for (a data call is one): its policy, its caller's signal, and who hears of a retry. */
export interface Retried {
  readonly policy: RetryPolicy;
  readonly signal: AbortSignal | undefined;
  /** A retry is about to wait `delayMs` after `error` of attempt `attempt` (the client's `retry` event). */
  retrying(error: unknown, attempt: number, delayMs: number): void;
}

/**
 * Runs `attempt` with the one retry layer of the SDK, p-retry: exponential backoff with jitter,
 * `Retry-After` honoured (capped), a bound on count and on total time, the caller's signal stopping
 * the waits, and the number of attempts made on the error that ends it. Most calls succeed at once:
 * the first attempt runs without p-retry, which is loaded and given that failure to start from only
 * when there is one.
 *
 * @example
 * const token = await retry(call, () => lease(call.begin()));
 */
export async function retry<T>(on: Retried, attempt: () => Promise<T>, rule: RetryRule = 'any'): Promise<T> {
  const { policy, signal } = on;
  const abortError = () => new AbortError({ cause: signal?.reason });
  if (signal?.aborted) throw abortError();
  const retryableError = rule === 'unacted' ? isRetryableUnacted : isRetryable;
  let made = 1;
  try {
    let first: unknown;
    try {
      return await attempt();
    } catch (error) {
      first = error;
    }
    if (rule === 'never' || policy.retries === 0 || !retryableError(first)) throw first;
    const started = Date.now();
    // p-retry's first attempt replays the failure, so that every wait and decision is still p-retry's.
    const replay = (attemptNumber: number) => {
      if (attemptNumber === 1) return Promise.reject(first);
      made = attemptNumber;
      return attempt();
    };
    const { default: pRetry } = await import('p-retry');
    return await pRetry(replay, {
      retries: policy.retries,
      minTimeout: policy.minDelayMs,
      maxTimeout: policy.maxDelayMs,
      factor: 2,
      randomize: true,
      maxRetryTime: policy.maxRetryTimeMs,
      ...(signal ? { signal } : {}),
      shouldRetry: async ({ error, attemptNumber, retryDelay }) => {
        if (!retryableError(error)) return false;
        const retryAfter = retryAfterOf(error);
        const wanted = retryAfter === undefined ? retryDelay : Math.min(retryAfter, policy.maxRetryAfterMs);
        // The server named the earliest time worth trying again; when that is past the time left,
        // waiting would only end in the same error later.
        if (retryAfter !== undefined && wanted > policy.maxRetryTimeMs - (Date.now() - started)) return false;
        on.retrying(error, attemptNumber, Math.max(wanted, retryDelay));
        // p-retry waits `retryDelay` itself after this returns; the rest of Retry-After is waited here.
        if (wanted > retryDelay) await sleep(wanted - retryDelay, signal, abortError);
        return true;
      },
    });
  } catch (error) {
    const final = signal?.aborted && !(error instanceof AbortError) ? abortError() : error;
    if (isPartnerError(final)) (final as { attempts?: number }).attempts = made;
    throw final;
  }
}
