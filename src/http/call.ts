/**
 * One call, from its description to its result, as one object: its request, its options, its
 * sink, the current attempt's deadline, the attempt number, the status and request id of the
 * last answer. `run` makes its attempts through a hook (auth) under `retry`; `send` is one request
 * through ky with the body read; `settle` turns an answer into the result or the typed error.
 * What a call keeps in flight is on this object and its methods are on the prototype: ten thousand
 * calls in flight hold ten thousand of them and a few suspended frames each, no closure per step.
 */
import type { Options } from 'ky';
import { readText } from '../core/body.js';
import type { RequestOptions } from '../core/request-options.js';
import type { ParseResult } from '../core/standard-schema.js';
import { Deadline } from '../core/time.js';
import { ApiError } from '../errors/api-error.js';
import {
  AbortError,
  ConnectionError,
  ResponseValidationError,
  TimeoutError,
} from '../errors/client-errors.js';
import { apiErrorFromResponse } from '../errors/from-response.js';
import { type Redact, safeCause } from '../errors/redact.js';
import { toIssues } from '../schemas/issues.js';
import { type AdapterInput, ATTEMPT, fallBackToUrls, fetchFailure, NO_FETCH_OPTIONS } from './ky.js';
import { type RetryPolicy, type RetryRule, retry } from './retry.js';
import type { CallSpans } from './tracing.js';
import type { Transport } from './transport.js';
import {
  type DataRequest,
  type FetchLike,
  fillPath,
  type HeaderValues,
  parseJson,
  type RawResponse,
} from './types.js';

/** One request of a call within its current deadline: `call.send()`, or a decoration of it (a span). */
export type Send = <T>(call: Call<T>) => Promise<RawResponse>;

/**
 * One attempt of a call, decorated: Octokit's auth hook shape (`hook(request, route)`). It may wait
 * for what it needs within the attempt's deadline (`call.begin()`), put a token on the call,
 * `send` (again, after a 401), and returns the attempt's result (`call.settle`). The retries are
 * the call's, around it.
 *
 * @example
 * const bearer: Hook = async (call, send) => {
 *   const deadline = call.begin();
 *   try { call.token = await lease(deadline); return call.settle(await send(call)); } finally { deadline.clear(); }
 * };
 */
export type Hook = <T>(call: Call<T>, send: Send) => Promise<T>;

/** What the answer's error names of the credential it was sent with. */
export interface AuthFacts {
  /** Scopes the request's token holds, named in a 403's message. */
  grantedScopes?: readonly string[] | undefined;
  /** A 401 here means the credential is stopped, not one revoked token. */
  credentialStopped?: boolean;
}

/** The SDK's own headers, shared by every call that brings none: the caller's never replace them. */
const ACCEPT: HeaderValues = Object.freeze({ accept: 'application/json' });
const ACCEPT_WITH_BODY: HeaderValues = Object.freeze({
  accept: 'application/json',
  'content-type': 'application/json',
});

const sendCall: Send = (call) => call.send();

const ruleOf = (spec: DataRequest<unknown>): RetryRule =>
  spec.retryable === false ? 'never' : spec.idempotent === false ? 'unacted' : 'any';

export class Call<T> implements AdapterInput {
  readonly spec: DataRequest<T>;
  readonly options: RequestOptions | undefined;
  /** The request's headers, the same object at each attempt. */
  readonly headers: HeaderValues;
  /** The bearer token, which goes out as the `authorization` header: the hook sets it before each send. */
  token: string | undefined = undefined;
  /** The client's `fetchOptions` under the call's, merged only when the call brings its own. */
  readonly fetchOptions: Readonly<Record<string, unknown>>;
  /** The current attempt's time (`begin`): the wait for a token, the request and the body read. */
  deadline!: Deadline;
  /** Requests sent so far, for the events' `attempt` (a replay after a 401 counts). */
  attempt = 0;
  /** The last answer's status and request id (redacted); `undefined` before its head came. */
  status: number | undefined = undefined;
  requestId: string | undefined = undefined;
  readonly #transport: Transport;
  /** The path with its placeholders filled, once. */
  readonly #path: string;

