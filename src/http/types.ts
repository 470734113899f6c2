import type { ResponseSink } from '../core/api-promise.js';
import type { RequestOptions } from '../core/request-options.js';
import type { ParseResult } from '../core/standard-schema.js';
import type { Deadline } from '../core/time.js';
import type { Issue } from '../schemas/issues.js';

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
  /**
   * The bearer token, which the transport sends as the `authorization` header. The hook sets it on
   * the call's request before each attempt: the request is one object for the whole call.
   */
  token?: string | undefined;
  body?: string;
  /** Called as the request is handed to fetch: from then on the service may act on it. */
  onSent?: (() => void) | undefined;
}

/**
 * The one description of a data call, from an `ENDPOINTS` row or `client.request` down to ky: what
 * to send, how to read the answer, how it may be repeated, and where its answers are reported.
 */
export interface DataRequest<T> {
  /** The ids the call names (`userId`, `routeId`, …), for a 404's error to name them. */
  ids?: Readonly<Record<string, string>>;
  method: Exchange['method'];
  /**
   * The path template below `/api/v1/s2s` (`/bridge/transfers/{transferId}`): events, spans and
   * errors show it as is; the transport fills each `{name}` from `params`, once.
   */
  path: string;
  /** Values of the path's placeholders, checked by the caller. */
  params?: Readonly<Record<string, string>>;
  searchParams?: URLSearchParams;
  /** An already serialised JSON body. */
  body?: string;
  /** Scopes the endpoint needs, named in a 403's message. */
  scopes: readonly string[];
  schema: Parser<T>;
  /**
   * The parsed answer held against what was asked (the ids the call named): an issue for each field
   * that is not the one asked for, whose path is the field. Such an answer is refused as a
   * `ResponseValidationError` whose `mismatched` names those fields.
   */
  // A method, so that a DataRequest<T> is read as a DataRequest<unknown> by the layers that pass it on.
  check?(answer: T): readonly Issue[] | undefined;
  /** False for a submit: it is never sent twice, neither by the retry layer nor after a 401. */
  retryable?: boolean;
  /**
   * False for a request that may act twice if repeated (a POST of `client.request` by default): it
   * is retried only after a 429 or a connection that never reached the service.
   */
  idempotent?: boolean;
  /** Called as each attempt is handed to fetch, so that a caller knows the request went out. */
  onSent?: () => void;
  /** Told of each answer, for `.withResponse()`: the call's, never part of its options. */
  sink?: ResponseSink | undefined;
}

const PLACEHOLDER = /\{(\w+)\}/g;

/** `template` with each `{name}` replaced by its encoded value from `params`. */
export function fillPath(template: string, params: Readonly<Record<string, string>> | undefined): string {
  return params
    ? template.replace(PLACEHOLDER, (_, name: string) => encodeURIComponent(params[name] as string))
    : template;
}

/**
 * Any fetch-compatible function: the global one, undici's own (with a `dispatcher` in
 * `fetchOptions`), a proxy-aware one, or a test double. The SDK calls it with a URL string and an
 * init object, never a `Request`, so that a fetch from another package or realm can read it; its
 * answer is duck-typed.
 */
// `any`: undici's own fetch types its init with undici's types, which are not the global ones.
export type FetchLike = (url: string, init: any) => Promise<unknown>;

/**
 * Anything with zod's `safeParse` shape: a zod schema, or a hand-written reader of a body. Its
 * answer may be a promise (a Standard Schema whose check is async).
 */
export interface Parser<T> {
  safeParse(value: unknown): ParseResult<T> | Promise<ParseResult<T>>;
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Sends one attempt's request within the attempt's deadline (the wait for a token came out of it). */
export type Send = (request: Exchange, deadline: Deadline) => Promise<RawResponse>;

/** An answer a hook settled on, with what the error of a failed status names. */
export interface Answer {
  /** The request as sent (its `token` the one it carried): what it carried is masked in the error. */
  request: Exchange;
  response: RawResponse;
  /** Scopes the request's credential holds, named in a 403's message. */
  grantedScopes?: readonly string[] | undefined;
  /** A 401 here means the credential is stopped, not one revoked token. */
  credentialStopped?: boolean;
}

/**
 * One data call as its hook sees it: how to start an attempt's time, send the attempt's request
 * and settle an answer. One object per call, its methods on its prototype: a call in flight holds
 * no function per step.
 */
export interface CallContext<T> {
  /** The call's description; its path is the template. */
  readonly spec: DataRequest<T>;
  readonly options: RequestOptions | undefined;
  /**
   * Starts one attempt's time (`timeoutMs` and the caller's signal): the wait for a token and the
   * request, body included. The hook clears it once the attempt is over.
   */
  deadline(): Deadline;
  /** Sends one attempt's request within `deadline`. */
  send(request: Exchange, deadline: Deadline): Promise<RawResponse>;
  /** Makes the call's result from an answer: the parsed data, or throws the typed error of its status. */
  settle(answer: Answer): T | Promise<T>;
}

/**
 * Decorates data calls, in the shape of Octokit's auth hook (`hook(request, options)`): the
 * transport hands each attempt the call (which sends and settles undecorated), and the hook may add
 * a token, wait for what it needs within the attempt's deadline, send again, and see the error
 * before it is thrown. The retry layer stays the transport's, around each decorated attempt.
 */
export interface RequestHook {
  /**
   * One data call starts: its description (its path is the template) and the caller's options.
   * What it returns decorates each attempt until `end`.
   */
  open(call: DataRequest<unknown>, options: RequestOptions | undefined): CallHook;
}

/** One call's decoration, from `RequestHook.open`. */
export interface CallHook {
  /** One attempt: `request` is the call's, the same object at each attempt. */
  attempt<T>(call: CallContext<T>, request: Exchange): Promise<T>;
  /** The call is over: `failure` holds what it threw, when it failed. */
  end(failure?: { error: unknown }): void;
}

/** What resources call: a data request in, its parsed `data` out (the transport decorated by auth). */
export interface DataTransport {
  request<T>(spec: DataRequest<T>, options?: RequestOptions): Promise<T>;
}
