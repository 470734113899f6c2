import type { EventEmitter } from 'eventemitter3';
import { sinkOf } from '../core/api-promise.js';
import type { ClientEvents } from '../core/events.js';
import type { RequestOptions } from '../core/request-options.js';
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
import { type IssueList, toIssues } from '../schemas/issues.js';
import { readText } from './body.js';
import { type RetryPolicy, withRetries } from './retry.js';

/** An HTTP answer, read in full within the attempt's time. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** Header values; `null` takes out a default header for one call. */
export type HeaderValues = Record<string, string | null | undefined>;

export interface Exchange {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below `/api/v1/s2s`. */
  path: string;
  searchParams?: URLSearchParams;
  /** Over the client's default headers; the SDK's own (authorization, content type) come last. */
  headers: HeaderValues;
  body?: string;
  /** Called as the request is handed to fetch: from then on the service may act on it. */
  onSent?: (() => void) | undefined;
}

export interface DataRequest<T> {
  /** The ids the call names (`userId`, `routeId`, …), for a 404's error to name them. */
  ids?: Readonly<Record<string, string>>;
  method: Exchange['method'];
  path: string;
  /** The path as events and errors show it: the template (`/bridge/transfers/{transferId}`), no query. */
  label?: string;
  searchParams?: URLSearchParams;
  /** An already serialised JSON body. */
  body?: string;
  /** Scopes the endpoint needs, named in a 403's message. */
  scopes: readonly string[];
  schema: Parser<T>;
  /** False for a submit: it is never sent twice, neither by the retry layer nor after a 401. */
  retryable?: boolean;
  /**
   * False for a request that may act twice if repeated (a POST of `client.request` by default): it
   * is retried only after a 429 or a connection that never reached the service.
   */
  idempotent?: boolean;
  /** Called as each attempt is handed to fetch, so that a caller knows the request went out. */
  onSent?: () => void;
}

/**
 * Any fetch-compatible function: the global one, undici's own (with a `dispatcher` in
 * `fetchOptions`), a proxy-aware one, or a test double. The SDK calls it with a URL string and an
 * init object, never a `Request`, so that a fetch from another package or realm can read it; its
 * answer is duck-typed.
 */
// `any`: undici's own fetch types its init with undici's types, which are not the global ones.
export type FetchLike = (url: string, init: any) => Promise<unknown>;

export interface TransportConfig {
  fetch: FetchLike;
  /** The base URL with the `/api/v1/s2s` prefix, no trailing slash. */
  prefix: string;
  /** Sent with every request, token requests included (the User-Agent among them). */
  defaultHeaders: Readonly<Record<string, string>>;
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

/** Duck-typed, so that a fetch from another realm or package (undici's own) still fits. */
function isResponse(value: unknown): value is Response {
  if (typeof value !== 'object' || value === null) return false;
  const response = value as Partial<Response>;
  return (
    typeof response.status === 'number' &&
    typeof (response.headers as Partial<Headers> | undefined)?.get === 'function' &&
    (response.body === null ||
      typeof (response.body as Partial<ReadableStream> | undefined)?.getReader === 'function')
  );
}

/** Anything with zod's `safeParse` shape: a zod schema, or a hand-written reader of a body. */
export interface Parser<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: IssueList };
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Sends one attempt's request within what is left of the attempt's time, begun at `startedAt`. */
export type Send = (request: Exchange, startedAt: number) => Promise<RawResponse>;

/** An answer a hook settled on, with what the error of a failed status names. */
export interface Answer {
  /** The request as sent: what it carried is masked in the error. */
  request: Exchange;
  response: RawResponse;
  /** Scopes the request's credential holds, named in a 403's message. */
  grantedScopes?: readonly string[] | undefined;
  /** A 401 here means the credential is stopped, not one revoked token. */
  credentialStopped?: boolean;
}

/** Makes the call's result from an answer: the parsed data, or throws the typed error of its status. */
export type Settle<T> = (answer: Answer) => T;

/** What a hook learns of the call it decorates. */
export interface CallInfo {
  method: Exchange['method'];
  /** The path as events and errors show it. */
  label: string;
  /** False for a submit: its request may act twice, so it is never sent twice. */
  retryable: boolean;
  options: RequestOptions | undefined;
}

/**
 * Decorates data calls, in the shape of Octokit's auth hook (`hook(request, options)`): the
 * transport hands each attempt the undecorated `send` and `settle`, and the hook may add headers,
 * wait for what it needs within the attempt's time, send again, and see the error before it is
 * thrown. The retry layer stays the transport's, around each decorated attempt.
 */
