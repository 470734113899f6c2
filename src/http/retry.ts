import { sleep } from '../core/time.js';
import { ApiError, RateLimitError, ServiceUnavailableError } from '../errors/api-error.js';
import { isPartnerError } from '../errors/base.js';
import { AbortError, ConnectionError, TimeoutError } from '../errors/client-errors.js';

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
 * Connection errors, timeouts, 429 and every 5xx (the specification's rule 4): the failures that a
 * later attempt may not see. Whether a call may be repeated at all is the caller's to say.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
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

export interface RetryHooks {
  signal: AbortSignal | undefined;
  /** Whether this call may be attempted again at all (a submit may not). */
  retryable: boolean;
  /** False: repeated only after failures where the service cannot have acted (`isRetryableUnacted`). */
  idempotent?: boolean;
  onRetry: (error: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs `attempt` with the one retry layer of the SDK: exponential backoff with jitter, `Retry-After`
 * honoured (capped), a bound on count and on total time, and the caller's signal stopping the waits.
 */
export function withRetries<T>(
  policy: RetryPolicy,
  hooks: RetryHooks,
  attempt: (attemptNumber: number) => Promise<T>,
): Promise<T> {
  if (hooks.signal?.aborted) return Promise.reject(new AbortError({ cause: hooks.signal.reason }));
  // Most calls succeed at once: the first attempt runs without p-retry's bookkeeping, and without
  // a frame of this layer's held for each call in flight. After a failure `retried` takes over.
  let first: Promise<T>;
  try {
    first = attempt(1);
  } catch (error) {
    first = Promise.reject(error);
  }
  return first.catch((error: unknown) => retried(policy, hooks, attempt, error));
}

/**
 * After a failed first attempt: the failure as it is when it is not to be retried, else p-retry,
 * its first attempt replaying that failure, so that every wait and decision is still p-retry's.
 * A data call comes here itself once its first attempt failed (`Transport.retried`).
 */
export async function retried<T>(
  policy: RetryPolicy,
  hooks: RetryHooks,
  attempt: (attemptNumber: number) => Promise<T>,
  first: unknown,
): Promise<T> {
  const abortError = () => new AbortError({ cause: hooks.signal?.reason });
  const retryableError = hooks.idempotent === false ? isRetryableUnacted : isRetryable;
  let made = 1;
  const counted = (attemptNumber: number) => {
    made = attemptNumber;
    return attempt(attemptNumber);
  };
  try {
    if (!hooks.retryable || policy.retries === 0 || !retryableError(first)) throw first;
    const started = Date.now();
    const replay = (attemptNumber: number) =>
      attemptNumber === 1 ? Promise.reject(first) : counted(attemptNumber);
    // Loaded on the first retry, not at import: a call that succeeds at once never needs it.
    const { default: pRetry } = await import('p-retry');
    return await pRetry(replay, {
      retries: policy.retries,
      minTimeout: policy.minDelayMs,
      maxTimeout: policy.maxDelayMs,
      factor: 2,
      randomize: true,
      maxRetryTime: policy.maxRetryTimeMs,
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      shouldRetry: async ({ error, attemptNumber, retryDelay }) => {
        if (!retryableError(error)) return false;
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
    const final = hooks.signal?.aborted && !(error instanceof AbortError) ? abortError() : error;
    if (made > 0 && isPartnerError(final)) (final as { attempts?: number }).attempts = made;
    throw final;
  }
}
