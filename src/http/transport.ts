import type { EventEmitter } from 'eventemitter3';
import type { Options } from 'ky';
import type { ResponseSink } from '../core/api-promise.js';
import type { ClientEvents } from '../core/events.js';
import type { RequestOptions } from '../core/request-options.js';
import { ApiError } from '../errors/api-error.js';
import {
  AbortError,
  ConnectionError,
  ResponseValidationError,
  TimeoutError,
} from '../errors/client-errors.js';
import { type Redact, redactor, safeCause } from '../errors/redact.js';
import { Deadline, type DeadlineErrors } from './abort.js';
import { readText } from './body.js';
import { DataCall } from './call.js';
import { type AdapterInput, ATTEMPT, fetchFailure, KyClient, NO_FETCH_OPTIONS } from './ky.js';
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

/** The errors of an attempt's deadline, made when it ends: one object, no closure. */
class AttemptErrors implements DeadlineErrors {
  readonly #method: string;
  readonly #label: string;
  readonly #timeoutMs: number;
  readonly #signal: AbortSignal | undefined;

  constructor(method: string, label: string, timeoutMs: number, signal: AbortSignal | undefined) {
    this.#method = method;
    this.#label = label;
    this.#timeoutMs = timeoutMs;
    this.#signal = signal;
  }

