import type { EventEmitter } from 'eventemitter3';
import type { ResponseSink } from '../core/api-promise.js';
import type { ClientEvents } from '../core/events.js';
import type { RequestOptions } from '../core/request-options.js';
import type { ParseResult } from '../core/standard-schema.js';
import { ApiError } from '../errors/api-error.js';
import { isPartnerError } from '../errors/base.js';
import {
  AbortError,
  ConnectionError,
  ResponseValidationError,
  TimeoutError,
} from '../errors/client-errors.js';
import { apiErrorFromResponse } from '../errors/from-response.js';
import { type Redact, redactor, safeCause } from '../errors/redact.js';
import { toIssues } from '../schemas/issues.js';
import { Deadline } from './abort.js';
import { readText } from './body.js';
import { fetchAdapter, KyClient } from './ky.js';
import { type RetryPolicy, withRetries } from './retry.js';
import {
  type Answer,
  type DataRequest,
  type Exchange,
  type FetchLike,
  fillPath,
  type HeaderValues,
  parseJson,
  type RawResponse,
  type RequestHook,
  type Send,
  type Settle,
} from './types.js';

export type {
  Answer,
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
  Settle,
  StartDeadline,
} from './types.js';
export { fillPath, parseJson } from './types.js';

export interface TransportConfig {
  fetch: FetchLike;
  /** The base URL with the `/api/v1/s2s` prefix, no trailing slash. */
  prefix: string;
  /** Sent with every request, token requests included. */
  defaultHeaders: Readonly<Record<string, string>>;
  /** The SDK's User-Agent, set by ky's hook where no header names one. */
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

/** No fetch options: one object for every call without any. */
const NONE: Readonly<Record<string, unknown>> = Object.freeze({});

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

/**
 * Moves requests through the client's ky instance: one `Deadline` per attempt that covers the
 * whole answer, and p-retry around each attempt. Credentials are not its business: a
 * `RequestHook` puts the token on the request, which ky's hook turns into the header.
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
  deadline(method: string, label: string, options: RequestOptions | undefined): Deadline {
    const timeoutMs = options?.timeoutMs ?? this.#config.timeoutMs;
    const signal = options?.signal;
    return new Deadline(timeoutMs, signal, {
      timedOut: () => new TimeoutError({ method, path: label, timeoutMs }),
      aborted: () => new AbortError({ cause: signal?.reason }),
    });
  }

  /**
   * One attempt: sends through ky, reads the whole body, and turns a timeout, an abort or a broken
   * connection into the SDK's typed errors. HTTP error statuses are returned, not thrown. The
   * attempt's `deadline` covers the wait for headers and the body (and whatever came before, a
   * wait for a token); without one, the attempt has its own.
   */
  exchange(
    request: Exchange,
    attempt: number,
    options: RequestOptions | undefined,
    label = request.path,
    given?: Deadline,
    sink?: ResponseSink,
  ): Promise<RawResponse> {
    // With the caller's deadline no frame of its own: each call in flight holds one less.
    if (given) return this.#exchange(request, attempt, options, label, given, sink);
    const deadline = this.deadline(request.method, label, options);
    return this.#exchange(request, attempt, options, label, deadline, sink).finally(() => deadline.clear());
  }

