import { EventEmitter } from 'eventemitter3';
import ky from 'ky';
import { z } from 'zod';
import { fetchToken } from './auth/token-endpoint.js';
import { TokenProvider } from './auth/token-provider.js';
import { MemoryTokenStore, type TokenStore } from './auth/token-store.js';
import {
  byteCount,
  durationMs,
  maxRetries,
  parseArgs,
  parseOptions,
  requestOptionsSchema,
  withMethods,
} from './core/args.js';
import type { ClientEvents } from './core/events.js';
import type { RequestOptions } from './core/request-options.js';
import type { RetryOptions } from './http/retry.js';
import { Transport } from './http/transport.js';
import { Bridge } from './resources/bridge.js';
import { type Me, meSchemas, type Scope } from './schemas/auth.js';

/** The path prefix of version 1 of the interface; the SDK appends it to `baseUrl`. */
export const API_PREFIX = '/api/v1/s2s';
/** Far above any answer of the specification (a page of 100 transfers is about 150 KB). */
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** Any fetch-compatible function: the global one, undici's, a proxy-aware one, or a test double. */
export type FetchLike = (input: Request | URL | string, init?: RequestInit) => Promise<Response>;

/** Options of `new PartnerClient(options)`; see each field for its default. */
export interface PartnerClientOptions {
  /**
   * Where the service runs, without the `/api/v1/s2s` prefix (the SDK appends it).
   * @example 'https://partner.example.com'
   */
  baseUrl: string;
  /** The credential's client id. */
  clientId: string;
  /** The credential's secret. Never shown in errors, events, logs or `util.inspect`. */
  clientSecret: string;
  /**
   * Ask for a narrower token: scopes as an array or space-delimited. Omitted: everything the
   * credential holds. A scope the credential lacks is an `InvalidScopeError`, never a silent downgrade.
   * @example ['bridge:read', 'transactions:write']
   */
  scope?: readonly Scope[] | string;
  /**
   * How the credential reaches the token endpoint: in the form body, or as HTTP Basic
   * (RFC 6749 2.3.1: id and secret form-encoded, then base64).
   * @default 'body'
   */
  clientAuth?: 'body' | 'basic';
  /**
   * Time allowed for one attempt, from sending to the last byte of the answer.
   * @default 30000
   */
  timeoutMs?: number;
  /**
   * Retries after a connection error, a timeout, 429, 502, 503 or 504. A submit is never retried.
   * @default 2
   */
  maxRetries?: number;
  /**
   * The longest answer the client reads, in bytes. A longer success is a `ResponseValidationError`
   * and is cancelled as soon as it passes the limit, so that a broken or hostile server cannot fill
   * the heap before the timeout.
   * @default 16777216 (16 MiB)
   * @example new PartnerClient({ ...credentials, maxResponseBytes: 4 * 1024 * 1024 })
   */
  maxResponseBytes?: number;
  /** Backoff and time bounds of retries. */
  retry?: RetryOptions;
  /**
   * The fetch to use: a test double, `createPartnerSimulator().fetch`, or one that goes through a proxy.
   * @default globalThis.fetch
   */
  fetch?: FetchLike;
  /**
   * Where tokens are kept; share one between processes so they share a token.
   * @default a store in this process's memory
   */
  tokenStore?: TokenStore;
  /**
   * Reject answers with fields, states or scopes the SDK does not know. For tests; in production
   * the SDK keeps unknown fields and lets new enum values through.
   * @default false
   */
  strict?: boolean;
}

const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const secret = z.string({ error: 'must be a string' }).min(1, 'must not be empty');