export interface RequestHook {
  /** One data call starts; what it returns decorates each attempt until `end`. */
  open(call: CallInfo): CallHook;
}

/** One call's decoration, from `RequestHook.open`. */
export interface CallHook {
  attempt<T>(request: Exchange, send: Send, settle: Settle<T>): Promise<T>;
  /** The call is over: `failure` holds what it threw, when it failed. */
  end(failure?: { error: unknown }): void;
}

/** What resources call: a data request in, its parsed `data` out (the transport decorated by auth). */
export interface DataTransport {
  request<T>(spec: DataRequest<T>, options?: RequestOptions): Promise<T>;
}

/**
 * Moves requests: fetch with a URL and an init, a timeout that covers the whole answer, and the retry layer
 * around each attempt. Credentials are not its business: a `RequestHook` adds them.
 */
export class Transport {
  readonly #config: TransportConfig;
  /** The client's secrets and the values of its default credential headers. */
  readonly #secrets: readonly string[];

  constructor(config: TransportConfig) {
    this.#config = config;
    this.#secrets = [...config.secrets, ...credentialValues(config.defaultHeaders)];
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
      ...credentialValues(request.headers),
    ]);
  }

  /** The URL and init one attempt hands to fetch: a string and a plain object, never a `Request`. */
  #fetchArgs(request: Exchange, options: RequestOptions | undefined, signal: AbortSignal) {
    const { prefix, defaultHeaders, fetchOptions } = this.#config;
    const search = request.searchParams?.toString();
    const headers: Record<string, string> = { ...defaultHeaders };
    for (const name in request.headers) {
      const value = request.headers[name];
      if (value === null || value === undefined) delete headers[name];
      else headers[name] = value;
    }
    const init: Record<string, unknown> = {
      ...fetchOptions,
      ...options?.fetchOptions,
      method: request.method,
      headers,
      // A redirect is answered as an error: following it would carry the bearer token, or on a 307
      // to the token endpoint the client secret in the body, to wherever the Location points.
      redirect: 'manual',
      signal,
    };
    // A `body` from fetchOptions would go out with a GET, or in place of a POST's empty one.
    if (request.body === undefined) delete init.body;
    else init.body = request.body;
    return { url: search ? `${prefix}${request.path}?${search}` : `${prefix}${request.path}`, init };
  }

  /**
   * One attempt: sends, reads the whole body, and turns a timeout, an abort or a broken connection
   * into the SDK's typed errors. HTTP error statuses are returned, not thrown. The attempt's time
   * covers the wait for headers, then the body is read within what is left of it. `spentMs` of the
   * attempt's time already went into waiting for a token.
   */
  async exchange(
    request: Exchange,
    attempt: number,
    options: RequestOptions | undefined,
    label = request.path,
    spentMs = 0,
  ) {
    const { events } = this.#config;
    const timeoutMs = options?.timeoutMs ?? this.#config.timeoutMs;
    const budgetMs = timeoutMs - spentMs;
    const signal = options?.signal;
    if (signal?.aborted) throw new AbortError({ cause: signal.reason });
    if (budgetMs <= 0) throw new TimeoutError({ method: request.method, path: label, timeoutMs });
    // From here on the request may reach the service: a submit's outcome is no longer known.
    request.onSent?.();
    const started = performance.now();
    if (events.listenerCount('request') > 0)
      events.emit('request', { method: request.method, path: label, attempt });
    let status: number | undefined;
    let requestId: string | undefined;
    let failure: unknown;
    const timedOut = () => new TimeoutError({ method: request.method, path: label, timeoutMs });
    const aborted = () => new AbortError({ cause: signal?.reason });
    // What a custom fetch threw may hold the request (and with it the authorization header): only
    // a redacted copy of its name, message and code is kept.
    const broken = (cause: unknown) =>
      new ConnectionError({
        method: request.method,
        path: label,
        cause: safeCause(cause, this.redaction(request)),
      });
    try {
      const response = await this.#send(request, options, budgetMs, { timedOut, aborted, broken });
      status = response.status;
      // The id goes to events, logs, spans and errors: a server that echoes the request in it
      // must not put the bearer token there.
      const sentId = response.headers.get('x-request-id') ?? undefined;
      requestId = sentId === undefined ? undefined : this.redaction(request)(sentId);
      const text = await readText(
        response,
        budgetMs - (performance.now() - started),
        this.#config.maxResponseBytes,
        signal,
        { timedOut, aborted, broken },
      );
      if (text === undefined && status >= 200 && status < 300) {
        throw new ResponseValidationError({
          method: request.method,
          path: label,
          status,
          issues: [
            {
              path: '',
              message: `the body is longer than maxResponseBytes (${this.#config.maxResponseBytes})`,
            },
          ],
        });
      }
      sinkOf(options)?.(response, requestId);
      let headers = response.headers;
      if (requestId !== sentId) {
        headers = new Headers(headers);
        headers.set('x-request-id', requestId as string);
      }
      // An oversized error page is dropped: the status alone still types the error.
      return { status, headers, text: text ?? '' } satisfies RawResponse;
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

  /**
   * Hands the request to fetch and waits for its headers within `budgetMs` and the caller's
   * signal. The deadline does not rely on fetch honouring the signal: a fetch that ignores it still
   * ends the attempt on time.
   */
  async #send(
    request: Exchange,
    options: RequestOptions | undefined,
    budgetMs: number,
    errors: { timedOut: () => Error; aborted: () => Error; broken: (cause: unknown) => Error },
  ): Promise<Response> {
    const signal = options?.signal;
    const controller = new AbortController();
    let stop!: (why: Error) => void;
    const stopped = new Promise<never>((_, reject) => {
      stop = (why) => {
        reject(why);
        controller.abort(why);
      };
    });
    const timer = setTimeout(() => stop(errors.timedOut()), budgetMs);
    const onAbort = () => stop(errors.aborted());
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const { url, init } = this.#fetchArgs(request, options, controller.signal);
      let answer: unknown;
      let pending: Promise<unknown> | undefined;
      try {
        pending = Promise.resolve(this.#config.fetch(url, init));
        answer = await Promise.race([pending, stopped]);
      } catch (error) {
        // A fetch that ignores the signal may still answer after the attempt ended: its body is
        // cancelled then, or its open connection would keep the process alive.
        pending?.then(
          (late) => {
            if (isResponse(late)) late.body?.cancel().catch(() => {});
          },
          () => {},
        );
        if (isPartnerError(error)) throw error;
        if (signal?.aborted) throw errors.aborted();
        // undici wraps network failures as `TypeError: fetch failed` with the cause that says why.
        throw errors.broken(error instanceof TypeError && error.cause !== undefined ? error.cause : error);
      }
      if (!isResponse(answer))
        throw errors.broken(new TypeError('fetch resolved to something that is not a Response'));
      return answer;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
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

  /** The time one attempt of a call with these options has: its own `timeoutMs` or the client's. */
  attemptTimeoutMs(options: RequestOptions | undefined): number {
    return options?.timeoutMs ?? this.#config.timeoutMs;
  }

  /**
   * A call to a data endpoint: retries, a parsed `data`, typed errors. `hook` decorates the call
   * and each of its attempts (the bearer token and its 401 replay come from auth/ this way); the
   * transport itself knows no credentials.
   */
  async request<T>(spec: DataRequest<T>, options: RequestOptions | undefined, hook: RequestHook): Promise<T> {
    const label = spec.label ?? spec.path;
    const retryable = spec.retryable ?? true;
    const own: HeaderValues =
      spec.body === undefined
        ? { accept: 'application/json' }
        : { accept: 'application/json', 'content-type': 'application/json' };
    const request: Exchange = {
      method: spec.method,
      path: spec.path,
      ...(spec.searchParams ? { searchParams: spec.searchParams } : {}),
      // The caller's headers were checked not to name the SDK's own, which come last regardless.
      headers: options?.headers ? { ...options.headers, ...own } : own,
      ...(spec.body === undefined ? {} : { body: spec.body }),
      onSent: spec.onSent,
    };
    let lastAttempt = 0;
    const send: Send = (sent, startedAt) =>
      this.exchange(sent, ++lastAttempt, options, label, performance.now() - startedAt);
    const settle: Settle<T> = (answer) => this.#settle(spec, label, answer);
    const call = (this.#config.wrapHook?.(hook) ?? hook).open({
      method: spec.method,
      label,
      retryable,
      options,
    });
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
  #settle<T>(spec: DataRequest<T>, label: string, answer: Answer): T {
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

  #parse<T>(spec: DataRequest<T>, label: string, response: RawResponse): T {
    const json = parseJson(response.text);
    if (!json.ok) {
      throw new ResponseValidationError({
        method: spec.method,
        path: label,
        status: response.status,
        issues: [{ path: '', message: 'the body is not JSON' }],
      });
    }
    const result = spec.schema.safeParse(json.value);
    if (!result.success) {
      throw new ResponseValidationError({
        method: spec.method,
        path: label,
        status: response.status,
        issues: toIssues(result.error),
      });
    }
    return result.data;
  }
}
