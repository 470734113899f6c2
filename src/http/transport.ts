import type { EventEmitter } from 'eventemitter3';
import type { Options } from 'ky';
import type { ResponseSink } from '../core/api-promise.js';
import type { ClientEvents } from '../core/events.js';
import type { RequestOptions } from '../core/request-options.js';
import { ApiError } from '../errors/api-error.js';
import { type Redact, redactor } from '../errors/redact.js';
import { Deadline, type DeadlineErrors } from './abort.js';
import { Attempt, AttemptErrors } from './attempt.js';
import { readText } from './body.js';
import { DataCall } from './call.js';
import { type AdapterInput, ATTEMPT, fallBackToUrls, KyClient } from './ky.js';
import { type RetryHooks, type RetryPolicy, retried, withRetries } from './retry.js';
import type { DataRequest, Exchange, FetchLike, RawResponse, RequestHook } from './types.js';

export type {
  Answer,
  CallContext,
  CallHook,
  DataRequest,
  DataTransport,
  Exchange,
  FetchLike,
  HeaderValues,
  Parser,
  RawResponse,
  RequestHook,
  Send,
} from './types.js';
export { fillPath, parseJson } from './types.js';

export interface TransportConfig {
  fetch: FetchLike;
  /** The base URL with the `/api/v1/s2s` prefix, no trailing slash. */
  prefix: string;
  /** Sent with every request, token requests included. */
  defaultHeaders: Readonly<Record<string, string>>;
  /** The SDK's User-Agent, under `defaultHeaders` (which may name their own). */
  userAgent: string;
  /** Merged into every fetch init (a `dispatcher`, say), under the SDK's own fields. */
  fetchOptions: Readonly<Record<string, unknown>> | undefined;
  events: EventEmitter<ClientEvents>;
  timeoutMs: number;
  /** The longest answer read; a longer one is cancelled unread. */
  maxResponseBytes: number;
  retry: RetryPolicy;
  /** The client's secrets in every form a request carries them (raw, form-encoded, Basic). */
  secrets: readonly string[];
  /** Decorates each data call's hook around the caller's (tracing: `Tracing.wrap`). */
  wrapHook?: (hook: RequestHook) => RequestHook;
}

/** Names of headers whose values are credentials: an API key, a proxy's Basic, a cookie. */
const CREDENTIAL_HEADER = /auth|token|secret|cookie|passw|api-?key|session|credential|signature/i;
/** Shorter values are not masked: a `1` would be masked in every number of a message. */
const MIN_MASKED_LENGTH = 8;

/** The values of the credential headers among `headers`, with and without their scheme. */
function credentialValues(headers: Readonly<Record<string, string | null | undefined>>): string[] {
  const values: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (typeof value !== 'string' || !CREDENTIAL_HEADER.test(name)) continue;
    for (const form of [value, value.replace(/^\S+\s+/, '')])
      if (form.length >= MIN_MASKED_LENGTH) values.push(form);
  }
  return values;
}