const optionsSchema = z.strictObject({
  baseUrl: z.string({ error: 'must be a URL string' }).refine((value) => {
    try {
      const url = new URL(value);
      return (
        (url.protocol === 'https:' || url.protocol === 'http:') && !url.search && !url.hash && !url.username
      );
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without query, fragment or credentials'),
  clientId: secret,
  clientSecret: secret,
  scope: z
    .union([z.array(z.string()), z.string()], {
      error: 'must be an array of scopes or a space-delimited string',
    })
    .transform((value) => (typeof value === 'string' ? value.split(' ').filter(Boolean) : value))
    .refine(
      (scopes) => scopes.every((scope) => SCOPE_TOKEN.test(scope)),
      'each scope must be a non-empty token without spaces or quotes',
    )
    .optional(),
  clientAuth: z.enum(['body', 'basic'], { error: "must be 'body' or 'basic'" }).optional(),
  timeoutMs: durationMs.optional(),
  maxRetries: maxRetries.optional(),
  maxResponseBytes: byteCount.optional(),
  retry: z
    .strictObject({
      minDelayMs: z.number().nonnegative().finite().optional(),
      maxDelayMs: z.number().nonnegative().finite().optional(),
      maxRetryTimeMs: durationMs.optional(),
      maxRetryAfterMs: z.number().nonnegative().finite().optional(),
    })
    .optional(),
  fetch: z
    .custom<FetchLike>((value) => typeof value === 'function', 'must be a fetch-compatible function')
    .optional(),
  tokenStore: withMethods<TokenStore>(
    ['get', 'set', 'delete'],
    'must have get, set and delete methods',
  ).optional(),
  strict: z.boolean().optional(),
});

/**
 * The client of the Partner Service Interface. It fetches and refreshes tokens itself, retries
 * what is safe to retry, and turns every failure into a typed error.
 *
 * @example
 * const client = new PartnerClient({
 *   baseUrl: 'https://partner.example.com',
 *   clientId: process.env.PARTNER_CLIENT_ID!,
 *   clientSecret: process.env.PARTNER_CLIENT_SECRET!,
 * });
 * const routes = await client.bridge.routes();
 */
export class PartnerClient {
  /** The base URL given, without a trailing slash. */
  readonly baseUrl: string;
  /** The bridge: routes, quote, fee estimate, construct, send, transfers. */
  readonly bridge: Bridge;
  readonly #clientId: string;
  readonly #events = new EventEmitter<ClientEvents>();
  readonly #tokens: TokenProvider;
  readonly #transport: Transport;
  readonly #strict: boolean;

  constructor(options: PartnerClientOptions) {
    const config = parseArgs(optionsSchema, options, 'PartnerClient options');
    this.baseUrl = config.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1\/s2s$/, '');
    this.#clientId = config.clientId;
    this.#strict = config.strict ?? false;
    const scope = config.scope && config.scope.length > 0 ? config.scope.join(' ') : undefined;
    const http = ky.create({
      prefix: `${this.baseUrl}${API_PREFIX}`,
      retry: 0,
      timeout: false,
      throwHttpErrors: false,
      // A redirect is answered as an error: following it would carry the bearer token, or on a 307
      // to the token endpoint the client secret in the body, to wherever the Location points.
      redirect: 'manual',
      ...(config.fetch ? { fetch: config.fetch as typeof fetch } : {}),
    });
    const credentials = {
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      clientAuth: config.clientAuth ?? 'body',
      scope,
    } as const;
    this.#tokens = new TokenProvider({
      fetchToken: () => fetchToken(this.#transport, credentials),
      store: config.tokenStore ?? new MemoryTokenStore(),
      key: `partner-s2s:${this.baseUrl}:${config.clientId}:${scope ?? '*'}`,
      emit: (event) => this.#events.emit('token', event),
    });
    this.#transport = new Transport({
      ky: http,
      events: this.#events,
      tokens: this.#tokens,
      timeoutMs: config.timeoutMs ?? 30_000,
      maxResponseBytes: config.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      retry: {
        retries: config.maxRetries ?? 2,
        minDelayMs: config.retry?.minDelayMs ?? 500,
        maxDelayMs: config.retry?.maxDelayMs ?? 8_000,
        maxRetryTimeMs: config.retry?.maxRetryTimeMs ?? 60_000,
        maxRetryAfterMs: config.retry?.maxRetryAfterMs ?? 60_000,
      },
    });
    this.bridge = new Bridge(this.#transport, this.#strict);
  }

  /**
   * The token's permissions as the service echoes them (individual scopes, never wildcards).
   *
   * @example
   * const { scopes } = await client.me();
   */
  async me(options?: RequestOptions): Promise<Me> {
    options = parseOptions(requestOptionsSchema, options, 'me');
    const { data } = await this.#transport.request(
      { method: 'GET', path: '/me', scopes: [], schema: meSchemas(this.#strict) },
      options,
    );
    return data;
  }

  /**
   * The scopes granted to the current token, fetching a token first if none is cached.
   *
   * @example
   * if (!(await client.getScopes()).includes('transactions:write')) throw new Error('read-only credential');
   */
  async getScopes(): Promise<Scope[]> {
    const { token } = await this.#tokens.get();
    return [...token.scopes];
  }

  /**
   * Listens to `request`, `response`, `retry` and `token` events (method, path, attempt, status,
   * elapsed time; never a secret or a token).
   *
   * @example
   * client.on('retry', (e) => log.warn(`retrying ${e.method} ${e.path} in ${e.delayMs} ms (${e.reason})`));
   */
  on<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    this.#events.on(event, listener as never);
    return this;
  }

  /** Like `on`, for one event only. */
  once<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    this.#events.once(event, listener as never);
    return this;
  }

  /** Removes a listener added with `on` or `once`. */
  off<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    this.#events.off(event, listener as never);
    return this;
  }

  /** What `JSON.stringify(client)` shows: no secret, no token. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, clientId: this.#clientId, strict: this.#strict };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PartnerClient ${JSON.stringify(this.toJSON())}`;
  }
}
