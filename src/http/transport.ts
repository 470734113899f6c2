import type { EventEmitter } from 'eventemitter3';
import type { LeasedToken, TokenProvider } from '../auth/token-provider.js';
import type { ClientEvents } from '../core/events.js';
import type { RequestOptions } from '../core/request-options.js';
import { ApiError, AuthenticationError } from '../errors/api-error.js';
import { isPartnerError } from '../errors/base.js';
import {
  AbortError,
  ConnectionError,
  type ResponseIssue,
  ResponseValidationError,
  TimeoutError,
} from '../errors/client-errors.js';
import { apiErrorFromResponse } from '../errors/from-response.js';
import { raceSignal, readText } from './abort.js';
import { AlreadyRetried, type RetryPolicy, withRetries } from './retry.js';

/** An HTTP answer, read in full within the attempt's time. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

export interface Exchange {
  method: 'GET' | 'POST';
  /** Path below `/api/v1/s2s`. */
  path: string;
  searchParams?: URLSearchParams;
  headers: Record<string, string>;
  body?: string;
}

export interface DataRequest<T> {
  method: 'GET' | 'POST';
  path: string;
  /** The path as events and errors show it (ids kept, no query). */
  label?: string;
  searchParams?: URLSearchParams;
  /** An already serialised JSON body. */
  body?: string;
  /** Scopes the endpoint needs, named in a 403's message. */
  scopes: readonly string[];
  schema: Parser<T>;
  /** False for a submit: it is never sent twice by the retry layer. */
  retryable?: boolean;
}

/**
 * The one ky instance's call shape, as the transport uses it. Declared here so that no ky type
 * reaches the published declarations (ky is bundled, not a dependency).
 */
export type HttpCall = (
  input: string,
  options: {
    method: string;
    headers: Record<string, string>;
    timeout: number;
    searchParams?: URLSearchParams;
    body?: string;
    signal?: AbortSignal;
  },
) => Promise<Response>;

export interface TransportConfig {
  ky: HttpCall;
  events: EventEmitter<ClientEvents>;
  tokens: TokenProvider;
  timeoutMs: number;
  /** The longest answer read; a longer one is cancelled unread. */
  maxResponseBytes: number;
  retry: RetryPolicy;
}