  constructor(transport: Transport, spec: DataRequest<T>, options: RequestOptions | undefined) {
    this.#transport = transport;
    this.spec = spec;
    this.options = options;
    this.#path = fillPath(spec.path, spec.params);
    const own = spec.headers ?? (spec.body === undefined ? ACCEPT : ACCEPT_WITH_BODY);
    // The caller's headers were checked not to name the SDK's own, which come last regardless.
    this.headers = options?.headers ? { ...options.headers, ...own } : own;
    const shared = transport.config.fetchOptions;
    this.fetchOptions = options?.fetchOptions
      ? { ...shared, ...options.fetchOptions }
      : (shared ?? NO_FETCH_OPTIONS);
  }

  get fetch(): FetchLike {
    return this.#transport.config.fetch;
  }

  get body(): string | undefined {
    return this.spec.body;
  }

  get policy(): RetryPolicy {
    return this.#transport.policy(this.options);
  }

  get signal(): AbortSignal | undefined {
    return this.options?.signal;
  }

  /**
   * Starts one attempt's time (`timeoutMs` and the caller's signal); whoever began it clears it.
   * `unref`: its timer keeps no process alive (a token request that may outlive every call).
   */
  begin(timer?: { unref?: boolean }): Deadline {
    const timeoutMs = this.#transport.timeoutMs(this.options);
    this.deadline = new Deadline(timeoutMs, this.options?.signal, this, timer);
    return this.deadline;
  }

  /** What its deadlines end with: the call is their errors, not an object more each. */
  timedOut(): TimeoutError {
    const { method, path } = this.spec;
    return new TimeoutError({ method, path, timeoutMs: this.#transport.timeoutMs(this.options) });
  }

  aborted(): AbortError {
    return new AbortError({ cause: this.options?.signal?.reason });
  }

  /**
   * A broken connection. What a custom fetch threw may hold the request (and with it the
   * authorization header): only a redacted copy of its name, message and code is kept.
   */
  broken(cause: unknown): ConnectionError {
    const { method, path } = this.spec;
    return new ConnectionError({ method, path, cause: safeCause(cause, this.redaction()) });
  }

  /** Masks the secrets this call's request carries (see `Transport.redaction`). */
  redaction(): Redact {
    return this.#transport.redaction(this.headers, this.token);
  }

  /** A retry is about to wait: the client's `retry` event. */
  retrying(error: unknown, attempt: number, delayMs: number): void {
    const { method, path } = this.spec;
    this.#transport.config.events.emit('retry', {
      method,
      path,
      attempt,
      delayMs,
      reason: error instanceof Error ? error.name : 'Error',
      status: error instanceof ApiError ? error.status : undefined,
    });
  }

  /** The call: its attempts through `hook` under the retry policy, in spans when the client traces. */
  run(hook: Hook): Promise<T> {
    const spans = this.#transport.config.tracing?.open(this.spec.method, this.spec.path);
    if (spans) return this.#traced(hook, spans);
    return retry(this, () => hook(this, sendCall), ruleOf(this.spec));
  }

