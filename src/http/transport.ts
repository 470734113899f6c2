import type { ClientEvents } from '../core/events.js';
import type { PartnerListeners } from '../core/isolate.js';
import type { RequestOptions } from '../core/request-options.js';
import { type Redact, redactor } from '../errors/redact.js';
import { KyClient } from './ky.js';
import type { RetryPolicy } from './retry.js';
import type { Tracing } from './tracing.js';
import type { FetchLike, HeaderValues } from './types.js';

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
  events: PartnerListeners<ClientEvents>;
  timeoutMs: number;
  /** The longest answer read; a longer one is cancelled unread. */
  maxResponseBytes: number;
  retry: RetryPolicy;
  /** The client's secrets in every form a request carries them (raw, form-encoded, Basic). */
  secrets: readonly string[];
  /** The client's spans around each data call and each request it sends; absent, none. */
  tracing?: Tracing;
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

/** ky's headers of one request: its own (`null` as `undefined`, which takes a default out) and its token. */
function headersOf(headers: HeaderValues, token: string | undefined): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const name in headers) out[name] = headers[name] ?? undefined;
  if (token !== undefined) out.authorization = `Bearer ${token}`;
  return out;
}

/**
 * What the calls of one client share: its settings, its ky instance, and what masks its secrets.
 * Each call is a `Call` (call.ts) over it. Credentials are not its business: a hook puts the token
 * on the call, which goes out as the `authorization` header.
 */
export class Transport {
  readonly config: TransportConfig;
  readonly ky: KyClient;
  /** The client's secrets and the values of its default credential headers. */
  readonly #secrets: readonly string[];
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
    this.config = config;
    this.#secrets = [...config.secrets, ...credentialValues(config.defaultHeaders)];
    this.ky = new KyClient(config.prefix, config.defaultHeaders, config.userAgent);
  }

  /** The retry policy of a call: the client's, with the call's `maxRetries` and `maxRetryTimeMs`. */
  policy(options: RequestOptions | undefined): RetryPolicy {
    const { retry } = this.config;
    if (options?.maxRetries === undefined && options?.maxRetryTimeMs === undefined) return retry;
    return {
      ...retry,
      retries: options.maxRetries ?? retry.retries,
      maxRetryTimeMs: options.maxRetryTimeMs ?? retry.maxRetryTimeMs,
    };
  }

  /** An attempt's time: the call's `timeoutMs`, or the client's. */
  timeoutMs(options: RequestOptions | undefined): number {
    return options?.timeoutMs ?? this.config.timeoutMs;
  }

  /**
   * Masks what a request carries that is secret (the client secret in each form, the Basic
   * credential, the bearer token, the caller's credential headers) in anything a server sends
   * back: it may echo the request.
   */
  redaction(headers: HeaderValues, token: string | undefined): Redact {
    const authorization = headers.authorization;
    return redactor([
      ...this.#secrets,
      ...(authorization ? [authorization, authorization.replace(/^\S+\s+/, '')] : []),
      ...(token ? [`Bearer ${token}`, token] : []),
      ...credentialValues(headers),
    ]);
  }

  /** ky's headers of one request (see `#withToken`). */
  headers(headers: HeaderValues, token: string | undefined): Record<string, string | undefined> {
    if (!Object.isFrozen(headers)) return headersOf(headers, token);
    const made = this.#withToken.get(headers);
    if (made && made.token === token) return made.headers;
    const out = Object.freeze(headersOf(headers, token));
    this.#withToken.set(headers, { token, headers: out });
    return out;
  }
}