  timedOut(): TimeoutError {
    return new TimeoutError({ method: this.#method, path: this.#label, timeoutMs: this.#timeoutMs });
  }

  aborted(): AbortError {
    return new AbortError({ cause: this.#signal?.reason });
  }
}

/**
 * One attempt as ky's fetch adapter and the body reader see it, carried to the adapter in the
 * request's options, and what the transport notes of it as it goes (its status, its request id, its
 * failure): its errors are its methods and its state its fields, so that an attempt in flight holds
 * no closure and its suspended `exchange` few registers.
 */
class Attempt implements AdapterInput {
  readonly fetchOptions: Readonly<Record<string, unknown>>;
  readonly deadline: Deadline;
  status: number | undefined;
  requestId: string | undefined;
  failure: unknown;
  readonly #transport: Transport;
  readonly #config: TransportConfig;
  readonly #request: Exchange;
  readonly #label: string;
  readonly #number: number;
  /** The deadline was made for this attempt alone: it ends with it. */
  readonly #own: boolean;
  readonly #sink: ResponseSink | undefined;
  readonly #started = performance.now();

  constructor(
    transport: Transport,
    config: TransportConfig,
    request: Exchange,
    number: number,
    options: RequestOptions | undefined,
    label: string,
    given: Deadline | undefined,
    sink: ResponseSink | undefined,
  ) {
    this.#transport = transport;
    this.#config = config;
    this.#request = request;
    this.#number = number;
    this.#label = label;
    this.#own = !given;
    this.#sink = sink;
    this.deadline = given ?? transport.deadline(request.method, label, options);
    // Merged only when the call brings its own: every attempt in flight holds what it is given.
    this.fetchOptions = options?.fetchOptions
      ? { ...config.fetchOptions, ...options.fetchOptions }
      : (config.fetchOptions ?? NO_FETCH_OPTIONS);
  }

  get fetch(): FetchLike {
    return this.#config.fetch;
  }

  get body(): string | undefined {
    return this.#request.body;
  }

  /**
   * The attempt starts, unless its deadline is over already: from here on the request may reach
   * the service (a submit's outcome is no longer known).
   */
  begin(): void {
    if (this.deadline.over) {
      if (this.#own) this.deadline.clear();
      throw this.deadline.reason;
    }
    const request = this.#request;
    request.onSent?.();
    const { events } = this.#config;
    if (events.listenerCount('request') > 0)
      events.emit('request', { method: request.method, path: this.#label, attempt: this.#number });
  }

  /**
   * The answer's head came: its status, and its request id, which goes to events, logs, spans and
   * errors, where a server that echoes the request in it must not put the bearer token.
   */
  received(response: Response): void {
    this.status = response.status;
    const sentId = response.headers.get('x-request-id') ?? undefined;
    this.requestId = sentId === undefined ? undefined : this.#transport.redaction(this.#request)(sentId);
  }

  /** The answer read whole (`undefined` past `maxResponseBytes`), reported to the call's sink. */
  answered(response: Response, text: string | undefined): RawResponse {
    const { status } = response;
    const { requestId } = this;
    if (text === undefined && status >= 200 && status < 300) {
      const { maxResponseBytes } = this.#config;
      throw new ResponseValidationError({
        method: this.#request.method,
        path: this.#label,
        status,
        issues: [{ path: '', message: `the body is longer than maxResponseBytes (${maxResponseBytes})` }],
      });
    }
    this.#sink?.(response, requestId);
    let headers = response.headers;
    if (requestId !== (headers.get('x-request-id') ?? undefined)) {
      headers = new Headers(headers);
      headers.set('x-request-id', requestId as string);
    }
    // An oversized error page is dropped: the status alone still types the error.
    return { status, headers, text: text ?? '' };
  }

  /** The attempt is over, whichever way: its own deadline cleared, the `response` event told. */
  end(): void {
    if (this.#own) this.deadline.clear();
    const { events } = this.#config;
    if (events.listenerCount('response') > 0) {
      const failure = this.failure;
      events.emit('response', {
        method: this.#request.method,
        path: this.#label,
        attempt: this.#number,
        status: this.status,
        elapsedMs: Math.round(performance.now() - this.#started),
        requestId: this.requestId,
        error: failure instanceof Error ? failure.name : undefined,
      });
    }
  }

  /**
   * What a custom fetch threw may hold the request (and with it the authorization header): only
   * a redacted copy of its name, message and code is kept.
   */
  broken(cause: unknown): ConnectionError {
    return new ConnectionError({
      method: this.#request.method,
      path: this.#label,
      cause: safeCause(cause, this.#transport.redaction(this.#request)),
    });
  }

  /** The body read ends with the deadline's own error, however it ended. */
  timedOut(): unknown {
    return this.deadline.reason;
  }

  aborted(): unknown {
    return this.deadline.reason;
  }

  /** What a rejected send becomes: the SDK's errors as they are, the deadline's, or a broken connection. */
  failed(error: unknown): unknown {
    // ky refused to build the request (a header value fetch would refuse too), or the runtime's
    // fetch, which the adapter hands on unwrapped, rejected.
    return fetchFailure(this, error);
  }
}

/** ky's headers of one request: the request's (`null` as `undefined`, which takes a default out) and its token. */
function headersOf(request: Exchange): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const name in request.headers) headers[name] = request.headers[name] ?? undefined;
  if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`;
  return headers;
}

/**
 * The headers of the calls that bring none of their own (the SDK's shared, frozen ones) with the
 * token they carry, made once per token: every call in flight shares them, not a copy each.
 */
const withToken = new WeakMap<
  object,
  { token: string | undefined; headers: Record<string, string | undefined> }
>();

function kyHeaders(request: Exchange): Record<string, string | undefined> {
  if (!Object.isFrozen(request.headers)) return headersOf(request);
  const made = withToken.get(request.headers);
  if (made && made.token === request.token) return made.headers;
  const headers = Object.freeze(headersOf(request));
  withToken.set(request.headers, { token: request.token, headers });
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

  constructor(config: TransportConfig) {
    this.#config = config;
    this.#secrets = [...config.secrets, ...credentialValues(config.defaultHeaders)];
    this.#ky = new KyClient(config.prefix, config.defaultHeaders, config.userAgent);
  }

  #policy(options: RequestOptions | undefined): RetryPolicy {
    return options?.maxRetries === undefined
      ? this.#config.retry
      : { ...this.#config.retry, retries: options.maxRetries };
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
        throw sent.failed(error);
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
      headers: kyHeaders(request),
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
