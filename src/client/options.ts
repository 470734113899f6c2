/**
 * The options contract of `new PartnerClient(options)`: what each option means and defaults to,
 * the schema that checks it, and the rules of the base URL and the credential (where a client may
 * send its secret, how it is masked, which token cache it shares).
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { basicAuthorization } from '../auth/token-endpoint.js';
import type { TokenStore } from '../auth/token-store.js';
import {
  byteCount,
  durationMs,
  fetchOptionsSchema,
  headersSchema,
  loggerOption,
  logLevelOption,
  maxRetries,
  parseArgs,
  withMethods,
} from '../core/args.js';
import { API_PREFIX, DEFAULTS, withDefaults } from '../core/defaults.js';
import { type Logger, type LogLevel, logLevelFromEnv } from '../core/logger.js';
import { ArgumentError } from '../errors/client-errors.js';
import { type ChainRpc, chainRpcSchema } from '../flows/rpc.js';
import type { RetryOptions } from '../http/retry.js';
import type { TracerProviderLike, TracingOption } from '../http/tracing.js';
import type { FetchLike } from '../http/types.js';
import type { Scope } from '../schemas/auth.js';

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
  /**
   * The credential's client id.
   * @example process.env.PARTNER_CLIENT_ID!
   */
  clientId: string;
  /**
   * The credential's secret. Never shown in errors, events, logs or `util.inspect`: whatever a
   * server sends back is cleared of it (and of the Basic credential and bearer token) first.
   * @example process.env.PARTNER_CLIENT_SECRET!
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
   * @example new PartnerClient({ ...credentials, clientAuth: 'basic' })
   */
  clientAuth?: 'body' | 'basic';
  /**
   * Time allowed for one attempt: the wait for a token, when none is cached, plus the request from
   * sending to the last byte of the answer. A token fetch shared by several calls is bounded by it.
   * @default DEFAULTS.timeoutMs (30000)
   * @example new PartnerClient({ ...credentials, timeoutMs: 15_000 })
   */
  timeoutMs?: number;
  /**
   * Retries after a connection error, a timeout, 429 or any 5xx. A submit is never retried.
   * @default DEFAULTS.maxRetries (2)
   * @example new PartnerClient({ ...credentials, maxRetries: 5 })
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
   * @example new PartnerClient({ ...credentials, retry: { ...DEFAULTS.retry, maxRetryTimeMs: 120_000 } })
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
   * @default the `PARTNER_S2S_LOG` environment variable, else DEFAULTS.logLevel ('off')
   * @example
   * new PartnerClient({ ...credentials, logLevel: 'debug' });
   */
  logLevel?: LogLevel;
  /**
   * Construct a client where `window` and `document` exist. Off, that is an `ArgumentError`: a page
   * hands its code, and with it the client secret, to every visitor. Turn it on only for code that
   * never reaches a browser a user controls (a test runner in a DOM environment, say).
   * @default DEFAULTS.dangerouslyAllowBrowser (false)
   * @example
   * new PartnerClient({ ...credentials, dangerouslyAllowBrowser: true });
   */
  dangerouslyAllowBrowser?: boolean;
  /**
   * Where tokens are kept; share one between processes so they share a token.
   * @default a store in this process's memory
   * @example new PartnerClient({ ...credentials, tokenStore: createRedisTokenStore({ client: redis }) })
   */
  tokenStore?: TokenStore;
  /**
   * Reject answers with fields, states or scopes the SDK does not know. For tests; in production
   * the SDK keeps unknown fields and lets new enum values through.
   * @default DEFAULTS.strict (false)
   * @example new PartnerClient({ ...credentials, strict: true })
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
   * @default DEFAULTS.tracing (true: on when a tracer provider is registered; nothing is loaded otherwise)
   * @example new PartnerClient({ ...credentials, tracing: false })
   * @example new PartnerClient({ ...credentials, tracing: { tracerProvider: provider } })
   */
  tracing?: TracingOption;
  /**
   * A JSON-RPC node per source chain id: an http(s) URL or an EIP-1193 provider (a viem client).
   * Never required. With the bundle's chain here, `bridge.confirmOnChain(construct)` asks the
   * EntryPoint what became of a batch's operation, and an unclear submit (`send`, `execute`) asks
   * it before giving up: included resolves the submit (with `onChain`), superseded throws
   * `OperationSupersededError`. The URL is used with the runtime's own fetch (not `fetch` above:
   * that one reaches the service) and never shown in errors or logs beyond its origin.
   * @example new PartnerClient({ ...credentials, chains: { 8453: process.env.BASE_RPC_URL! } })
   * @example new PartnerClient({ ...credentials, chains: { 8453: createPublicClient({ chain: base, transport: http(url) }) } })
   */
  chains?: { [chainId: number]: ChainRpc };
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
  | 'chains'
