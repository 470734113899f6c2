import { createHash } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import ky from 'ky';
import { z } from 'zod';
import { BearerAuth } from './auth/bearer.js';
import { basicAuthorization, fetchToken } from './auth/token-endpoint.js';
import { TokenProvider } from './auth/token-provider.js';
import { MemoryTokenStore, type TokenStore } from './auth/token-store.js';
import {
  byteCount,
  checkListener,
  durationMs,
  maxRetries,
  parseArgs,
  parseOptions,
  requestOptionsSchema,
  withMethods,
} from './core/args.js';
import { DEFAULTS } from './core/defaults.js';
import { CLIENT_EVENTS, type ClientEvents } from './core/events.js';
import type { RequestOptions } from './core/request-options.js';
import { Bridge } from './flows/bridge.js';
import type { RetryOptions } from './http/retry.js';
import { type TracerProviderLike, Tracing, type TracingOption } from './http/tracing.js';
import { Transport } from './http/transport.js';
import { type Api, callEndpoint, ENDPOINTS } from './resources/endpoints.js';
import type { Me, Scope } from './schemas/auth.js';

/** The path prefix of version 1 of the interface; the SDK appends it to `baseUrl`. */
export const API_PREFIX = '/api/v1/s2s';

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
  /**
   * The credential's secret. Never shown in errors, events, logs or `util.inspect`: whatever a
   * server sends back is cleared of it (and of the Basic credential and bearer token) first.
   */
  clientSecret: string;
  /**
   * Allow plain `http://` to a host that is not loopback. Off, such a `baseUrl` is an
   * `ArgumentError`: over plain http the secret and every bearer token cross the network in clear
   * text. `localhost`, `*.localhost`, `127.x.x.x` and `[::1]` are always allowed.
   * @default DEFAULTS.allowInsecureHttp (false)
   * @example new PartnerClient({ baseUrl: 'http://partner.internal:8080', allowInsecureHttp: true, clientId, clientSecret })
   */
  allowInsecureHttp?: boolean;
  /**
   * Ask for a narrower token: scopes as an array or space-delimited. Omitted: everything the
   * credential holds. A scope the credential lacks is an `InvalidScopeError`, never a silent downgrade.
   * @example ['bridge:read', 'transactions:write']
   */
  scope?: readonly Scope[] | string;
  /**
   * How the credential reaches the token endpoint: in the form body, or as HTTP Basic
   * (RFC 6749 2.3.1: id and secret form-encoded, then base64).
   * @default DEFAULTS.clientAuth ('body')
   */
  clientAuth?: 'body' | 'basic';
  /**
   * Time allowed for one attempt: the wait for a token, when none is cached, plus the request from
   * sending to the last byte of the answer. A token fetch shared by several calls is bounded by it.
   * @default DEFAULTS.timeoutMs (30000)
   */
  timeoutMs?: number;
  /**
   * Retries after a connection error, a timeout, 429 or any 5xx. A submit is never retried.
   * @default DEFAULTS.maxRetries (2)
   */
  maxRetries?: number;
  /**
   * The longest answer the client reads, in bytes. A longer success is a `ResponseValidationError`
   * and is cancelled as soon as it passes the limit, so that a broken or hostile server cannot fill
   * the heap before the timeout.
   * @default DEFAULTS.maxResponseBytes (16777216, 16 MiB)
   * @example new PartnerClient({ ...credentials, maxResponseBytes: 4 * 1024 * 1024 })
   */
  maxResponseBytes?: number;
  /**
   * Backoff and time bounds of retries; each field left out keeps its default.
   * @default DEFAULTS.retry
   */
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
   * @default DEFAULTS.strict (false)
   */
  strict?: boolean;
  /**
   * OpenTelemetry spans, when `@opentelemetry/api` is installed and a tracer provider is registered
   * with it: one per call, named by method and route template (`GET /bridge/transfers/{transferId}`),
   * a CLIENT span per request sent with the HTTP semantic-convention attributes and the answer's
   * `x-request-id`, and `bridge.execute` with `partner.token`, `partner.verify` and `partner.sign`
   * under it. Never a header but the request id, a body, a token or the secret. `false` never loads
   * the package; `{ tracerProvider }` sends this client's spans to a provider of its own instead of
   * the global one. Spans nest across `await` only with a context manager registered
   * (`AsyncLocalStorageContextManager`, which the Node SDK registers).
   * @default true (on when a tracer provider is registered; nothing is loaded otherwise)
   * @example new PartnerClient({ ...credentials, tracing: false })
   * @example new PartnerClient({ ...credentials, tracing: { tracerProvider: provider } })
   */
  tracing?: TracingOption;
}

const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const secret = z.string({ error: 'must be a string' }).min(1, 'must not be empty');

/** Hosts whose traffic never leaves the machine (RFC 6761 names `localhost` and `.localhost`). */
function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

/**
 * Checks the base URL; the messages never quote it, since a refused one may hold a password.
 * A bare `?` or `#` leaves `search` and `hash` empty, so the raw text is checked for them too.
 */
function baseUrlProblem(value: string, allowInsecureHttp: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.username || url.password)
    return 'must not hold a user name or password: pass clientId and clientSecret';
  if (value.includes('?') || value.includes('#')) return 'must not have a query or fragment';
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopback(url.hostname)) {
    return 'plain http to a host that is not loopback sends the secret and tokens in clear text: use https, or set allowInsecureHttp: true';
  }
  return undefined;
}