  async #traced(hook: Hook, spans: CallSpans): Promise<T> {
    const send: Send = (call) => spans.send(() => call.send());
    let failure: { error: unknown } | undefined;
    try {
      return await retry(this, () => spans.attempt(() => hook(this, send)), ruleOf(this.spec));
    } catch (error) {
      failure = { error };
      throw error;
    } finally {
      spans.end(failure);
    }
  }

  /**
   * One request within the current deadline: sent through ky, its whole body read, a timeout, an
   * abort or a broken connection typed. An HTTP error status is answered, not thrown.
   */
  async send(): Promise<RawResponse> {
    const { deadline } = this;
    if (deadline.over) throw deadline.reason;
    // From here on the request may reach the service: a submit's outcome is no longer known.
    this.spec.onSent?.();
    const { method, path } = this.spec;
    const { events, maxResponseBytes } = this.#transport.config;
    const attempt = ++this.attempt;
    this.status = undefined;
    this.requestId = undefined;
    const started = performance.now();
    if (events.listenerCount('request') > 0) events.emit('request', { method, path, attempt });
    let failure: unknown;
    try {
      let response: Response;
      try {
        response = await this.#kySend();
      } catch (error) {
        // The global fetch could not read the `Request` (see `fallBackToUrls`): nothing went out,
        // and it gets a URL string now. Caught here, not in the adapter, where a `catch` would hold
        // a closure for every call in flight.
        if (!fallBackToUrls(error)) throw fetchFailure(this, error);
        response = await this.#kySend().catch((again: unknown) => Promise.reject(fetchFailure(this, again)));
      }
      this.status = response.status;
      // The request id goes to events, logs, spans and errors: a server that echoes the request in
      // it must not put the bearer token there.
      const sentId = response.headers.get('x-request-id') ?? undefined;
      this.requestId = sentId === undefined ? undefined : this.redaction()(sentId);
      return this.#answered(response, await readText(response, deadline, maxResponseBytes, this));
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      if (events.listenerCount('response') > 0) {
        events.emit('response', {
          method,
          path,
          attempt,
          status: this.status,
          elapsedMs: Math.round(performance.now() - started),
          requestId: this.requestId,
          error: failure instanceof Error ? failure.name : undefined,
        });
      }
    }
  }

  /**
   * Hands the request to ky, whose fetch adapter calls the fetch within the attempt's deadline. ky
   * is not given the deadline's signal: it would join it to its own with `AbortSignal.any`, one
   * more signal per call in flight that nothing needs.
   */
  #kySend(): Promise<Response> {
    const { ky } = this.#transport;
    const instance = ky.ready;
    if (!instance) return this.deadline.race(ky.load()).then(() => this.#kySend());
    const { method, searchParams, body } = this.spec;
    const options: Options & { [ATTEMPT]: AdapterInput } = {
      method,
      headers: this.#transport.headers(this.headers, this.token),
      ...(searchParams ? { searchParams } : {}),
      ...(body === undefined ? {} : { body }),
      [ATTEMPT]: this,
    };
    return instance(this.#path, options) as Promise<Response>;
  }

  /** The answer read whole (`undefined` past `maxResponseBytes`), reported to the call's sink. */
  #answered(response: Response, text: string | undefined): RawResponse {
    const { status } = response;
    const { requestId } = this;
    if (text === undefined && status >= 200 && status < 300) {
      const { maxResponseBytes } = this.#transport.config;
      throw new ResponseValidationError({
        method: this.spec.method,
        path: this.spec.path,
        status,
        issues: [{ path: '', message: `the body is longer than maxResponseBytes (${maxResponseBytes})` }],
      });
    }
    this.spec.sink?.(response, requestId);
    let headers = response.headers;
    if (requestId !== (headers.get('x-request-id') ?? undefined)) {
      headers = new Headers(headers);
      headers.set('x-request-id', requestId as string);
    }
    // An oversized error page is dropped: the status alone still types the error.
    return { status, headers, text: text ?? '' };
  }

  /**
   * The call's result from an answer to the request as last sent: what the schema read (its `data`
   * with `unwrap`: the one place the envelope is taken off), or the typed error of its status.
   */
  settle(response: RawResponse, auth: AuthFacts = {}): T | Promise<T> {
    const { spec } = this;
    if (response.status >= 200 && response.status < 300) return parse(spec, response);
    const parsed = parseJson(response.text);
    throw apiErrorFromResponse({
      status: response.status,
      method: spec.method,
      path: spec.path,
      headers: response.headers,
      body: parsed.ok ? parsed.value : undefined,
      requiredScopes: spec.scopes,
      grantedScopes: auth.grantedScopes,
      credentialStopped: auth.credentialStopped ?? false,
      redact: this.redaction(),
      ids: spec.ids,
    });
  }
}

function parse<T>(spec: DataRequest<T>, response: RawResponse): T | Promise<T> {
  const { method, path } = spec;
  const { status } = response;
  const json = parseJson(response.text);
  if (!json.ok)
    throw new ResponseValidationError({
      method,
      path,
      status,
      issues: [{ path: '', message: 'the body is not JSON' }],
    });
  const finish = (result: ParseResult<unknown>): T => {
    if (!result.success)
      throw new ResponseValidationError({ method, path, status, issues: toIssues(result.error) });
    const mismatch = spec.check?.(result.data);
    if (mismatch?.length) throw ResponseValidationError.mismatch({ method, path, status, issues: mismatch });
    return (spec.unwrap ? (result.data as { data: T }).data : result.data) as T;
  };
  if (!spec.schema) return finish({ success: true, data: json.value });
  const result = spec.schema.safeParse(json.value);
  return result instanceof Promise ? result.then(finish) : finish(result);
}