/** Anything with zod's `safeParse` shape: a zod schema, or a hand-written reader of a body. */
export interface Parser<T> {
  safeParse(
    value: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

export function zodIssues(error: {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}): ResponseIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * Moves requests: one ky instance, a timeout that covers the whole answer, the bearer token with a
 * single replay after a 401, and the retry layer around it all.
 */
export class Transport {
  readonly #config: TransportConfig;

  constructor(config: TransportConfig) {
    this.#config = config;
  }

  #policy(options: RequestOptions | undefined): RetryPolicy {
    return options?.maxRetries === undefined
      ? this.#config.retry
      : { ...this.#config.retry, retries: options.maxRetries };
  }

  /**
   * One attempt: sends, reads the whole body, and turns a timeout, an abort or a broken connection
   * into the SDK's typed errors. HTTP error statuses are returned, not thrown. ky's own timeout
   * covers the wait for headers and the body is read within what is left of it: no AbortSignal
   * is made per attempt (Node's are costly) unless the caller passed one.
   */
  async exchange(
    request: Exchange,
    attempt: number,
    options: RequestOptions | undefined,
    label = request.path,
  ) {
    const { events } = this.#config;
    const timeoutMs = options?.timeoutMs ?? this.#config.timeoutMs;
    const signal = options?.signal;
    if (signal?.aborted) throw new AbortError({ cause: signal.reason });
    const started = performance.now();
    if (events.listenerCount('request') > 0)
      events.emit('request', { method: request.method, path: label, attempt });
    let status: number | undefined;
    let requestId: string | undefined;
    let failure: unknown;
    const timedOut = () => new TimeoutError(request.method, label, timeoutMs);
    const aborted = () => new AbortError({ cause: signal?.reason });
    try {
      let response: Response;
      try {
        response = await this.#config.ky(request.path, {
          method: request.method,
          headers: request.headers,
          timeout: timeoutMs,
          ...(request.searchParams ? { searchParams: request.searchParams } : {}),
          ...(request.body === undefined ? {} : { body: request.body }),
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        if (isPartnerError(error)) throw error;
        if (signal?.aborted) throw aborted();
        if (error instanceof Error && error.name === 'TimeoutError') throw timedOut();
        // ky wraps fetch failures with the Request attached, which holds the bearer token: keep only
        // the transport's own error.
        const cause = error instanceof Error && error.name === 'NetworkError' ? error.cause : error;
        throw new ConnectionError(request.method, label, { cause });
      }
      status = response.status;
      requestId = response.headers.get('x-request-id') ?? undefined;
      const text = await readText(
        response,
        timeoutMs - (performance.now() - started),
        this.#config.maxResponseBytes,
        signal,
        { timedOut, aborted, broken: (cause) => new ConnectionError(request.method, label, { cause }) },
      );
      if (text === undefined && status >= 200 && status < 300) {
        throw new ResponseValidationError(request.method, label, status, [
          {
            path: '',
            message: `the body is longer than maxResponseBytes (${this.#config.maxResponseBytes})`,
          },
        ]);
      }
      // An oversized error page is dropped: the status alone still types the error.
      return { status, headers: response.headers, text: text ?? '' } satisfies RawResponse;
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      if (events.listenerCount('response') > 0) {
        events.emit('response', {
          method: request.method,
          path: label,
          attempt,
          status,
          elapsedMs: performance.now() - started,
          requestId,
          error: failure instanceof Error ? failure.name : undefined,
        });
      }
    }
  }

  /** Runs `attempt` under the retry policy, reporting each retry as an event. */
  retrying<T>(
    method: string,
    label: string,
    retryable: boolean,
    options: RequestOptions | undefined,
    attempt: (attemptNumber: number) => Promise<T>,
  ): Promise<T> {
    const { events } = this.#config;
    return withRetries(
      this.#policy(options),
      {
        signal: options?.signal,
        retryable,
        onRetry: (error, attemptNumber, delayMs) => {
          events.emit('retry', {
            method,
            path: label,
            attempt: attemptNumber,
            delayMs,
            reason: error instanceof Error ? error.name : 'Error',
            status: error instanceof ApiError ? error.status : undefined,
          });
        },
      },
      attempt,
    );
  }

  /** A call to a data endpoint: bearer token, one replay after a 401, retries, a parsed `data`. */
  async request<T>(spec: DataRequest<T>, options?: RequestOptions): Promise<T> {
    const label = spec.label ?? spec.path;
    const { tokens } = this.#config;
    let replayed = false;
    let lastAttempt = 0;
    const send = async (lease: LeasedToken): Promise<RawResponse> =>
      this.exchange(
        {
          method: spec.method,
          path: spec.path,
          ...(spec.searchParams ? { searchParams: spec.searchParams } : {}),
          headers: {
            authorization: `Bearer ${lease.token.accessToken}`,
            accept: 'application/json',
            ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(spec.body === undefined ? {} : { body: spec.body }),
        },
        ++lastAttempt,
        options,
        label,
      );
    // The token request has its own retries; its failure is final for this call.
    const raceToken = () =>
      raceSignal(
        tokens.get(),
        options?.signal,
        () => new AbortError({ cause: options?.signal?.reason }),
      ).catch((error: unknown) => {
        throw error instanceof AbortError ? error : new AlreadyRetried(error);
      });

    return this.retrying(spec.method, label, spec.retryable ?? true, options, async () => {
      let lease = tokens.peek() ?? (await raceToken());
      let response = await send(lease);
      if (response.status === 401 && !lease.fresh && !replayed) {
        replayed = true;
        await tokens.invalidate(lease.token);
        lease = await raceToken();
        response = await send(lease);
      }
      if (response.status >= 200 && response.status < 300) return this.#parse(spec, label, response);
      const parsed = parseJson(response.text);
      const error = apiErrorFromResponse({
        status: response.status,
        method: spec.method,
        path: label,
        headers: response.headers,
        body: parsed.ok ? parsed.value : undefined,
        requiredScopes: spec.scopes,
        grantedScopes: lease.token.scopes,
        credentialStopped: response.status === 401 && lease.fresh,
      });
      if (error instanceof AuthenticationError) await tokens.invalidate(lease.token);
      throw error;
    });
  }

  #parse<T>(spec: DataRequest<T>, label: string, response: RawResponse): T {
    const json = parseJson(response.text);
    if (!json.ok) {
      throw new ResponseValidationError(spec.method, label, response.status, [
        { path: '', message: 'the body is not JSON' },
      ]);
    }
    const result = spec.schema.safeParse(json.value);
    if (!result.success) {
      throw new ResponseValidationError(spec.method, label, response.status, zodIssues(result.error));
    }
    return result.data;
  }
}
