/**
 * ky, the SDK's HTTP transport: one instance per client (prefix, default headers with the SDK's
 * User-Agent, `throwHttpErrors: false`, no retry of its own, no timeout of its own, redirects
 * refused, no hook) and the fetch adapter it calls. ky 2 always builds a global `Request`,
 * which undici's own fetch (the usual way to use a proxy dispatcher) cannot read: the adapter
 * hands the caller's fetch a URL string and a plain init instead.
 */

import type { KyInstance } from 'ky';
import type { Deadline } from '../core/time.js';
import { isPartnerError } from '../errors/base.js';
import type { FetchLike } from './types.js';

/** Loaded on the first request, not at import: a client that is made and never used costs nothing. */
let loading: Promise<typeof import('ky')> | undefined;

function loadKy(): Promise<typeof import('ky')> {
  loading ??= import('ky');
  return loading;
}

/**
 * The option that carries the call (its current attempt) to the adapter. ky hands fetch every
 * option it does not know (the way a `dispatcher` reaches it), so one adapter serves every call
 * and a call brings no function of its own.
 */
export const ATTEMPT = 'partnerAttempt';

/**
 * One client's ky instance, made on its first request. Its default headers are the partner's
 * `defaultHeaders` over the SDK's User-Agent; a call's headers (its bearer token among them) go
 * over those, and a call's `undefined` takes a default out. It has no hook: each hook run would
 * make ky build a frozen copy of the request's options, held while the call is in flight.
 */
export class KyClient {
  #ky: KyInstance | undefined;
  readonly #prefix: string;
  readonly #headers: Readonly<Record<string, string>>;

  /** `headers`' names are lowercased, so the partner's `user-agent` replaces the SDK's. */
  constructor(prefix: string, headers: Readonly<Record<string, string>>, userAgent: string) {
    this.#prefix = prefix;
    this.#headers = { 'user-agent': userAgent, ...headers };
  }

  /** The instance, once loaded; `undefined` before the first request. */
  get ready(): KyInstance | undefined {
    return this.#ky;
  }

  async load(): Promise<KyInstance> {
    const { default: ky } = await loadKy();
    this.#ky ??= ky.create({
      prefix: this.#prefix,
      headers: this.#headers,
      throwHttpErrors: false,
      // The retry layer is p-retry's, under the SDK's rules; the attempt's time is a `Deadline`.
      retry: 0,
      timeout: false,
      // A redirect is answered as an error: following it would carry the bearer token, or on a 307
      // to the token endpoint the client secret in the body, to wherever the Location points.
      redirect: 'manual',
      fetch: adapter as typeof globalThis.fetch,
    });
    return this.#ky;
  }
}

/** Duck-typed, so that a fetch from another realm or package (undici's own) still fits. */
export function isResponse(value: unknown): value is Response {
  if (typeof value !== 'object' || value === null) return false;
  const response = value as Partial<Response>;
  return (
    typeof response.status === 'number' &&
    typeof (response.headers as Partial<Headers> | undefined)?.get === 'function' &&
    (response.body === null ||
      typeof (response.body as Partial<ReadableStream> | undefined)?.getReader === 'function')
  );
}

/** What the adapter needs of a call's attempt besides the `Request` ky built (a `Call` is one). */
export interface AdapterInput {
  fetch: FetchLike;
  /** The client's `fetchOptions` under the call's: merged under the SDK's own fields. */
  fetchOptions: Readonly<Record<string, unknown>>;
  /** The serialised body: read from the `Request` it would be a stream. */
  body: string | undefined;
  deadline: Deadline;
  /** The error of a connection that broke, from what fetch threw. */
  broken(cause: unknown): Error;
}

/** The runtime's own fetch, as the SDK's module found it. */
const runtimeFetch: typeof globalThis.fetch | undefined = globalThis.fetch;

/**
 * Whether the fetch found at load reads the `Request` ky built. One put in the runtime's place
 * before the SDK was loaded (undici's own, a polyfill) may not: it reads it as a URL.
 */
let runtimeReadsRequests = true;

/**
 * When `error` says the fetch could not read the `Request` it was handed (it parsed
 * `[object Request]` as a URL), nothing went out: from then on that fetch gets URL strings, and
 * the answer is true (the caller sends the attempt again).
 */
