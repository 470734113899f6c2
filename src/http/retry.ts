import pRetry from 'p-retry';
import { ApiError, RateLimitError, ServiceUnavailableError } from '../errors/api-error.js';
import { AbortError, ConnectionError, TimeoutError } from '../errors/client-errors.js';
import { sleep } from './abort.js';

/** How the SDK retries. Every field is optional; the defaults suit most partners. */
export interface RetryOptions {
  /**
   * First backoff delay; each further retry doubles it, with jitter (×1 to ×2).
   * @default 500
   */
  minDelayMs?: number;
  /**
   * Largest backoff delay.
   * @default 8000
   */
  maxDelayMs?: number;
  /**
   * Bound on the time spent retrying one call, waits included.
   * @default 60000
   */
  maxRetryTimeMs?: number;
  /**
   * Largest `Retry-After` the SDK honours; a longer one is waited for this long.
   * @default 60000
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

const RETRIED_STATUSES = new Set([429, 502, 503, 504]);

/**
 * Carries an error that was already retried by an inner layer (a token request inside a data
 * call): the outer layer passes it through as it is, so that attempts never multiply.
 */
export class AlreadyRetried extends Error {
  constructor(readonly error: unknown) {
    super('already retried');
  }
}

/** Connection errors, timeouts, 429, 502, 503 and 504: the failures that a later attempt may not see. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
  return error instanceof ApiError && RETRIED_STATUSES.has(error.status);
}

function retryAfterOf(error: unknown): number | undefined {
  return error instanceof RateLimitError || error instanceof ServiceUnavailableError
    ? error.retryAfterMs
    : undefined;
}

export interface RetryHooks {
  signal: AbortSignal | undefined;
  /** Whether this call may be attempted again at all (a submit may not). */
  retryable: boolean;
  onRetry: (error: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs `attempt` with the one retry layer of the SDK: exponential backoff with jitter, `Retry-After`
 * honoured (capped), a bound on count and on total time, and the caller's signal stopping the waits.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  hooks: RetryHooks,
  attempt: (attemptNumber: number) => Promise<T>,
): Promise<T> {
  const abortError = () => new AbortError({ cause: hooks.signal?.reason });
  try {
    if (hooks.signal?.aborted) throw abortError();
    // Most calls succeed at once: the first attempt runs without p-retry's bookkeeping. After a
    // retryable failure p-retry takes over, its first attempt replaying that failure, so that every
    // wait and decision is still p-retry's.
    let first: unknown;
    try {
      return await attempt(1);
    } catch (error) {
      if (!hooks.retryable || policy.retries === 0 || !isRetryable(error)) throw error;
      first = error;
    }
    const started = Date.now();
    const replay = (attemptNumber: number) =>
      attemptNumber === 1 ? Promise.reject(first) : attempt(attemptNumber);
    return await pRetry(replay, {
      retries: policy.retries,
      minTimeout: policy.minDelayMs,
      maxTimeout: policy.maxDelayMs,
      factor: 2,
      randomize: true,
      maxRetryTime: policy.maxRetryTimeMs,
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      shouldRetry: async ({ error, attemptNumber, retryDelay }) => {
        if (!isRetryable(error)) return false;
        const retryAfter = retryAfterOf(error);
        const wanted = retryAfter === undefined ? retryDelay : Math.min(retryAfter, policy.maxRetryAfterMs);
        // The server named the earliest time worth trying again; when that is past the time left,
        // waiting would only end in the same error later.
        if (retryAfter !== undefined && wanted > policy.maxRetryTimeMs - (Date.now() - started)) return false;
        hooks.onRetry(error, attemptNumber, Math.max(wanted, retryDelay));
        // p-retry waits `retryDelay` itself after this returns; the rest of Retry-After is waited here.
        if (wanted > retryDelay) await sleep(wanted - retryDelay, hooks.signal, abortError);
        return true;
      },
    });
  } catch (error) {
    if (error instanceof AlreadyRetried) throw error.error;
    if (hooks.signal?.aborted && !(error instanceof AbortError)) throw abortError();
    throw error;
  }
}
