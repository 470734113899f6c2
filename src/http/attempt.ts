/**
 * One attempt of the transport: what ky's fetch adapter and the body reader are handed, and what
 * the transport notes of it as it goes (transport.ts runs it; ky.ts is its adapter).
 */
import type { EventEmitter } from 'eventemitter3';
import type { ResponseSink } from '../core/api-promise.js';
import type { ClientEvents } from '../core/events.js';
import type { RequestOptions } from '../core/request-options.js';
import type { Deadline, DeadlineErrors } from '../core/time.js';
import {
  AbortError,
  ConnectionError,
  ResponseValidationError,
  TimeoutError,
} from '../errors/client-errors.js';
import { type Redact, safeCause } from '../errors/redact.js';
import { type AdapterInput, fetchFailure, NO_FETCH_OPTIONS } from './ky.js';
import type { Exchange, FetchLike, RawResponse } from './types.js';

/** What an attempt needs of its client's configuration. */
export interface AttemptConfig {
  fetch: FetchLike;
  fetchOptions: Readonly<Record<string, unknown>> | undefined;
  events: EventEmitter<ClientEvents>;
  maxResponseBytes: number;
}

/** What an attempt needs of its transport. */
export interface AttemptOwner {
  deadline(method: string, label: string, options: RequestOptions | undefined): Deadline;
  redaction(request: Exchange): Redact;
}

/** The errors of an attempt's deadline, made when it ends: one object, no closure. */
export class AttemptErrors implements DeadlineErrors {
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
export class Attempt implements AdapterInput {
  readonly fetchOptions: Readonly<Record<string, unknown>>;
  readonly deadline: Deadline;
  status: number | undefined;
  requestId: string | undefined;
  failure: unknown;
  readonly #transport: AttemptOwner;
  readonly #config: AttemptConfig;
  readonly #request: Exchange;
  readonly #label: string;
  readonly #number: number;
  /** The deadline was made for this attempt alone: it ends with it. */
  readonly #own: boolean;
  readonly #sink: ResponseSink | undefined;
  readonly #started = performance.now();

  constructor(
    transport: AttemptOwner,
    config: AttemptConfig,
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
