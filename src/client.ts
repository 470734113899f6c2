import { BearerAuth } from './auth/bearer.js';
import { fetchToken } from './auth/token-endpoint.js';
import { TokenProvider } from './auth/token-provider.js';
import { MemoryTokenStore } from './auth/token-store.js';
import {
  type ClientConfig,
  checkClientOptions,
  clientSettings,
  normalBaseUrl,
  type PartnerClientOptions,
  type PartnerClientOverrides,
  secretForms,
  tokenStoreKey,
} from './client/options.js';
import { mergeOverrides } from './client/overrides.js';
import type { ApiPromise } from './core/api-promise.js';
import { apiCall, checkListener, parseOptions, readArgs, requestOptionsSchema } from './core/args.js';
import { API_PREFIX } from './core/defaults.js';
import { CLIENT_EVENTS, type ClientEvents } from './core/events.js';
import { PartnerListeners } from './core/isolate.js';
import { attachLogger, listenerReport, logWriter } from './core/logger.js';
import type { RequestOptions } from './core/request-options.js';
import { userAgent } from './core/version.js';
import { ArgumentError } from './errors/client-errors.js';
import { redactor } from './errors/redact.js';
import { SigningTimes } from './flows/execute/signing.js';
import { IntentMemory } from './flows/submit.js';
import { globalFetch } from './http/ky.js';
import { Tracing } from './http/tracing.js';
import { Transport } from './http/transport.js';
import type { FetchLike } from './http/types.js';
import { Bridge } from './resources/bridge.js';
import { type Api, ENDPOINTS } from './resources/endpoints.js';
import { type ApiRequest, type ApiRequestInit, requestOf } from './resources/request.js';
import { call } from './resources/resource.js';
import type { Me, Scope } from './schemas/auth.js';

export type { PartnerClientOptions, PartnerClientOverrides } from './client/options.js';
export type { FetchLike } from './http/types.js';

/**
 * The key under which `withOptions` hands its state to the client it constructs. Not exported and
 * not registered (`Symbol.for`): no caller can name it, and what is found under it counts only if
 * it is a `SharedState` this module made.
 */
const SHARED = Symbol('PartnerClient shared state');

/** The options object `withOptions` builds: the caller's options, and the state it shares. */
type InternalClientOptions = PartnerClientOptions & { [SHARED]?: SharedState };

/**
 * What a client and the clients `withOptions` makes from it share: the credential, its tokens, and
 * the intents built and submitted through any of them.
 */
class SharedState {
  declare readonly baseUrl: string;
  declare readonly clientId: string;
  declare readonly fetch: FetchLike;
  declare readonly secrets: string[];
  declare readonly tokens: TokenProvider;
  /** The token requests' transport: the settings of the client that made the token cache. */
  declare readonly tokenTransport: Transport;
  declare readonly intents: IntentMemory;
  /** How long signers took, by address: `execute`'s learned signing budget. */
  declare readonly signingTimes: SigningTimes;
  // Only instances this class made carry it: a look-alike object, whatever its prototype, fails `of`.
  readonly #genuine = true;

  constructor(parts: Omit<SharedState, 'toJSON'>) {
    Object.assign(this, parts);
  }

  /** The state under `SHARED`, when `options` was built by `withOptions`; otherwise none. */
  static of(options: unknown): SharedState | undefined {
    if (typeof options !== 'object' || options === null) return undefined;
    let found: unknown;
    try {
      found = Object.getOwnPropertyDescriptor(options, SHARED)?.value;
    } catch {
      // A proxy that throws here: the options check names the problem.
      return undefined;
    }
    return typeof found === 'object' && found !== null && #genuine in found ? found : undefined;
  }

  /** Secrets and tokens stay out of logs: `util.inspect` and `JSON.stringify` show no field. */
  toJSON(): Record<string, never> {
    return {};
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'SharedState {}';
  }
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
  /** The SDK's logger and the partner's listeners, each called isolated: none changes an outcome. */
  readonly #events: PartnerListeners<ClientEvents>;
  readonly #auth: BearerAuth;
  readonly #api: Api;
  readonly #strict: boolean;
  readonly #shared: SharedState;
  /**
   * The options as checked, for `withOptions` to start from: a copy, so that changes the caller
   * makes to its object afterwards reach no client.
   */
  readonly #options: ClientConfig;