export function fallBackToUrls(error: unknown): boolean {
  let cause = error;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++, cause = cause.cause) {
    if ((cause as { input?: unknown }).input === '[object Request]') {
      runtimeReadsRequests = false;
      return true;
    }
  }
  return false;
}

/**
 * The client's fetch when the partner gives none: the global one, looked up at each call (a test
 * may replace it after the client is made).
 */
export const globalFetch: FetchLike = (url, init) => globalThis.fetch(url, init);

/** No fetch options: one object for every attempt without any. */
export const NO_FETCH_OPTIONS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * The runtime's fetch takes the `Request` ky built as it is (URL, method, headers, body, redirect)
 * and ends with the signal, as the Fetch standard says: no second parse of the URL, no copy of
 * the headers, no race. Each call in flight holds that much less. The caller's `fetchOptions` go
 * under the request's own fields.
 */
function runtimeAdapter(
  fetch: typeof globalThis.fetch,
  request: Request,
  attempt: AdapterInput,
): Promise<Response> {
  const signal = attempt.deadline.signal;
  const { fetchOptions } = attempt;
  if (fetchOptions === NO_FETCH_OPTIONS) return fetch(request, { signal });
  const init: Record<string, unknown> = {
    ...fetchOptions,
    method: request.method,
    headers: request.headers,
    redirect: 'manual',
    signal,
  };
  // The request's own body goes out: a `body` among the fetch options would replace it.
  if ('body' in init) delete init.body;
  return fetch(request, init);
}

/**
 * ky's `fetch`: with the runtime's own fetch, the `Request` as ky built it; with any other (the
 * partner's, undici's own, a test's), that `Request` turned back into a URL string and a plain init,
 * within the attempt's deadline. That deadline does not rely on such a fetch honouring the signal:
 * one that ignores it still ends the attempt on time.
 */
function adapter(request: Request, options: { [ATTEMPT]: AdapterInput }): Promise<Response> {
  const attempt = options[ATTEMPT];
  const fetch = globalThis.fetch;
  if (attempt.fetch === globalFetch && fetch === runtimeFetch && runtimeReadsRequests)
    return runtimeAdapter(fetch, request, attempt);
  const { body, deadline } = attempt;
  const init: Record<string, unknown> = {
    ...attempt.fetchOptions,
    method: request.method,
    headers: Object.fromEntries(request.headers),
    redirect: 'manual',
    signal: deadline.signal,
  };
  // A `body` from fetchOptions would go out with a GET, or in place of a POST's empty one.
  if (body !== undefined) init.body = body;
  else if ('body' in init) delete init.body;
  let pending: Promise<unknown>;
  try {
    pending = Promise.resolve(attempt.fetch(request.url, init));
  } catch (error) {
    return Promise.reject(failure(attempt, error, undefined));
  }
  return deadline.race(pending).then(
    (answer) => {
      if (!isResponse(answer))
        throw attempt.broken(new TypeError('fetch resolved to something that is not a Response'));
      return answer;
    },
    (error: unknown) => {
      throw failure(attempt, error, pending);
    },
  );
}

/** What an attempt whose fetch threw (or lost to its deadline) ends with. */
function failure(attempt: AdapterInput, error: unknown, pending: Promise<unknown> | undefined): unknown {
  // A fetch that ignores the signal may still answer after the attempt ended: its body is
  // cancelled then, or its open connection would keep the process alive.
  pending?.then(
    (late) => {
      if (isResponse(late)) late.body?.cancel().catch(() => {});
    },
    () => {},
  );
  return fetchFailure(attempt, error);
}

/**
 * What a rejected fetch becomes: the SDK's errors as they are, the deadline's, or a broken
 * connection with the cause that says why (undici's `TypeError: fetch failed` and ky's
 * `NetworkError` around it are wrappings).
 */
export function fetchFailure(attempt: AdapterInput, error: unknown): unknown {
  if (isPartnerError(error)) return error;
  if (attempt.deadline.over) return attempt.deadline.reason;
  let cause = error;
  if (
    cause instanceof Error &&
    cause.name === 'NetworkError' &&
    'request' in cause &&
    cause.cause !== undefined
  )
    cause = cause.cause;
  return attempt.broken(cause instanceof TypeError && cause.cause !== undefined ? cause.cause : cause);
}
