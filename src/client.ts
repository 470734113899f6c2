import { createHash } from 'node:crypto';
import * as z from 'zod';
import { BearerAuth } from './auth/bearer.js';
import { basicAuthorization, fetchToken } from './auth/token-endpoint.js';
import { TokenProvider } from './auth/token-provider.js';
import { MemoryTokenStore, type TokenStore } from './auth/token-store.js';
import type { ApiPromise } from './core/api-promise.js';
import {
  apiCall,
  byteCount,
  checkListener,
  durationMs,
  fetchOptionsSchema,
  headersSchema,
  loggerOption,
  logLevelOption,
  maxRetries,
  parseArgs,
  parseOptions,
  readArgs,
  requestOptionsSchema,
  withMethods,
} from './core/args.js';
import { DEFAULTS } from './core/defaults.js';
import { EventEmitter } from './core/emitter.js';
import { CLIENT_EVENTS, type ClientEvents } from './core/events.js';
import { IsolatedListeners } from './core/isolate.js';
import {
  attachLogger,
  type Logger,
  type LogLevel,
  listenerReport,
  logLevelFromEnv,
  logWriter,
} from './core/logger.js';
import type { RequestOptions } from './core/request-options.js';
import { userAgent } from './core/version.js';
import { ArgumentError } from './errors/client-errors.js';
import { redactor } from './errors/redact.js';
import { Bridge } from './flows/bridge.js';
import { IntentMemory } from './flows/submit.js';
import type { RetryOptions } from './http/retry.js';
import { type TracerProviderLike, Tracing, type TracingOption } from './http/tracing.js';
import { type FetchLike, Transport } from './http/transport.js';
import { type Api, callEndpoint, ENDPOINTS } from './resources/endpoints.js';
import { type ApiRequest, type ApiRequestInit, callAny } from './resources/request.js';
import type { Me, Scope } from './schemas/auth.js';

export type { FetchLike } from './http/transport.js';

/** The path prefix of version 1 of the interface; the SDK appends it to `baseUrl`. */
export const API_PREFIX = '/api/v1/s2s';

/**
 * Options of `new PartnerClient(options)`; see each field for its default.
 *
 * @example
 * const client = new PartnerClient({
 *   baseUrl: 'https://partner.example.com', // '/api/v1/s2s' is appended
 *   clientId: process.env.PARTNER_CLIENT_ID!,
 *   clientSecret: process.env.PARTNER_CLIENT_SECRET!,
 *   scope: ['bridge:read', 'transactions:write'],
 *   timeoutMs: 15_000,
 * });
 */
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
   * The fetch to use: a test double, `createPartnerSimulator().fetch`, or undici's own fetch with a
   * proxy `dispatcher` in `fetchOptions`. It is called with a URL string and an init object, never a
   * `Request`, so a fetch from another package reads it; its answer only needs `Response`'s shape.
   * @default globalThis.fetch
   * @example
   * import { fetch, ProxyAgent } from 'undici';
   * new PartnerClient({ ...credentials, fetch, fetchOptions: { dispatcher: new ProxyAgent(process.env.HTTPS_PROXY!) } });
   */
  fetch?: FetchLike;
  /**
   * Fields merged into every init handed to `fetch` (a `dispatcher`, say); a call's own
   * `fetchOptions` go over them. The SDK's `method`, `headers`, `body`, `signal` and `redirect` win.
   * @example
   * new PartnerClient({ ...credentials, fetchOptions: { dispatcher: new Agent({ connections: 16 }) } });
   */
  fetchOptions?: Record<string, unknown>;
  /**
   * Headers sent with every request, token requests included; a call's `headers` go over them.
   * `authorization`, `content-type`, `content-length` and `host` are the SDK's own and are refused.
   * The `user-agent` defaults to `partner-s2s-sdk/<version> node/<version>`. The value of a header
   * named like a credential (`x-api-key`, `proxy-authorization`, `cookie`, anything with `auth`,
   * `token`, `secret` or `session`; 8 characters or more) is masked, like the secret, in whatever
   * a server sends back.
   * @example
   * new PartnerClient({ ...credentials, defaultHeaders: { 'x-partner-env': 'staging' } });
   */
  defaultHeaders?: Record<string, string>;
  /**
   * Where log lines go: anything with `debug`, `info`, `warn` and `error`. A line never carries a
   * header, body, token, signature or secret.
   * @default console
   * @example
   * new PartnerClient({ ...credentials, logger: pino(), logLevel: 'info' });
   */
  logger?: Logger;
  /**
   * How much to log: `debug` is a line per attempt (method, path template, status, ms, attempt,
   * request id) and per token fetch; `info` adds retries; `warn` a failed token request; `error` a
   * refused credential.
   * @default the `PARTNER_S2S_LOG` environment variable, else 'off'
   * @example
   * new PartnerClient({ ...credentials, logLevel: 'debug' });
   */
  logLevel?: LogLevel;
  /**
   * Construct a client where `window` and `document` exist. Off, that is an `ArgumentError`: a page
   * hands its code, and with it the client secret, to every visitor. Turn it on only for code that
   * never reaches a browser a user controls (a test runner in a DOM environment, say).
   * @default false
   * @example
   * new PartnerClient({ ...credentials, dangerouslyAllowBrowser: true });
   */
  dangerouslyAllowBrowser?: boolean;
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
const secret = z.lazy(() => z.string({ error: 'must be a string' }).min(1, 'must not be empty'));

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
  // v3: a v2 token's `expiresAt` may be stretched to a 30 s floor past the service's own expiry.
  return `partner-s2s:v3:${parts}:${fingerprint}`;
}