/** The base as the SDK uses it, rebuilt from the parsed URL: no trailing slash, no API prefix. */
function normalBaseUrl(value: string): string {
  const url = new URL(value);
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1\/s2s$/, '');
  return `${url.protocol}//${url.host}${path}`;
}

/** A store key that parts holding the separator cannot forge, and that differs per secret. */
function tokenStoreKey(baseUrl: string, clientId: string, scope: string | undefined, secret: string): string {
  const hash = (value: string) => createHash('sha256').update(value).digest('hex');
  const parts = hash(JSON.stringify([baseUrl, clientId, scope ?? null]));
  // Salted with the other parts, so the same secret gives unrelated fingerprints; never the secret.
  const fingerprint = hash(JSON.stringify(['secret', baseUrl, clientId, secret])).slice(0, 32);
  return `partner-s2s:v2:${parts}:${fingerprint}`;
}

const optionsSchema = z
  .strictObject({
    baseUrl: z.string({ error: 'must be a URL string' }),
    allowInsecureHttp: z.boolean({ error: 'must be true or false' }).optional(),
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
    tracing: z
      .union(
        [
          z.boolean(),
          z.strictObject({
            tracerProvider: withMethods<TracerProviderLike>(['getTracer'], 'must have a getTracer method'),
          }),
        ],
        { error: 'must be true, false or { tracerProvider }' },
      )
      .optional(),
  })
  .superRefine((value, ctx) => {
    const problem = baseUrlProblem(value.baseUrl, value.allowInsecureHttp === true);
    if (problem) ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: problem });
  });

/** The secret as a server may echo it: raw, form- and URI-encoded, and the Basic credential. */
function secretForms(clientId: string, clientSecret: string): string[] {
  const basic = basicAuthorization(clientId, clientSecret);
  return [
    clientSecret,
    new URLSearchParams({ v: clientSecret }).toString().slice(2),
    encodeURIComponent(clientSecret),
    basic,
    basic.slice('Basic '.length),
  ];
}

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
  readonly #auth: BearerAuth;
  readonly #api: Api;
  readonly #strict: boolean;

  constructor(options: PartnerClientOptions) {
    const config = parseArgs(optionsSchema, options, 'PartnerClient options');
    this.baseUrl = normalBaseUrl(config.baseUrl);
    this.#clientId = config.clientId;
    this.#strict = config.strict ?? DEFAULTS.strict;
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
      clientAuth: config.clientAuth ?? DEFAULTS.clientAuth,
      scope,
    } as const;
    const tracing = new Tracing(config.tracing ?? true, this.baseUrl);
    const transport = new Transport({
      ky: http,
      events: this.#events,
      timeoutMs: config.timeoutMs ?? DEFAULTS.timeoutMs,
      maxResponseBytes: config.maxResponseBytes ?? DEFAULTS.maxResponseBytes,
      retry: {
        retries: config.maxRetries ?? DEFAULTS.maxRetries,
        minDelayMs: config.retry?.minDelayMs ?? DEFAULTS.retry.minDelayMs,
        maxDelayMs: config.retry?.maxDelayMs ?? DEFAULTS.retry.maxDelayMs,
        maxRetryTimeMs: config.retry?.maxRetryTimeMs ?? DEFAULTS.retry.maxRetryTimeMs,
        maxRetryAfterMs: config.retry?.maxRetryAfterMs ?? DEFAULTS.retry.maxRetryAfterMs,
      },
      secrets: secretForms(config.clientId, config.clientSecret),
      wrapHook: tracing.wrap,
    });
    const tokens = new TokenProvider({
      fetchToken: (signal) => fetchToken(transport, credentials, signal),
      store: config.tokenStore ?? new MemoryTokenStore(),
      key: tokenStoreKey(this.baseUrl, config.clientId, scope, config.clientSecret),
      emit: (event) => this.#events.emit('token', event),
      span: tracing.span,
    });
    // Auth wraps the transport: every data call goes out with a bearer token through it.
    this.#auth = new BearerAuth(transport, tokens);
    this.#api = { transport: this.#auth, strict: this.#strict, span: tracing.span };
    this.bridge = new Bridge(this.#api);
  }

  /**
   * The token's permissions as the service echoes them (individual scopes, never wildcards).
   *
   * @example
   * const { scopes } = await client.me();
   */
  async me(options?: RequestOptions): Promise<Me> {
    options = parseOptions(requestOptionsSchema, options, 'me');
    const { data } = await callEndpoint(this.#api, ENDPOINTS.me, {}, options);
    return data;
  }

  /**
   * The scopes granted to the current token, fetching a token first if none is cached (within the
   * `options`' `timeoutMs`, `maxRetries` and `signal`).
   *
   * @example
   * if (!(await client.getScopes()).includes('transactions:write')) throw new Error('read-only credential');
   */
  async getScopes(options?: RequestOptions): Promise<Scope[]> {
    options = parseOptions(requestOptionsSchema, options, 'getScopes');
    const token = await this.#auth.token(options);
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
    checkListener('PartnerClient.on', CLIENT_EVENTS, event, listener);
    this.#events.on(event, listener as never);
    return this;
  }

  /** Like `on`, for one event only. */
  once<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    checkListener('PartnerClient.once', CLIENT_EVENTS, event, listener);
    this.#events.once(event, listener as never);
    return this;
  }

  /** Removes a listener added with `on` or `once`. */
  off<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    checkListener('PartnerClient.off', CLIENT_EVENTS, event, listener);
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