  constructor(options: PartnerClientOptions) {
    // Only the options object `withOptions` built carries a state; any other makes a credential of its own.
    const shared = SharedState.of(options);
    const config = checkClientOptions(options);
    this.#options = config;
    const settings = clientSettings(config);
    this.#strict = settings.strict;
    const logger = config.logger ?? console;
    const secrets = shared ? shared.secrets : secretForms(config.clientId, config.clientSecret);
    // What a partner's listener or callback throws is a warning of this client, never an outcome.
    const report = listenerReport(logger, settings.logLevel, redactor(secrets));
    this.#events = new PartnerListeners<ClientEvents>(report);
    attachLogger(this.#events, logger, settings.logLevel);
    const defaultHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(config.defaultHeaders ?? {}))
      if (value !== null) defaultHeaders[name] = value;
    const makeTransport = (shared: Pick<SharedState, 'baseUrl' | 'fetch' | 'secrets'>, tracing: Tracing) =>
      new Transport({
        fetch: shared.fetch,
        prefix: `${shared.baseUrl}${API_PREFIX}`,
        defaultHeaders,
        userAgent: userAgent(),
        fetchOptions: config.fetchOptions,
        events: this.#events,
        timeoutMs: settings.timeoutMs,
        maxResponseBytes: settings.maxResponseBytes,
        retry: { retries: settings.maxRetries, ...settings.retry },
        secrets: shared.secrets,
        tracing,
      });

    let transport: Transport;
    let tracing: Tracing;
    if (shared) {
      this.#shared = shared;
      tracing = new Tracing(settings.tracing, shared.baseUrl);
      transport = makeTransport(shared, tracing);
    } else {
      const baseUrl = normalBaseUrl(config.baseUrl);
      const scope = config.scope && config.scope.length > 0 ? config.scope.join(' ') : undefined;
      const credentials = {
        clientId: config.clientId,
        clientSecret: config.clientSecret,
        clientAuth: settings.clientAuth,
        scope,
      } as const;
      const fetch: FetchLike = config.fetch ?? globalFetch;
      tracing = new Tracing(settings.tracing, baseUrl);
      transport = makeTransport({ baseUrl, fetch, secrets }, tracing);
      const tokenTransport = transport;
      const tokens = new TokenProvider({
        fetchToken: (signal) => fetchToken(tokenTransport, credentials, signal),
        store: config.tokenStore ?? new MemoryTokenStore(),
        key: tokenStoreKey(baseUrl, config.clientId, scope, config.clientSecret),
        emit: (event) => this.#events.emit('token', event),
        span: tracing.span,
      });
      this.#shared = new SharedState({
        baseUrl,
        clientId: config.clientId,
        fetch,
        secrets,
        tokens,
        tokenTransport,
        intents: new IntentMemory(),
        signingTimes: new SigningTimes(),
      });
    }
    this.baseUrl = this.#shared.baseUrl;
    this.#clientId = this.#shared.clientId;
    // Auth wraps the transport: every data call goes out with a bearer token through it.
    this.#auth = new BearerAuth(transport, this.#shared.tokens);
    const warn = logWriter(logger, settings.logLevel, 'warn');
    this.#api = {
      transport: this.#auth,
      strict: this.#strict,
      span: tracing.span,
      report,
      ...(warn ? { warn } : {}),
    };
    this.bridge = new Bridge(this.#api, this.#shared.intents, this.#shared.signingTimes, config.chains);
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
    const options: InternalClientOptions = mergeOverrides(this.#options, overrides);
    // Not enumerable: a copy or a look at the options carries no state, and the options check skips it.
    Object.defineProperty(options, SHARED, { value: this.#shared });
    return new PartnerClient(options);
  }

  /**
   * The token's permissions as the service echoes them (individual scopes, never wildcards).
   *
   * @example
   * const { scopes } = await client.me();
   */
  me(options?: RequestOptions): ApiPromise<Me> {
    return call(this.#api, ENDPOINTS.me, undefined, options);
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
    const where = 'PartnerClient.request';
    return apiCall(options, where, (checked, sink) =>
      this.#api.transport.request(requestOf(request, where, sink), checked),
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
      this.#api.transport.request(
        requestOf({ ...readInit(where, request), method, path }, where, sink),
        checked,
      ),
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
    const token = await this.#auth.token(parseOptions(requestOptionsSchema, options, 'getScopes'));
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
    this.#events.on(event, listener);
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
    this.#events.once(event, listener);
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
    this.#events.off(event, listener);
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
