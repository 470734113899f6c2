/**
 * ky, the SDK's HTTP transport: one instance per client (prefix, default headers, the bearer token
 * in its `beforeRequest` hook, `throwHttpErrors: false`, no retry of its own, no timeout of its
 * own, redirects refused) and the fetch adapter it calls. ky 2 always builds a global `Request`,
 * which undici's own fetch (the usual way to use a proxy dispatcher) cannot read: the adapter
 * hands the caller's fetch a URL string and a plain init instead.
 */

import type { KyInstance } from 'ky';
import { isPartnerError } from '../errors/base.js';
import type { Deadline } from './abort.js';
import type { FetchLike } from './types.js';

/** Loaded on the first request, not at import: a client that is made and never used costs nothing. */
let loading: Promise<typeof import('ky')> | undefined;

function loadKy(): Promise<typeof import('ky')> {
  loading ??= import('ky');
  return loading;
}

/** The ky context of one request: what its hook puts on it. */
interface Context {
  token?: string | undefined;
  /** False when the call took the User-Agent out. */
  userAgent?: boolean;
}

/**
 * One client's ky instance, made on its first request. `authorization: Bearer …` comes from the
 * request's context in a `beforeRequest` hook, and so does the SDK's User-Agent.
 */
export class KyClient {
  #ky: KyInstance | undefined;
  readonly #prefix: string;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #userAgent: string;

  constructor(prefix: string, headers: Readonly<Record<string, string>>, userAgent: string) {
    this.#prefix = prefix;
    this.#headers = headers;
    this.#userAgent = userAgent;
  }

  /** The instance, once loaded; `undefined` before the first request. */
  get ready(): KyInstance | undefined {
    return this.#ky;
  }

  async load(): Promise<KyInstance> {
    const { default: ky } = await loadKy();
    const userAgent = this.#userAgent;
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
      hooks: {
        beforeRequest: [
          ({ request, options }) => {
            const context = options.context as Context;
            if (context.token !== undefined) request.headers.set('authorization', `Bearer ${context.token}`);
            // The partner's `defaultHeaders` may name their own.
            if (context.userAgent !== false && !request.headers.has('user-agent'))
              request.headers.set('user-agent', userAgent);
          },
        ],
      },
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

/** What the adapter of one attempt needs besides the `Request` ky built. */
export interface AdapterInput {
  fetch: FetchLike;
  /** The client's `fetchOptions` under the call's: merged under the SDK's own fields. */
  fetchOptions: Readonly<Record<string, unknown>>;
  /** The serialised body: read from the `Request` it would be a stream. */
  body: string | undefined;
  deadline: Deadline;
  /** The error of a connection that broke, from what fetch threw. */
  broken: (cause: unknown) => Error;
}

/**
 * ky's `fetch`: turns the `Request` ky built (its URL with prefix and query, its headers after the
 * hooks) back into a URL string and a plain init for the caller's fetch, within the attempt's
 * deadline. The deadline does not rely on fetch honouring the signal: a fetch that ignores it
 * still ends the attempt on time.
 */
export function fetchAdapter({ fetch, fetchOptions, body, deadline, broken }: AdapterInput) {
  return async (request: Request): Promise<Response> => {
    const init: Record<string, unknown> = {
      ...fetchOptions,
      method: request.method,
      headers: Object.fromEntries(request.headers),
      redirect: 'manual',
      signal: deadline.signal,
    };
    // A `body` from fetchOptions would go out with a GET, or in place of a POST's empty one.
    if (body === undefined) delete init.body;
    else init.body = body;
    let answer: unknown;
    let pending: Promise<unknown> | undefined;
    try {
      pending = Promise.resolve(fetch(request.url, init));
      answer = await deadline.race(pending);
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
      if (deadline.over) throw deadline.reason;
      // undici wraps network failures as `TypeError: fetch failed` with the cause that says why.
      throw broken(error instanceof TypeError && error.cause !== undefined ? error.cause : error);
    }
    if (!isResponse(answer))
      throw broken(new TypeError('fetch resolved to something that is not a Response'));
    return answer;
  };
}