// Built on the first `new PartnerClient`, not at import.
const optionsSchema = z.lazy(() =>
  z
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
      fetchOptions: fetchOptionsSchema.optional(),
      defaultHeaders: headersSchema.optional(),
      logger: loggerOption.optional(),
      logLevel: logLevelOption.optional(),
      dangerouslyAllowBrowser: z.boolean({ error: 'must be true or false' }).optional(),
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
    }),
);

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
 * Options `withOptions` can change: everything but what identifies the credential and its token
 * cache (base URL, id, secret, scope, `clientAuth`, `tokenStore`) and the fetch that holds the
 * connection pool.
 */
export type PartnerClientOverrides = Pick<
  PartnerClientOptions,
  | 'timeoutMs'
  | 'maxRetries'
  | 'maxResponseBytes'
  | 'retry'
  | 'defaultHeaders'
  | 'fetchOptions'
  | 'logger'
  | 'logLevel'
  | 'strict'
  | 'tracing'
>;

const FIXED_BY_CREDENTIAL = [
  'baseUrl',
  'clientId',
  'clientSecret',
  'scope',
  'clientAuth',
  'tokenStore',
  'fetch',
  'allowInsecureHttp',
  'dangerouslyAllowBrowser',
] as const;

/**
 * What a client and the clients `withOptions` makes from it share: the credential, its tokens, and
 * the intents built and submitted through any of them.
 */
interface Shared {
  baseUrl: string;
  clientId: string;
  fetch: FetchLike;
  secrets: string[];
  tokens: TokenProvider;
  /** The token requests' transport: the settings of the client that made the token cache. */
  tokenTransport: Transport;
  intents: IntentMemory;
}

/** Set only while `withOptions` constructs a client around an existing token cache. */
let sharing: Shared | undefined;