/** ky's headers of one request: the request's (`null` as `undefined`, which takes a default out) and its token. */
function headersOf(request: Exchange): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const name in request.headers) headers[name] = request.headers[name] ?? undefined;
  if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`;
  return headers;
}

/**
 * Moves requests through the client's ky instance: one `Deadline` per attempt that covers the
 * whole answer, and p-retry after a failed first attempt. Credentials are not its business: a
 * `RequestHook` puts the token on the request, which goes out as the `authorization` header.
 */
export class Transport {
  readonly #config: TransportConfig;
  /** The client's secrets and the values of its default credential headers. */
  readonly #secrets: readonly string[];
  readonly #ky: KyClient;
  /**
   * The headers of the calls that bring none of their own (the SDK's shared, frozen ones) with the
   * token they carry, made once per token and held by this client alone: every call in flight
   * shares them, not a copy each, and no token outlives the client here.
   */
  readonly #withToken = new Map<
    object,
    { token: string | undefined; headers: Record<string, string | undefined> }
  >();

  constructor(config: TransportConfig) {
    this.#config = config;
    this.#secrets = [...config.secrets, ...credentialValues(config.defaultHeaders)];
    this.#ky = new KyClient(config.prefix, config.defaultHeaders, config.userAgent);
  }

  #policy(options: RequestOptions | undefined): RetryPolicy {
    if (options?.maxRetries === undefined && options?.maxRetryTimeMs === undefined) return this.#config.retry;
    return {
      ...this.#config.retry,
      retries: options.maxRetries ?? this.#config.retry.retries,
      maxRetryTimeMs: options.maxRetryTimeMs ?? this.#config.retry.maxRetryTimeMs,
    };
  }

  /**
   * Masks what `request` carries that is secret (the client secret in each form, the Basic
   * credential, the bearer token, the caller's credential headers) in anything a server sends
   * back: it may echo the request.
   */
  redaction(request: Exchange): Redact {
    const authorization = request.headers.authorization;
    return redactor([
      ...this.#secrets,
      ...(authorization ? [authorization, authorization.replace(/^\S+\s+/, '')] : []),
      ...(request.token ? [`Bearer ${request.token}`, request.token] : []),
      ...credentialValues(request.headers),
    ]);
  }

  /**
   * One attempt's time: `timeoutMs` (the call's or the client's) and the caller's signal, ending
   * in a `TimeoutError` or an `AbortError`.
   */
  deadline(
    method: string,
    label: string,
    options: RequestOptions | undefined,
    errors?: DeadlineErrors,
  ): Deadline {
    const timeoutMs = this.timeoutMs(options);
    const signal = options?.signal;
    return new Deadline(timeoutMs, signal, errors ?? new AttemptErrors(method, label, timeoutMs, signal));
  }

  /** An attempt's time: the call's `timeoutMs`, or the client's. */
  timeoutMs(options: RequestOptions | undefined): number {
    return options?.timeoutMs ?? this.#config.timeoutMs;
  }

  /**
   * One attempt: sends through ky, reads the whole body, and turns a timeout, an abort or a broken
   * connection into the SDK's typed errors. HTTP error statuses are returned, not thrown. The
   * attempt's `deadline` covers the wait for headers and the body (and whatever came before, a
   * wait for a token); without one, the attempt has its own.
   */
  async exchange(
    request: Exchange,
    attempt: number,
    options: RequestOptions | undefined,
    label = request.path,
    given?: Deadline,
    sink?: ResponseSink,
  ): Promise<RawResponse> {
    // What the attempt notes as it goes is on `sent`: a call in flight suspends here with little.
    const sent = new Attempt(this, this.#config, request, attempt, options, label, given, sink);
    sent.begin();
    try {
      let response: Response;
      try {
        response = await this.#send(request, sent);
      } catch (error) {
        // The global fetch could not read the `Request` (see `fallBackToUrls`): nothing went out,
        // and it gets a URL string now. Caught here, not in the adapter, where a `catch` would hold
        // a closure for every call in flight.
        if (!fallBackToUrls(error)) throw sent.failed(error);
        response = await this.#send(request, sent).catch((again: unknown) =>
          Promise.reject(sent.failed(again)),
        );
      }
      sent.received(response);
      return sent.answered(
        response,
        await readText(response, sent.deadline, this.#config.maxResponseBytes, sent),
      );
    } catch (error) {
      sent.failure = error;
      throw error;
    } finally {
      sent.end();
    }
  }

  /** ky's headers of one request (see `#withToken`). */
  #headers(request: Exchange): Record<string, string | undefined> {
    if (!Object.isFrozen(request.headers)) return headersOf(request);
    const made = this.#withToken.get(request.headers);
    if (made && made.token === request.token) return made.headers;
    const headers = Object.freeze(headersOf(request));
    this.#withToken.set(request.headers, { token: request.token, headers });
    return headers;
  }

  /**
   * Hands the request to ky, whose fetch adapter calls the caller's fetch within the attempt's
   * deadline. Not raced again here: the adapter races the fetch with the deadline and ky settles
   * with it. ky is not given the deadline's signal either: it would join it to its own with
   * `AbortSignal.any`, one more signal per call in flight that nothing needs.
   */
  #send(request: Exchange, attempt: Attempt): Promise<Response> {
    const ky = this.#ky.ready;
    if (!ky) return attempt.deadline.race(this.#ky.load()).then(() => this.#send(request, attempt));
    const options: Options & { [ATTEMPT]: AdapterInput } = {
      method: request.method,
      headers: this.#headers(request),
      ...(request.searchParams ? { searchParams: request.searchParams } : {}),
      ...(request.body === undefined ? {} : { body: request.body }),
      [ATTEMPT]: attempt,
    };
    return ky(request.path, options) as Promise<Response>;
  }

  #retryHooks(
    method: string,
    label: string,
    retryable: boolean,
    options: RequestOptions | undefined,
    idempotent: boolean,
  ): RetryHooks {
    const { events } = this.#config;
    return {
      signal: options?.signal,
      retryable,
      idempotent,
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
    };
  }

  /** Runs `attempt` under the retry policy, reporting each retry as an event. */
  retrying<T>(
    method: string,
    label: string,
    retryable: boolean,
    options: RequestOptions | undefined,
    attempt: (attemptNumber: number) => Promise<T>,
    idempotent = true,
  ): Promise<T> {
    const hooks = this.#retryHooks(method, label, retryable, options, idempotent);
    return withRetries(this.#policy(options), hooks, attempt);
  }

  /**
   * After a data call's first attempt failed with `first`: the retries under the policy, or
   * `first` as it is when it is not to be retried. Nothing of the retry layer is made before.
   */
  retried<T>(
    first: unknown,
    spec: DataRequest<T>,
    options: RequestOptions | undefined,
    attempt: () => Promise<T>,
  ): Promise<T> {
    const hooks = this.#retryHooks(
      spec.method,
      spec.path,
      spec.retryable ?? true,
      options,
      spec.idempotent ?? true,
    );
    return retried(this.#policy(options), hooks, attempt, first);
  }

  /**
   * A call to a data endpoint: retries, a parsed `data`, typed errors. `hook` decorates the call
   * and each of its attempts (the bearer token and its 401 replay come from auth/ this way); the
   * transport itself knows no credentials.
   */
  request<T>(spec: DataRequest<T>, options: RequestOptions | undefined, hook: RequestHook): Promise<T> {
    return new DataCall(this, spec, options, this.#config.wrapHook?.(hook) ?? hook).run();
  }
}