>;

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
export function normalBaseUrl(value: string): string {
  const url = new URL(value);
  let path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith(API_PREFIX)) path = path.slice(0, -API_PREFIX.length);
  return `${url.protocol}//${url.host}${path}`;
}

/** A store key that parts holding the separator cannot forge, and that differs per secret. */
export function tokenStoreKey(
  baseUrl: string,
  clientId: string,
  scope: string | undefined,
  secret: string,
): string {
  const hash = (value: string) => createHash('sha256').update(value).digest('hex');
  const parts = hash(JSON.stringify([baseUrl, clientId, scope ?? null]));
  // Salted with the other parts, so the same secret gives unrelated fingerprints; never the secret.
  const fingerprint = hash(JSON.stringify(['secret', baseUrl, clientId, secret])).slice(0, 32);
  // v3: a v2 token's `expiresAt` may be stretched to a 30 s floor past the service's own expiry.
  return `partner-s2s:v3:${parts}:${fingerprint}`;
}

/** The secret as a server may echo it: raw, form- and URI-encoded, and the Basic credential. */
export function secretForms(clientId: string, clientSecret: string): string[] {
  const basic = basicAuthorization(clientId, clientSecret);
  return [
    clientSecret,
    new URLSearchParams({ v: clientSecret }).toString().slice(2),
    encodeURIComponent(clientSecret),
    basic,
    basic.slice('Basic '.length),
  ];
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
      chains: z
        .record(
          z.string().regex(/^[1-9]\d{0,15}$/, 'must be a chain id: a positive whole number'),
          chainRpcSchema,
        )
        .optional(),
    })
    .superRefine((value, ctx) => {
      const problem = baseUrlProblem(value.baseUrl, value.allowInsecureHttp === true);
      if (problem) ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: problem });
    }),
);

/** The options as checked: what a client keeps, and what `withOptions` starts from. */
export type ClientConfig = z.output<typeof optionsSchema>;

/**
 * The checked options with `DEFAULTS` put under every one not given: the one fill of this option
 * set. The level comes from `logLevel`, else `PARTNER_S2S_LOG`, else the default.
 */
export function clientSettings(config: ClientConfig) {
  const { strict, timeoutMs, maxResponseBytes, maxRetries, tracing, clientAuth } = withDefaults(
    DEFAULTS,
    config,
  );
  return {
    strict,
    timeoutMs,
    maxResponseBytes,
    maxRetries,
    tracing,
    clientAuth,
    retry: withDefaults(DEFAULTS.retry, config.retry),
    logLevel: config.logLevel ?? logLevelFromEnv() ?? DEFAULTS.logLevel,
  };
}

/** True where a page's scripts run: `window` and `document` both exist (not Deno, Bun or Node). */
function inBrowser(): boolean {
  const scope = globalThis as { window?: unknown; document?: unknown };
  return typeof scope.window !== 'undefined' && typeof scope.document !== 'undefined';
}

/** The options checked, or an `ArgumentError` naming each problem; nothing is sent before. */
export function checkClientOptions(options: PartnerClientOptions): ClientConfig {
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
  return config;
}