/** True where a page's scripts run: `window` and `document` both exist (not Deno, Bun or Node). */
function inBrowser(): boolean {
  const scope = globalThis as { window?: unknown; document?: unknown };
  return typeof scope.window !== 'undefined' && typeof scope.document !== 'undefined';
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
  readonly #listeners: IsolatedListeners;
  readonly #auth: BearerAuth;
  readonly #api: Api;
  readonly #strict: boolean;
  readonly #shared: Shared;
  /**
   * The options as checked, for `withOptions` to start from: a copy, so that changes the caller
   * makes to its object afterwards reach no client.
   */
  readonly #options: z.output<typeof optionsSchema>;

  constructor(options: PartnerClientOptions) {
    // Taken before reading the options: a getter among them that makes a client must not hand it
    // this credential's token cache.
    const shared = sharing;
    sharing = undefined;
    const config = parseArgs(optionsSchema, options, 'PartnerClient options');
    if (inBrowser() && config.dangerouslyAllowBrowser !== true) {
      throw new ArgumentError({
        where: 'PartnerClient options',
        issues: [
          {
            path: 'dangerouslyAllowBrowser',
            message:
              'this looks like a browser (window and document exist): a page hands the client secret to everyone who loads it. Call the service from your backend; set dangerouslyAllowBrowser: true only where no user can read the code',
          },
        ],
      });
    }
    this.#options = config;
    this.#strict = config.strict ?? DEFAULTS.strict;
    const defaultHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(config.defaultHeaders ?? {}))
      if (value !== null) defaultHeaders[name] = value;
    const makeTransport = (shared: Pick<Shared, 'baseUrl' | 'fetch' | 'secrets'>, tracing: Tracing) =>
      new Transport({
        fetch: shared.fetch,
        prefix: `${shared.baseUrl}${API_PREFIX}`,
        defaultHeaders,
        userAgent: userAgent(),
        fetchOptions: config.fetchOptions,
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
        secrets: shared.secrets,
        wrapHook: tracing.wrap,
      });

    let transport: Transport;
    let tracing: Tracing;
    if (shared) {
      this.#shared = shared;
      tracing = new Tracing(config.tracing ?? true, shared.baseUrl);
      transport = makeTransport(shared, tracing);
    } else {
      const baseUrl = normalBaseUrl(config.baseUrl);
      const scope = config.scope && config.scope.length > 0 ? config.scope.join(' ') : undefined;
      const credentials = {
        clientId: config.clientId,
        clientSecret: config.clientSecret,
        clientAuth: config.clientAuth ?? DEFAULTS.clientAuth,
        scope,
      } as const;
      // Looked up at each call, not now: a test may replace the global fetch after the client is made.
      const fetch: FetchLike = config.fetch ?? ((url, init) => globalThis.fetch(url, init));
      const secrets = secretForms(config.clientId, config.clientSecret);
      tracing = new Tracing(config.tracing ?? true, baseUrl);
      transport = makeTransport({ baseUrl, fetch, secrets }, tracing);
      const tokenTransport = transport;
      const tokens = new TokenProvider({
        fetchToken: (signal) => fetchToken(tokenTransport, credentials, signal),
        store: config.tokenStore ?? new MemoryTokenStore(),
        key: tokenStoreKey(baseUrl, config.clientId, scope, config.clientSecret),
        emit: (event) => this.#events.emit('token', event),
        span: tracing.span,
      });
      this.#shared = {
        baseUrl,
        clientId: config.clientId,
        fetch,
        secrets,
        tokens,
        tokenTransport,
        intents: new IntentMemory(),
      };
    }
    this.baseUrl = this.#shared.baseUrl;
    this.#clientId = this.#shared.clientId;
    const level = config.logLevel ?? logLevelFromEnv() ?? 'off';
    const logger = config.logger ?? console;
    attachLogger(this.#events, logger, level);
    // What a partner's listener or callback throws is a warning of this client, never an outcome.
    const report = listenerReport(logger, level, redactor(this.#shared.secrets));
    this.#listeners = new IsolatedListeners(report);
    // Auth wraps the transport: every data call goes out with a bearer token through it.
    this.#auth = new BearerAuth(transport, this.#shared.tokens);
    const warn = logWriter(logger, level, 'warn');
    this.#api = {
      transport: this.#auth,
      strict: this.#strict,
      span: tracing.span,
      report,
      ...(warn ? { warn } : {}),
    };
    this.bridge = new Bridge(this.#api, this.#shared.intents);
  }

  /**
   * A client with other settings for one job, sharing this one's credential, token cache (no
   * second token request), fetch (its connection pool) and memory of the intents built and
   * submitted: `send`, `execute` and the outcome of an unclear submit behave the same whichever of
   * them is used, and a re-send of a submitted intent from any of them returns the first submit's
   * result without sending it again. Its events are its own: listeners of this client do not hear
   * its calls, and token events stay with the client that owns the cache.
   *
   * @example
   * const patient = client.withOptions({ timeoutMs: 120_000, maxRetries: 5 });
   * const tagged = client.withOptions({ defaultHeaders: { 'x-job-id': jobId } });
   */
  withOptions(overrides: PartnerClientOverrides): PartnerClient {
    const where = 'PartnerClient.withOptions';
    // Read once: a getter cannot pass the check below and then answer differently.
    const given = readOnce(where, overrides);
    const fixed = Object.keys(given).filter((key) =>
      (FIXED_BY_CREDENTIAL as readonly string[]).includes(key),
    );
    if (fixed.length > 0) {
      throw new ArgumentError({
        where,
        issues: fixed.map((key) => ({
          path: key,
          message: 'belongs to the credential and its token cache: construct a new PartnerClient instead',
        })),
      });
    }
    const merged = { ...this.#options, ...given } as PartnerClientOptions;
    if (given.defaultHeaders && this.#options.defaultHeaders) {
      // A `null` (the header left out) is checked again like any value.
      merged.defaultHeaders = readOnce(where, {
        ...this.#options.defaultHeaders,
        ...given.defaultHeaders,
      }) as Record<string, string>;
    }
    sharing = this.#shared;
    try {
      return new PartnerClient(merged);
    } finally {
      sharing = undefined;
    }
  }

  /**
   * The token's permissions as the service echoes them (individual scopes, never wildcards).
   *
   * @example
   * const { scopes } = await client.me();
   */
  me(options?: RequestOptions): ApiPromise<Me> {
    return apiCall(
      options,
      'me',
      async (checked, sink) =>
        (await callEndpoint(this.#api, ENDPOINTS.me, undefined, checked, { sink })).data,
    );
  }

  /**
   * A request to any endpoint below `/api/v1/s2s`, with the same token, scope message on a 403,
   * retries, timeouts, typed errors and `data` unwrapping as the SDK's own methods. `schema` (any
   * zod schema) types and checks the answer's `data`; without it the answer is `unknown`. A path
   * that would leave the prefix is an `ArgumentError` before any request. A GET is retried like
   * every read; another method only after a 429 or a connection that never reached the service,
   * unless `idempotent: true`.
   *
   * @example
   * const Pool = z.object({ poolId: z.string(), apy: z.string() });
   * const pools = await client.request({ method: 'GET', path: '/staking/pools', scopes: ['staking:read'], schema: z.array(Pool) });
   * const { data, requestId } = await client.request({ path: '/users/{userId}', params: { userId } }).withResponse();
   */
  request<T = unknown>(request: ApiRequest<T>, options?: RequestOptions): ApiPromise<T> {
    return apiCall(options, 'PartnerClient.request', (checked, sink) =>
      callAny(this.#api, request, checked, 'PartnerClient.request', sink),
    );
  }

  /**
   * `request` with `method: 'GET'`.
   *
   * @example
   * const portfolio = await client.get('/users/{userId}/portfolio', { params: { userId }, schema: Portfolio });
   */
  get<T = unknown>(path: string, request?: ApiRequestInit<T>, options?: RequestOptions): ApiPromise<T> {
    return this.#shorthand('GET', path, request, options);
  }

  /**
   * `request` with `method: 'POST'`: retried only after a 429 or a connection that never reached
   * the service, unless `idempotent: true`.
   *
   * @example
   * const user = await client.post('/users', { body: { email }, scopes: ['users:write'], schema: User });
   */
  post<T = unknown>(path: string, request?: ApiRequestInit<T>, options?: RequestOptions): ApiPromise<T> {
    return this.#shorthand('POST', path, request, options);
  }

  /** `get` and `post`: `request` with the shorthand's method, named as the shorthand in errors. */
  #shorthand<T>(
    method: 'GET' | 'POST',
    path: string,
    request: ApiRequestInit<T> | undefined,
    options: RequestOptions | undefined,
  ): ApiPromise<T> {
    const where = `PartnerClient.${method.toLowerCase()}`;
    return apiCall(options, where, (checked, sink) =>
      callAny(this.#api, { ...readInit(where, request), method, path }, checked, where, sink),
    );
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
   * elapsed time; never a secret or a token). A listener is called synchronously and not awaited:
   * what it throws, or a promise it returns that rejects, is logged at `warn` through `logger`
   * and never changes the call's outcome.
   *
   * @example
   * client.on('retry', (e) => log.warn(`retrying ${e.method} ${e.path} in ${e.delayMs} ms (${e.reason})`));
   */
  on<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    checkListener('PartnerClient.on', CLIENT_EVENTS, event, listener);
    this.#events.on(event, this.#listeners.wrap(event, listener) as never);
    return this;
  }

  /**
   * Like `on`, for one event only.
   *
   * @example
   * client.once('token', (e) => console.log(`first token, scopes ${e.scopes?.join(' ')}`));
   */
  once<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    checkListener('PartnerClient.once', CLIENT_EVENTS, event, listener);
    this.#events.once(event, this.#listeners.wrap(event, listener) as never);
    return this;
  }

  /**
   * Removes a listener added with `on` or `once`.
   *
   * @example
   * client.off('retry', onRetry);
   */
  off<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): this {
    checkListener('PartnerClient.off', CLIENT_EVENTS, event, listener);
    this.#events.off(event, this.#listeners.find(event, listener) as never);
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

/** A plain copy of a caller's options object, read once; a throwing proxy is an `ArgumentError`. */
function readOnce<T extends object>(where: string, value: T): T {
  if (typeof value !== 'object' || value === null) {
    throw new ArgumentError({ where, issues: [{ path: '', message: 'must be an object of options' }] });
  }
  return readArgs(where, () => ({ ...value }));
}

/** The init of `get`/`post` as a plain object (its `method` and `path` are the shorthand's). */
function readInit<T>(where: string, init: ApiRequestInit<T> | undefined): ApiRequestInit<T> {
  if (init === undefined) return {};
  if (typeof init !== 'object' || init === null) {
    throw new ArgumentError({ where, issues: [{ path: '', message: 'must be an object' }] });
  }
  const copy = readArgs(where, () => ({ ...init }));
  for (const key of ['method', 'path'] as const) {
    if (key in copy) {
      throw new ArgumentError({
        where,
        issues: [{ path: key, message: 'is given by the shorthand: use client.request to choose it' }],
      });
    }
  }
  return copy;
}