  async #exchange(
    request: Exchange,
    attempt: number,
    options: RequestOptions | undefined,
    label: string,
    deadline: Deadline,
    sink: ResponseSink | undefined,
  ): Promise<RawResponse> {
    const { events, maxResponseBytes } = this.#config;
    if (deadline.over) throw deadline.reason;
    // From here on the request may reach the service: a submit's outcome is no longer known.
    request.onSent?.();
    const started = performance.now();
    if (events.listenerCount('request') > 0)
      events.emit('request', { method: request.method, path: label, attempt });
    let status: number | undefined;
    let requestId: string | undefined;
    let failure: unknown;
    // What a custom fetch threw may hold the request (and with it the authorization header): only
    // a redacted copy of its name, message and code is kept.
    const broken = (cause: unknown) =>
      new ConnectionError({
        method: request.method,
        path: label,
        cause: safeCause(cause, this.redaction(request)),
      });
    try {
      const response = await this.#send(request, options, deadline, broken);
      status = response.status;
      // The id goes to events, logs, spans and errors: a server that echoes the request in it
      // must not put the bearer token there.
      const sentId = response.headers.get('x-request-id') ?? undefined;
      requestId = sentId === undefined ? undefined : this.redaction(request)(sentId);
      const over = () => deadline.reason;
      const text = await readText(response, deadline, maxResponseBytes, {
        timedOut: over,
        aborted: over,
        broken,
      });
      if (text === undefined && status >= 200 && status < 300) {
        throw new ResponseValidationError({
          method: request.method,
          path: label,
          status,
          issues: [{ path: '', message: `the body is longer than maxResponseBytes (${maxResponseBytes})` }],
        });
      }
      sink?.(response, requestId);
      let headers = response.headers;
      if (requestId !== sentId) {
        headers = new Headers(headers);
        headers.set('x-request-id', requestId as string);
      }
      // An oversized error page is dropped: the status alone still types the error.
      return { status, headers, text: text ?? '' };
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
          elapsedMs: Math.round(performance.now() - started),
          requestId,
          error: failure instanceof Error ? failure.name : undefined,
        });
      }
    }
  }

  /** Hands the request to ky, whose fetch adapter calls the caller's fetch within `deadline`. */
  async #send(
    request: Exchange,
    options: RequestOptions | undefined,
    deadline: Deadline,
    broken: (cause: unknown) => Error,
  ): Promise<Response> {
    const { fetch, fetchOptions } = this.#config;
    const headers: Record<string, string | undefined> = {};
    // `null` leaves a default header out: ky drops a header whose value is `undefined`.
    for (const name in request.headers) headers[name] = request.headers[name] ?? undefined;
    try {
      const ky = this.#ky.ready ?? (await deadline.race(this.#ky.load()));
      // Not raced again here: the adapter races the fetch with the deadline, and ky settles with
      // it. ky is not given the deadline's signal: it would join it to its own with
      // `AbortSignal.any`, a third signal per attempt that nothing needs (fetch has the deadline's).
      return await (ky(request.path, {
        method: request.method,
        headers,
        ...(request.searchParams ? { searchParams: request.searchParams } : {}),
        ...(request.body === undefined ? {} : { body: request.body }),
        // A call's `'user-agent': null` leaves the header out, the SDK's own included.
        context: { token: request.token, userAgent: request.headers['user-agent'] !== null },
        fetch: fetchAdapter({
          fetch,
          // Merged only when the call brings its own: the adapter of each call in flight holds it.
          fetchOptions: options?.fetchOptions
            ? { ...fetchOptions, ...options.fetchOptions }
            : (fetchOptions ?? NONE),
          body: request.body,
          deadline,
          broken,
        }) as typeof globalThis.fetch,
      }) as Promise<Response>);
    } catch (error) {
      if (isPartnerError(error)) throw error;
      if (deadline.over) throw deadline.reason;
      // ky refused to build the request (a header value fetch would refuse too).
      throw broken(error);
    }
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
    const { events } = this.#config;
    return withRetries(
      this.#policy(options),
      {
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
      },
      attempt,
    );
  }

  /**
   * A call to a data endpoint: retries, a parsed `data`, typed errors. `hook` decorates the call
   * and each of its attempts (the bearer token and its 401 replay come from auth/ this way); the
   * transport itself knows no credentials.
   */
  async request<T>(spec: DataRequest<T>, options: RequestOptions | undefined, hook: RequestHook): Promise<T> {
    const label = spec.path;
    const retryable = spec.retryable ?? true;
    const own: HeaderValues =
      spec.body === undefined
        ? { accept: 'application/json' }
        : { accept: 'application/json', 'content-type': 'application/json' };
    const request: Exchange = {
      method: spec.method,
      path: fillPath(spec.path, spec.params),
      ...(spec.searchParams ? { searchParams: spec.searchParams } : {}),
      // The caller's headers were checked not to name the SDK's own, which come last regardless.
      headers: options?.headers ? { ...options.headers, ...own } : own,
      ...(spec.body === undefined ? {} : { body: spec.body }),
      onSent: spec.onSent,
    };
    let lastAttempt = 0;
    const send: Send = (sent, deadline) =>
      this.exchange(sent, ++lastAttempt, options, label, deadline, spec.sink);
    const settle: Settle<T> = (answer) => this.#settle(spec, label, answer);
    const call = (this.#config.wrapHook?.(hook) ?? hook).open(spec, options, () =>
      this.deadline(spec.method, label, options),
    );
    let failure: { error: unknown } | undefined;
    try {
      return await this.retrying(
        spec.method,
        label,
        retryable,
        options,
        () => call.attempt(request, send, settle),
        spec.idempotent ?? true,
      );
    } catch (error) {
      failure = { error };
      throw error;
    } finally {
      call.end(failure);
    }
  }

  /** Turns an answer into the call's result: the parsed data, or the typed error of its status. */
  #settle<T>(spec: DataRequest<T>, label: string, answer: Answer): T | Promise<T> {
    const { response } = answer;
    if (response.status >= 200 && response.status < 300) return this.#parse(spec, label, response);
    const parsed = parseJson(response.text);
    throw apiErrorFromResponse({
      status: response.status,
      method: spec.method,
      path: label,
      headers: response.headers,
      body: parsed.ok ? parsed.value : undefined,
      requiredScopes: spec.scopes,
      grantedScopes: answer.grantedScopes,
      credentialStopped: answer.credentialStopped ?? false,
      redact: this.redaction(answer.request),
      ids: spec.ids,
    });
  }

  #parse<T>(spec: DataRequest<T>, label: string, response: RawResponse): T | Promise<T> {
    const json = parseJson(response.text);
    if (!json.ok) {
      throw new ResponseValidationError({
        method: spec.method,
        path: label,
        status: response.status,
        issues: [{ path: '', message: 'the body is not JSON' }],
      });
    }
    const finish = (result: ParseResult<T>): T => {
      if (result.success) return result.data;
      throw new ResponseValidationError({
        method: spec.method,
        path: label,
        status: response.status,
        issues: toIssues(result.error),
      });
    };
    const result = spec.schema.safeParse(json.value);
    return result instanceof Promise ? result.then(finish) : finish(result);
  }
}
