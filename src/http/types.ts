import type { ResponseSink } from '../core/api-promise.js';
import type { RequestOptions } from '../core/request-options.js';
import type { ParseResult } from '../core/standard-schema.js';
import type { Issue } from '../schemas/issues.js';

/** An HTTP answer, read in full within the attempt's time. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** Header values; `null` takes out a default header for one call. */
export type HeaderValues = Record<string, string | null | undefined>;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * The one description of a call, from an `ENDPOINTS` row, `client.request` or the token endpoint
 * down to ky: what to send, how to read the answer, how it may be repeated, and where its answers
 * are reported. `T` is what the call resolves with.
 */
export interface DataRequest<T> {
  /** The ids the call names (`userId`, `routeId`, …), for a 404's error to name them. */
  ids?: Readonly<Record<string, string>>;
  method: Method;
  /**
   * The path template below `/api/v1/s2s` (`/bridge/transfers/{transferId}`): events, spans and
   * errors show it as is; the call fills each `{name}` from `params`, once.
   */
  path: string;
  /** Values of the path's placeholders, checked by the caller. */
  params?: Readonly<Record<string, string>>;
  searchParams?: URLSearchParams;
  /** An already serialised body. */
  body?: string;
  /** The SDK's own headers of this request, in place of the JSON `accept` and `content-type`. */
  headers?: HeaderValues;
  /** Scopes the endpoint needs, named in a 403's message. */
  scopes: readonly string[];
  /** Reads the answer's JSON body (`{ data }` with `unwrap`); without one the body is the result as it is. */
  schema?: Parser<T> | Parser<{ data: T }>;
  /** The answer is `{ data }`: the call resolves with its `data`, taken off once it was read and checked. */
  unwrap?: boolean;
  /**
   * What the schema read, held against what was asked (the ids the call named): an issue for each
   * field that is not the one asked for, whose path is the field. Such an answer is refused as a
   * `ResponseValidationError` whose `mismatched` names those fields.
   */
  check?(answer: unknown): readonly Issue[] | undefined;
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

/** What resources call: a request in, its result out (the transport with the bearer token). */
export interface DataTransport {
  request<T>(spec: DataRequest<T>, options?: RequestOptions): Promise<T>;
}
