import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { hashMessage, recoverAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { recoverAuthorizationAddress } from 'viem/utils';
import type { z } from 'zod';
import { fromRawAmount, toRawAmount } from '../core/amounts.js';
import { parseArgs, readArgs } from '../core/args.js';
import { DEFAULT_DELEGATES } from '../onchain/constants.js';
import { sameAddress } from '../onchain/hex.js';
import type {
  BridgeBundle,
  BridgeQuote,
  BridgeRoute,
  BridgeTransfer,
  TransferStatus,
} from '../schemas/bridge.js';
import type { Address, Hex } from '../schemas/common.js';
import { CALLBACK_STATES, TRANSITIONS } from '../schemas/states.js';
import { simulatorArgs, simulatorOptionsArgs } from './args.js';
import { buildBridgeBundle } from './batch.js';
import { covers, expandScopes, intersect } from './scopes.js';

/** Options of {@link createPartnerSimulator}. */
export interface SimulatorOptions {
  /**
   * Move transfers through submitted → source_confirmed → delivered on timers after a submit.
   * Off: tests drive states with `sim.advance`.
   * @default false
   */
  autoAdvance?: boolean | { sourceConfirmedMs?: number; deliveredMs?: number };
  /** Lifetime of issued tokens. @default 3600 */
  tokenTtlSec?: number;
  /** Lifetime of quotes and intents. @default 120 */
  quoteTtlSec?: number;
  /** Where callbacks go: a URL (POSTed as JSON) or a function given the exact body. */
  callbacks?: string | ((body: BridgeTransfer) => void | Promise<void>);
  /**
   * Headers sent with every callback POSTed to a URL, so that the receiving router's
   * `authenticate` has something to check, as a real deployment's agreed secret header.
   *
   * @example
   * createPartnerSimulator({ callbacks: url, callbackHeaders: { 'x-callback-token': token } });
   */
  callbackHeaders?: Record<string, string>;
  /** Create a demo organisation, credential and funded user (`sim.demo`). @default true */
  demo?: boolean;
}

/** A user the simulator created, with its wallet's key so tests can sign for it. */
export interface SimUser {
  userId: string;
  /** `null` when the user has no linked wallet. */
  wallet: { address: Address; privateKey: Hex } | null;
}

interface Organisation {
  id: string;
  scopes: Set<string>;
  active: boolean;
}

interface Credential {
  clientId: string;
  organisationId: string;
  secrets: { secret: string; validUntil: number }[];
  scopes: Set<string>;
  revoked: boolean;
}

interface IssuedToken {
  clientId: string;
  scopes: Set<string>;
  expiresAt: number;
}

interface UserRecord {
  userId: string;
  organisationId: string;
  wallet: { address: Address; privateKey: Hex } | null;
  /** `${chainId}:${token lowercase}` → base units. */
  balances: Map<string, bigint>;
  /** chainId → EIP-7702 nonce; a chain in `delegated` needs no authorization. */
  authNonces: Map<number, number>;
  delegated: Set<number>;
}

interface RouteState {
  route: BridgeRoute;
  paused: boolean;
  reachable: boolean;
  gasFeeRaw: bigint;
  /** Provider fee in basis points of the amount. */
  providerFeeBps: bigint;
  /** Above this provider fee (bps) construct answers 503. */
  feeCeilingBps: bigint;
}

interface IntentRecord {
  intentId: string;
  transferId: string;
  userId: string;
  bundle: BridgeBundle;
  quote: BridgeQuote;
  expiresAt: number;
  spent: boolean;
}

interface TransferRecord {
  transfer: BridgeTransfer;
  organisationId: string;
  seq: number;
  intentId: string;
}

type SimulatorSchemas = ReturnType<
  typeof simulatorArgs<Organisation, Credential, UserRecord, RouteState, TransferRecord>
>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  503: 'Service Unavailable',
};

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function id(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

function failure(error: HttpFailure): Response {
  return jsonResponse(
    {
      statusCode: error.status,
      error: STATUS_TEXT[error.status] ?? 'Error',
      code: error.code,
      message: error.message,
      ...error.extra,
    },
    error.status,
    error.headers,
  );
}

function oauthError(
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse({ error, error_description: description }, status, {
    'cache-control': 'no-store',
    ...headers,
  });
}

/** Reads a JSON number from the raw body, digit for digit: JSON.parse would round it. */
function rawNumber(body: string, key: string): string | undefined {
  const match = new RegExp(`"${key}"\\s*:\\s*(-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)`).exec(body);
  return match?.[1];
}

/** The default routes: USDC between Base (6 decimals) and BNB Chain (18 decimals), one id per direction. */
function defaultRoutes(): RouteState[] {
  const base = {
    symbol: 'USDC',
    chain: 'base',
    chainId: 8453,
    contractAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as Address,
    decimals: 6,
  };
  const bsc = {
    symbol: 'USDC',
    chain: 'bsc',
    chainId: 56,
    contractAddress: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d' as Address,
    decimals: 18,
  };
  const make = (from: typeof base, to: typeof base, bridge: Address, gasFeeRaw: bigint): RouteState => ({
    route: {
      routeId: `${from.chain}-${from.symbol.toLowerCase()}-to-${to.chain}-${to.symbol.toLowerCase()}`,
      provider: 'across',
      from,
      to,
      limits: null,
      targets: {
        bridge,
        token: from.contractAddress,
        treasury: '0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf',
      },
    },
    paused: false,
    reachable: true,
    gasFeeRaw,
    providerFeeBps: 10n,
    feeCeilingBps: 100n,
  });
  return [
    make(base, bsc, '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64', 120_000n),
    make(bsc, base, '0x4e8E101924eDE233C13e2D8622DC8aED2872d505', 150_000_000_000_000_000n),
  ];
}

/**
 * A stateful, in-memory Partner Service Interface: credentials and scopes, users with real
 * secp256k1 wallets, routes and quotes, real bridge batches and user-operation hashes, signature
 * checks on submit, the transfer state machine and callbacks. Use `sim.fetch` as the client's
 * `fetch`, or `await sim.listen()` for a real HTTP server on 127.0.0.1. Every method checks its
 * arguments: a wrong type, an unknown id or a bad amount is an `ArgumentError` that says which.
 *
 * @example
 * const sim = createPartnerSimulator();
 * const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
 * const account = privateKeyToAccount(sim.demo.wallet.privateKey);
 * const { transferId } = await client.bridge.execute({ userId: sim.demo.userId, routeId, amount: '25', signer: account });
 * sim.advance(transferId, 'source_confirmed');
 */
export class PartnerSimulator {
  /** The base URL to give the client when using `fetch` (no server is needed for it). */
  readonly baseUrl = 'http://simulator.localhost';
  readonly #options: SimulatorOptions;
  readonly #organisations = new Map<string, Organisation>();
  readonly #credentials = new Map<string, Credential>();
  readonly #tokens = new Map<string, IssuedToken>();
  readonly #users = new Map<string, UserRecord>();
  readonly #routes = new Map<string, RouteState>();
  readonly #intents = new Map<string, IntentRecord>();
  readonly #transfers = new Map<string, TransferRecord>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #callbackLog: BridgeTransfer[] = [];
  #callbackTarget: SimulatorOptions['callbacks'];
  readonly #callbackHeaders: Record<string, string>;
  #offsetMs = 0;
  #seq = 0;
  readonly #args = simulatorArgs({
    organisation: (id) => this.#organisations.get(id),
    credential: (id) => this.#credentials.get(id),
    user: (id) => this.#users.get(id),
    route: (id) => this.#routes.get(id),
    transfer: (id) => {
      const record = this.#transfers.get(id);
      if (record) this.#expireIfDue(record);
      return record;
    },
    transferState: (record) => ({
      status: record.transfer.status,
      next: TRANSITIONS[record.transfer.status] ?? [],
    }),
  });
  /** Requests seen, by "METHOD /path" (path below /api/v1/s2s). */
  readonly requests: { method: string; path: string }[] = [];
  /** Ready-made organisation, credential and funded user, unless `demo: false`. */
  readonly demo: {
    organisationId: string;
    credentials: { clientId: string; clientSecret: string };
    userId: string;
    wallet: { address: Address; privateKey: Hex };
  };

  constructor(input: SimulatorOptions = {}) {
    const options = (parseArgs(simulatorOptionsArgs, input, 'PartnerSimulator options') ??
      {}) as SimulatorOptions;
    this.#options = options;
    this.#callbackTarget = options.callbacks;
    this.#callbackHeaders = { ...options.callbackHeaders };
    for (const state of defaultRoutes()) this.#routes.set(state.route.routeId, state);
    if (options.demo === false) {
      this.demo = undefined as never;
      return;
    }
    const org = this.createOrganisation({ scopes: ['all:read', 'all:write'] });
    const credentials = this.createCredential({ organisationId: org, scopes: ['all:read', 'all:write'] });
    const user = this.createUser({ organisationId: org });
    this.fund(user.userId, 8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 1_000_000_000n);
    this.fund(user.userId, 56, '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', 1_000n * 10n ** 18n);
    this.demo = { organisationId: org, credentials, userId: user.userId, wallet: user.wallet! };
  }

  // --- clock -------------------------------------------------------------------------------------

  /** The simulator's time in ms; moves with the real clock plus whatever `advanceClock` added. */
  now(): number {
    return Date.now() + this.#offsetMs;
  }

  /** Moves the simulator's clock forward: tokens and quotes expire accordingly. */
  advanceClock(ms: number): void {
    this.#offsetMs += this.#check('advanceClock', { ms }).ms;
  }

  // --- administration ----------------------------------------------------------------------------

  /** An organisation (a partner) holding `scopes`; returns its id. */
  createOrganisation(params: { scopes: string[]; id?: string }): string {
    const { scopes, id: given } = this.#check('createOrganisation', { params }).params;
    const orgId = given ?? id('org');
    this.#organisations.set(orgId, { id: orgId, scopes: new Set(scopes), active: true });
    return orgId;
  }

  /** Withdraws a scope (or wildcard) from an organisation: every token loses it at once. */
  withdrawOrganisationScope(organisationId: string, scope: string): void {
    const args = this.#check('withdrawOrganisationScope', { organisationId, scope });
    args.organisationId.scopes.delete(args.scope);
  }

  /** Suspends or reactivates an organisation: its credentials and tokens stop working at once. */
  setOrganisationActive(organisationId: string, active: boolean): void {
    const args = this.#check('setOrganisationActive', { organisationId, active });
    args.organisationId.active = args.active;
  }

  /** A credential of an organisation. The secret is returned here only, as the service shows it once. */
  createCredential(params: { organisationId: string; scopes: string[] }): {
    clientId: string;
    clientSecret: string;
  } {
    const { organisationId: org, scopes } = this.#check('createCredential', { params }).params;
    const clientId = id('cli');
    const clientSecret = `sec_${randomBytes(18).toString('base64url')}:+/=`;
    this.#credentials.set(clientId, {
      clientId,
      organisationId: org.id,
      secrets: [{ secret: clientSecret, validUntil: Number.POSITIVE_INFINITY }],
      scopes: new Set(scopes),
      revoked: false,
    });
    return { clientId, clientSecret };
  }

  /** Revokes a credential: it and every token issued to it stop working at once. */
  revokeCredential(clientId: string): void {
    this.#check('revokeCredential', { clientId }).clientId.revoked = true;
  }

  /** Issues a new secret; the old one keeps working for `graceMs`. The new secret is shown once. */
  rotateCredential(clientId: string, params: { graceMs: number }): { clientSecret: string } {
    const { clientId: credential, params: rotation } = this.#check('rotateCredential', { clientId, params });
    const until = this.now() + rotation.graceMs;
    for (const secret of credential.secrets) secret.validUntil = Math.min(secret.validUntil, until);
    const clientSecret = `sec_${randomBytes(18).toString('base64url')}`;
    credential.secrets.push({ secret: clientSecret, validUntil: Number.POSITIVE_INFINITY });
    return { clientSecret };
  }

  /** A user of an organisation, with a new linked wallet (a real key) unless `wallet: false`. */
  createUser(params: { organisationId: string; wallet?: boolean }): SimUser {
    const { organisationId: org, wallet: withWallet } = this.#check('createUser', { params }).params;
    const userId = id('usr');
    let wallet: SimUser['wallet'] = null;
    if (withWallet !== false) {
      const privateKey = generatePrivateKey();
      wallet = { address: privateKeyToAccount(privateKey).address, privateKey };
    }
    this.#users.set(userId, {
      userId,
      organisationId: org.id,
      wallet,
      balances: new Map(),
      authNonces: new Map(),
      delegated: new Set(),
    });
    return { userId, wallet };
  }

  /** Sets a user's balance of a token on a chain, in base units. */
  fund(userId: string, chainId: number, token: string, raw: bigint): void {
    const args = this.#check('fund', { userId, chainId, token, raw });
    args.userId.balances.set(`${args.chainId}:${args.token.toLowerCase()}`, args.raw);
  }

  /** A user's balance of a token on a chain, in base units. */
  balance(userId: string, chainId: number, token: string): bigint {
    const args = this.#check('balance', { userId, chainId, token });
    return args.userId.balances.get(`${args.chainId}:${args.token.toLowerCase()}`) ?? 0n;
  }

  /** Every route, as `GET /bridge/routes` shows it. */
  routes(): BridgeRoute[] {
    return [...this.#routes.values()].map((state) => this.#publicRoute(state));
  }

  /** Changes how a route behaves: paused (400), unreachable (`limits: null`, 503), fees. */
  configureRoute(
    routeId: string,
    change: {
      paused?: boolean;
      reachable?: boolean;
      gasFeeRaw?: bigint;
      providerFeeBps?: bigint;
      feeCeilingBps?: bigint;
    },
  ): void {
    const args = this.#check('configureRoute', { routeId, change });
    Object.assign(
      args.routeId,
      Object.fromEntries(Object.entries(args.change).filter(([, value]) => value !== undefined)),
    );
  }

  /** Where callbacks go from now on. */
  setCallbacks(target: SimulatorOptions['callbacks']): void {
    this.#callbackTarget = this.#check('setCallbacks', { target }).target;
  }

  /** Every callback body sent so far, in order. */
  get callbacks(): readonly BridgeTransfer[] {
    return this.#callbackLog;
  }

  /** A transfer as the service holds it now. */
  transfer(transferId: string): BridgeTransfer {
    const record = this.#check('transfer', { transferId }).transferId;
    return structuredClone(record.transfer);
  }

  /**
   * Moves a transfer to `status` along the specified state machine, sending its callback.
   * A transition the service would never make is an `ArgumentError` naming the ones it could.
   */
  advance(
    transferId: string,
    status: TransferStatus,
    details: { failureReason?: string } = {},
  ): BridgeTransfer {
    const {
      transferId: record,
      status: next,
      details: given,
    } = this.#check('advance', {
      transferId,
      status,
      details,
    });
    this.#enter(record, next, given);
    return structuredClone(record.transfer);
  }

  /** Stops timers of automatic progress. */
  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  // --- transport ---------------------------------------------------------------------------------

  /** A fetch function that answers as the service would. */
  readonly fetch = async (input: Request | URL | string, init?: RequestInit): Promise<Response> => {
    const where = 'PartnerSimulator.fetch';
    const request = readArgs(where, () =>
      input instanceof Request && init === undefined ? input : new Request(input, init),
    );
    const url = new URL(request.url);
    const prefix = '/api/v1/s2s';
    if (!url.pathname.startsWith(prefix)) return failure(new HttpFailure(404, 'NOT_FOUND', 'unknown path'));
    const path = url.pathname.slice(prefix.length);
    // A body stream of the caller's that errors is theirs too: rethrown inside readArgs to be typed.
    const body =
      request.method === 'GET' || request.method === 'HEAD'
        ? ''
        : await request.text().catch((error: unknown) =>
            readArgs(where, () => {
              throw error;
            }),
          );
    this.requests.push({ method: request.method, path });
    try {
      if (path === '/auth/token') {
        if (request.method !== 'POST') throw new HttpFailure(405, 'METHOD_NOT_ALLOWED', 'use POST');
        return this.#token(request.headers, body);
      }
      const auth = this.#authenticate(request.headers);
      return await this.#route(request.method, path, url.searchParams, body, auth);
    } catch (error) {
      if (error instanceof HttpFailure) return failure(error);
      throw error;
    }
  };

  /**
   * Serves the simulator over HTTP on 127.0.0.1.
   *
   * @example
   * const server = await sim.listen();
   * const client = new PartnerClient({ baseUrl: server.url, ...sim.demo.credentials });
   * await server.close();
   */
  async listen(port = 0): Promise<{ url: string; close: () => Promise<void> }> {
    const { port: checked } = this.#check('listen', { port });
    const server = createServer((req, res) => {
      void this.#serve(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(checked, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    const actual = typeof address === 'object' && address ? address.port : checked;
    return {
      url: `http://127.0.0.1:${actual}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers();
      for (const [key, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers.set(key, value);
      const method = req.method ?? 'GET';
      const response = await this.fetch(`http://127.0.0.1${req.url ?? '/'}`, {
        method,
        headers,
        ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
      });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          statusCode: 500,
          error: 'Internal Server Error',
          code: 'INTERNAL',
          message: 'simulator failure',
        }),
      );
    }
  }

  // --- auth --------------------------------------------------------------------------------------

  #token(headers: Headers, body: string): Response {
    const type = headers.get('content-type') ?? '';
    let params: Record<string, string>;
    if (type.includes('application/json')) {
      try {
        const parsed = JSON.parse(body) as Record<string, unknown>;
        params = Object.fromEntries(
          Object.entries(parsed).filter(([, v]) => typeof v === 'string'),
        ) as Record<string, string>;
      } catch {
        return oauthError(400, 'invalid_request', 'the body is not JSON');
      }
    } else {
      params = Object.fromEntries(new URLSearchParams(body));
    }
    let clientId = params.client_id;
    let clientSecret = params.client_secret;
    const authorization = headers.get('authorization');
    if (authorization?.startsWith('Basic ')) {
      const decoded = Buffer.from(authorization.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return oauthError(400, 'invalid_request', 'malformed Basic credentials');
      const decode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '));
      try {
        clientId = decode(decoded.slice(0, colon));
        clientSecret = decode(decoded.slice(colon + 1));
      } catch {
        return oauthError(400, 'invalid_request', 'malformed Basic credentials');
      }
    }
    if (!params.grant_type) return oauthError(400, 'invalid_request', 'grant_type is required');
    if (params.grant_type !== 'client_credentials')
      return oauthError(400, 'unsupported_grant_type', 'only client_credentials');
    if (!clientId || !clientSecret)
      return oauthError(400, 'invalid_request', 'client_id and client_secret are required');
    const credential = this.#credentials.get(clientId);
    const now = this.now();
    const org = credential && this.#organisations.get(credential.organisationId);
    const secretOk = credential?.secrets.some(
      (entry) => entry.secret === clientSecret && entry.validUntil > now,
    );
    if (!credential || !org || !secretOk || credential.revoked || !org.active) {
      return oauthError(401, 'invalid_client', 'client authentication failed', {
        'www-authenticate': 'Basic realm="partner"',
      });
    }
    const held = intersect(expandScopes(credential.scopes), expandScopes(org.scopes));
    let granted = held;
    if (params.scope !== undefined) {
      const requested = params.scope.split(' ').filter(Boolean);
      const holders = new Set(
        [...credential.scopes].filter((scope) => org.scopes.has(scope) || !scope.startsWith('all:')),
      );
      for (const scope of requested) {
        const ok = scope.startsWith('all:') ? holders.has(scope) && org.scopes.has(scope) : held.has(scope);
        if (!ok) return oauthError(400, 'invalid_scope', `the credential does not hold ${scope}`);
      }
      granted = intersect(expandScopes(requested), held);
    }
    const accessToken = `at_${randomBytes(24).toString('base64url')}`;
    const ttl = this.#options.tokenTtlSec ?? 3600;
    this.#tokens.set(accessToken, { clientId, scopes: granted, expiresAt: now + ttl * 1000 });
    return jsonResponse(
      {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: ttl,
        scope: [...granted].sort().join(' '),
      },
      200,
      { 'cache-control': 'no-store', pragma: 'no-cache' },
    );
  }

  #authenticate(headers: Headers): { organisationId: string; scopes: Set<string> } {
    const header = headers.get('authorization');
    if (!header)
      throw new HttpFailure(
        401,
        'UNAUTHORIZED',
        'missing access token',
        {},
        { 'www-authenticate': 'Bearer realm="partner"' },
      );
    const match = /^Bearer ([^\s]+)$/.exec(header);
    const rejected = (message: string) =>
      new HttpFailure(
        401,
        'UNAUTHORIZED',
        message,
        {},
        {
          'www-authenticate': `Bearer realm="partner", error="invalid_token", error_description="${message}"`,
        },
      );
    if (!match) throw rejected('malformed access token');
    const token = this.#tokens.get(match[1]!);
    if (!token || token.expiresAt <= this.now()) throw rejected('the access token is invalid or expired');
    const credential = this.#credentials.get(token.clientId);
    const org = credential && this.#organisations.get(credential.organisationId);
    if (!credential || !org || credential.revoked || !org.active)
      throw rejected('the access token was revoked');
    const scopes = intersect(
      intersect(token.scopes, expandScopes(credential.scopes)),
      expandScopes(org.scopes),
    );
    return { organisationId: org.id, scopes };
  }

  #require(auth: { scopes: Set<string> }, ...needed: string[]): void {
    const missing = needed.filter((scope) => !covers(auth.scopes, scope));
    if (missing.length > 0)
      throw new HttpFailure(403, 'FORBIDDEN', `the token lacks ${missing.join(' and ')}`);
  }

  // --- endpoints ---------------------------------------------------------------------------------

  async #route(
    method: string,
    path: string,
    query: URLSearchParams,
    body: string,
    auth: { organisationId: string; scopes: Set<string> },
  ): Promise<Response> {
    const key = `${method} ${path}`;
    if (key === 'GET /me') return jsonResponse({ data: { scopes: [...auth.scopes].sort() } });
    if (key === 'GET /bridge/routes') {
      this.#require(auth, 'bridge:read');
      return jsonResponse({ data: this.routes() });
    }
    if (key === 'POST /bridge/quote') {
      this.#require(auth, 'bridge:read');
      const input = this.#body(body, ['userId', 'routeId', 'amount']);
      this.#partnerUser(auth.organisationId, input.userId);
      const state = this.#usableRoute(input.routeId);
      return jsonResponse({ data: this.#quote(state, this.#amountRaw(state, input.amountLiteral)) });
    }
    if (key === 'GET /bridge/fee-estimate') {
      this.#require(auth, 'bridge:read');
      const errors: string[] = [];
      const routeId = query.get('routeId');
      const amount = query.get('amount');
      if (!routeId) errors.push('routeId is required');
      if (!amount || !/^\d+(\.\d+)?$/.test(amount)) errors.push('amount must be a positive number');
      if (errors.length > 0) throw this.#validation(errors);
      const state = this.#knownRoute(routeId!);
      const raw = this.#amountRaw(state, amount!, false);
      const finalRaw = raw > state.gasFeeRaw ? raw - state.gasFeeRaw : 0n;
      const decimals = state.route.from.decimals;
      return jsonResponse({
        data: {
          gasFee: fromRawAmount(state.gasFeeRaw, decimals),
          gasFeeRaw: String(state.gasFeeRaw),
          gasFeeToken: state.route.from.symbol,
          finalAmount: fromRawAmount(finalRaw, decimals),
          finalAmountRaw: String(finalRaw),
          feePercent: 0,
          systemFeeUsd: 0,
        },
      });
    }
    if (key === 'POST /bridge/construct/transaction/batch') {
      this.#require(auth, 'bridge:read', 'transactions:write');
      return jsonResponse({ data: this.#construct(auth.organisationId, body) });
    }
    if (key === 'POST /bridge/transaction/batch/send') {
      this.#require(auth, 'bridge:read', 'transactions:write');
      return jsonResponse({ data: await this.#send(auth.organisationId, body) });
    }
    if (key === 'GET /bridge/transfers') {
      this.#require(auth, 'bridge:read');
      return jsonResponse(this.#list(auth.organisationId, query));
    }
    const single = /^\/bridge\/transfers\/([^/]+)$/.exec(path);
    if (method === 'GET' && single) {
      this.#require(auth, 'bridge:read');
      const userId = query.get('userId');
      if (!userId) throw this.#validation(['userId is required']);
      this.#partnerUser(auth.organisationId, userId);
      const record = this.#transfers.get(decodeURIComponent(single[1]!));
      if (!record || record.transfer.userId !== userId || record.organisationId !== auth.organisationId) {
        throw new HttpFailure(404, 'NOT_FOUND', 'no such transfer');
      }
      this.#expireIfDue(record);
      return jsonResponse({ data: record.transfer });
    }
    throw new HttpFailure(404, 'NOT_FOUND', `no endpoint ${method} ${path}`);
  }

  /** A request body as an object, or the VALIDATION_FAILED the service answers to anything else. */
  #json(body: string): Record<string, unknown> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw this.#validation(['the body must be JSON']);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw this.#validation(['the body must be an object']);
    return parsed as Record<string, unknown>;
  }

  #validation(errors: string[]): HttpFailure {
    return new HttpFailure(400, 'VALIDATION_FAILED', errors.join('; '), { errors });
  }

  #body(
    body: string,
    required: string[],
  ): { userId: string; routeId: string; amountLiteral: string; parsed: Record<string, unknown> } {
    const parsed = this.#json(body);
    const errors: string[] = [];
    for (const field of required) {
      if (field === 'amount') {
        if (typeof parsed.amount !== 'number' || !(parsed.amount > 0))
          errors.push('amount must be a positive number');
      } else if (typeof parsed[field] !== 'string' || parsed[field] === '')
        errors.push(`${field} must be a non-empty string`);
    }
    if (errors.length > 0) throw this.#validation(errors);
    return {
      userId: parsed.userId as string,
      routeId: parsed.routeId as string,
      amountLiteral: required.includes('amount') ? (rawNumber(body, 'amount') ?? String(parsed.amount)) : '',
      parsed,
    };
  }

  #partnerUser(organisationId: string, userId: string): UserRecord {
    const user = this.#users.get(userId);
    if (!user || user.organisationId !== organisationId)
      throw new HttpFailure(404, 'USER_NOT_FOUND', 'no such user');
    return user;
  }

  #knownRoute(routeId: string): RouteState {
    const state = this.#routes.get(routeId);
    if (!state) throw new HttpFailure(404, 'NOT_FOUND', 'no such route');
    return state;
  }

  #usableRoute(routeId: string): RouteState {
    const state = this.#knownRoute(routeId);
    if (state.paused) throw new HttpFailure(400, 'BAD_REQUEST', 'the route is paused');
    if (!state.reachable)
      throw new HttpFailure(503, 'SERVICE_UNAVAILABLE', 'the bridge cannot be reached; retry shortly');
    return state;
  }

  #amountRaw(state: RouteState, literal: string, checkBounds = true): bigint {
    let raw: bigint;
    try {
      raw = toRawAmount(literal, state.route.from.decimals);
    } catch {
      throw this.#validation([`amount has more than ${state.route.from.decimals} decimals`]);
    }
    if (checkBounds) this.#checkBounds(state, raw);
    return raw;
  }

  #checkBounds(state: RouteState, raw: bigint): void {
    const limits = this.#limits(state);
    if (raw < BigInt(limits.minAmountRaw))
      throw new HttpFailure(400, 'BAD_REQUEST', `amount is below the minimum of ${limits.minAmount}`);
    if (raw > BigInt(limits.maxAmountRaw))
      throw new HttpFailure(400, 'BAD_REQUEST', `amount is above the maximum of ${limits.maxAmount}`);
  }

  #limits(state: RouteState) {
    const { decimals } = state.route.from;
    const unit = 10n ** BigInt(decimals);
    const minRaw = unit;
    const maxRaw = 50_000n * unit;
    return {
      minAmount: fromRawAmount(minRaw, decimals),
      maxAmount: fromRawAmount(maxRaw, decimals),
      minAmountRaw: String(minRaw),
      maxAmountRaw: String(maxRaw),
      fetchedAt: new Date(Math.floor(this.now() / 60_000) * 60_000).toISOString(),
    };
  }

  #publicRoute(state: RouteState): BridgeRoute {
    return { ...structuredClone(state.route), limits: state.reachable ? this.#limits(state) : null };
  }

  #quote(state: RouteState, amountInRaw: bigint): BridgeQuote {
    const { from, to } = state.route;
    const providerFeeRaw = (amountInRaw * state.providerFeeBps) / 10_000n;
    const netRaw = amountInRaw - providerFeeRaw;
    const scale = to.decimals - from.decimals;
    const amountOutRaw = scale >= 0 ? netRaw * 10n ** BigInt(scale) : netRaw / 10n ** BigInt(-scale);
    return {
      routeId: state.route.routeId,
      amountIn: fromRawAmount(amountInRaw, from.decimals),
      amountInRaw: String(amountInRaw),
      amountOut: fromRawAmount(amountOutRaw, to.decimals),
      amountOutRaw: String(amountOutRaw),
      providerFee: fromRawAmount(providerFeeRaw, from.decimals),
      providerFeeRaw: String(providerFeeRaw),
      gasFee: fromRawAmount(state.gasFeeRaw, from.decimals),
      gasFeeRaw: String(state.gasFeeRaw),
      gasFeeToken: from.symbol,
      etaSec: 4,
      expiresAt: new Date(this.now() + (this.#options.quoteTtlSec ?? 120) * 1000).toISOString(),
      limits: this.#limits(state),
    };
  }

  #construct(organisationId: string, body: string) {
    const parsed = this.#json(body);
    const errors: string[] = [];
    if (typeof parsed.userId !== 'string' || !parsed.userId) errors.push('userId must be a non-empty string');
    if (typeof parsed.routeId !== 'string' || !parsed.routeId)
      errors.push('routeId must be a non-empty string');
    const max = parsed.maxAmount === true;
    if (max && parsed.amount !== undefined) errors.push('give either amount or maxAmount, not both');
    if (!max && !(typeof parsed.amount === 'number' && parsed.amount > 0))
      errors.push('amount must be a positive number');
    if (errors.length > 0) throw this.#validation(errors);
    const user = this.#partnerUser(organisationId, parsed.userId as string);
    if (!user.wallet) throw new HttpFailure(400, 'WALLET_NOT_LINKED', 'the user has no linked wallet');
    const state = this.#usableRoute(parsed.routeId as string);
    if (state.providerFeeBps > state.feeCeilingBps) {
      throw new HttpFailure(
        503,
        'SERVICE_UNAVAILABLE',
        "the bridge fee is above the route's ceiling; retry shortly",
      );
    }
    const { from } = state.route;
    const balance = this.balance(user.userId, from.chainId, from.contractAddress);
    let amountInRaw: bigint;
    if (max) {
      const spendable = balance - state.gasFeeRaw;
      const limits = this.#limits(state);
      if (spendable < BigInt(limits.minAmountRaw)) {
        if (spendable <= 0n)
          throw this.#insufficient(state, BigInt(limits.minAmountRaw) + state.gasFeeRaw, balance);
        throw new HttpFailure(
          400,
          'BAD_REQUEST',
          `the largest amount is below the minimum of ${limits.minAmount}`,
        );
      }
      amountInRaw = spendable > BigInt(limits.maxAmountRaw) ? BigInt(limits.maxAmountRaw) : spendable;
    } else {
      amountInRaw = this.#amountRaw(state, rawNumber(body, 'amount') ?? String(parsed.amount));
      if (balance < amountInRaw + state.gasFeeRaw)
        throw this.#insufficient(state, amountInRaw + state.gasFeeRaw, balance);
    }
    const quote = this.#quote(state, amountInRaw);
    const nowSec = Math.floor(this.now() / 1000);
    const delegated = user.delegated.has(from.chainId);
    const bundle = buildBridgeBundle({
      route: state.route,
      wallet: user.wallet.address,
      amountInRaw,
      amountOutRaw: BigInt(quote.amountOutRaw),
      gasFeeRaw: state.gasFeeRaw,
      quoteTimestamp: nowSec,
      fillDeadline: nowSec + 3 * 3600 + 900,
      authorizationNonce: delegated ? null : (user.authNonces.get(from.chainId) ?? 0),
      delegate: DEFAULT_DELEGATES[0]!,
      sequence: BigInt(this.#seq),
    });
    const transferId = id('brt');
    const intentId = id('int');
    const stamp = new Date(this.now()).toISOString();
    const transfer: BridgeTransfer = {
      transferId,
      userId: user.userId,
      routeId: state.route.routeId,
      status: 'pending',
      provider: state.route.provider,
      providerRef: '',
      source: this.#side(state.route.from, quote.amountIn, quote.amountInRaw),
      destination: this.#side(state.route.to, quote.amountOut, quote.amountOutRaw),
      providerFee: quote.providerFee,
      providerFeeRaw: quote.providerFeeRaw,
      gasFee: quote.gasFee,
      gasFeeRaw: quote.gasFeeRaw,
      gasFeeToken: quote.gasFeeToken,
      srcTxHash: '',
      dstTxHash: null,
      refundTxHash: null,
      failureReason: null,
      createdAt: stamp,
      updatedAt: stamp,
    };
    this.#transfers.set(transferId, { transfer, organisationId, seq: this.#seq++, intentId });
    this.#intents.set(intentId, {
      intentId,
      transferId,
      userId: user.userId,
      bundle,
      quote,
      expiresAt: Date.parse(quote.expiresAt),
      spent: false,
    });
    return { transferId, intentId, bundle, quote };
  }

  #insufficient(state: RouteState, required: bigint, available: bigint): HttpFailure {
    const { from } = state.route;
    return new HttpFailure(
      400,
      'INSUFFICIENT_BALANCE',
      `the wallet holds ${fromRawAmount(available, from.decimals)} ${from.symbol} and needs ${fromRawAmount(required, from.decimals)} (amount + gas fee)`,
      {
        token: { address: from.contractAddress, symbol: from.symbol, decimals: from.decimals },
        required: String(required),
        available: String(available),
        shortfall: String(required - available),
      },
    );
  }

  #side(side: BridgeRoute['from'], amount: string, amountRaw: string) {
    return {
      chain: side.chain,
      chainId: side.chainId,
      token: side.symbol,
      tokenAddress: side.contractAddress,
      decimals: side.decimals,
      amount,
      amountRaw,
    };
  }

  async #send(organisationId: string, body: string) {
    const parsed = this.#json(body);
    const errors: string[] = [];
    for (const field of ['userId', 'intentId', 'signature']) {
      if (typeof parsed[field] !== 'string' || !parsed[field])
        errors.push(`${field} must be a non-empty string`);
    }
    if (errors.length > 0) throw this.#validation(errors);
    const user = this.#partnerUser(organisationId, parsed.userId as string);
    const intent = this.#intents.get(parsed.intentId as string);
    if (!intent || intent.userId !== user.userId)
      throw new HttpFailure(400, 'INTENT_NOT_FOUND', 'no such intent');
    const record = this.#transfers.get(intent.transferId)!;
    this.#expireIfDue(record);
    if (intent.spent) throw new HttpFailure(400, 'INTENT_NOT_FOUND', 'the intent was already submitted');
    if (this.now() >= intent.expiresAt) throw new HttpFailure(400, 'INTENT_NOT_FOUND', 'the intent expired');
    // Taken before any await, so that two concurrent submits of one intent cannot both pass.
    intent.spent = true;
    try {
      await this.#checkSignatures(
        intent,
        user.wallet!.address,
        parsed.signature as string,
        parsed.authorization,
      );
    } catch (error) {
      intent.spent = false;
      throw error;
    }
    const chainId = intent.bundle.chainId;
    if (intent.bundle.authorization) {
      user.delegated.add(chainId);
      user.authNonces.set(chainId, (user.authNonces.get(chainId) ?? 0) + 1);
    }
    this.#enter(record, 'submitted', {});
    this.#scheduleProgress(record);
    return { userOpHash: intent.bundle.userOpHash, transferId: record.transfer.transferId };
  }

  async #checkSignatures(
    intent: IntentRecord,
    wallet: Address,
    signature: string,
    authorization: unknown,
  ): Promise<void> {
    if (!/^0xff00[0-9a-fA-F]{130}$/.test(signature))
      throw this.#validation(['signature must be 0xff00 followed by 65 bytes']);
    const signer = await recoverAddress({
      hash: hashMessage({ raw: intent.bundle.userOpHash }),
      signature: `0x${signature.slice(6)}`,
    }).catch(() => undefined);
    if (!sameAddress(signer, wallet))
      throw this.#validation(["signature does not recover to the user's wallet"]);
    const wanted = intent.bundle.authorization;
    if (!wanted) {
      if (authorization !== undefined)
        throw this.#validation(['authorization must be omitted: the wallet is already delegated']);
      return;
    }
    const auth = authorization as { r?: unknown; s?: unknown; yParity?: unknown } | undefined;
    const word = /^0x[0-9a-fA-F]{64}$/;
    if (
      !auth ||
      typeof auth.r !== 'string' ||
      !word.test(auth.r) ||
      typeof auth.s !== 'string' ||
      !word.test(auth.s) ||
      (auth.yParity !== 0 && auth.yParity !== 1)
    ) {
      throw this.#validation(['authorization {r, s, yParity} is required: the wallet is not yet delegated']);
    }
    const delegatedBy = await recoverAuthorizationAddress({
      authorization: { address: wanted.address, chainId: wanted.chainId, nonce: wanted.nonce },
      signature: { r: auth.r as Hex, s: auth.s as Hex, yParity: auth.yParity },
    }).catch(() => undefined);
    if (!sameAddress(delegatedBy, wallet))
      throw this.#validation(["authorization does not recover to the user's wallet"]);
  }

  #scheduleProgress(record: TransferRecord): void {
    const auto = this.#options.autoAdvance;
    if (!auto) return;
    const timing = auto === true ? {} : auto;
    const step = (ms: number, from: string, to: TransferStatus, then?: () => void) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        if (record.transfer.status !== from) return;
        this.#enter(record, to, {});
        then?.();
      }, ms);
      timer.unref?.();
      this.#timers.add(timer);
    };
    step(timing.sourceConfirmedMs ?? 1_000, 'submitted', 'source_confirmed', () =>
      step(timing.deliveredMs ?? 2_000, 'source_confirmed', 'delivered'),
    );
  }

  #list(organisationId: string, query: URLSearchParams) {
    const userId = query.get('userId');
    const errors: string[] = [];
    if (!userId) errors.push('userId is required');
    const status = query.get('status');
    const limitText = query.get('limit');
    const limit = limitText === null ? 20 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      errors.push('limit must be an integer from 1 to 100');
    if (errors.length > 0) throw this.#validation(errors);
    this.#partnerUser(organisationId, userId!);
    const cursor = query.get('cursor');
    let after = Number.POSITIVE_INFINITY;
    if (cursor !== null) {
      const decoded = Number(Buffer.from(cursor, 'base64url').toString('utf8'));
      if (!Number.isInteger(decoded)) throw this.#validation(['cursor is not valid']);
      after = decoded;
    }
    const mine = [...this.#transfers.values()]
      .filter((record) => record.transfer.userId === userId && record.organisationId === organisationId)
      .map((record) => {
        this.#expireIfDue(record);
        return record;
      })
      .filter((record) => (status ? record.transfer.status === status : true) && record.seq < after)
      .sort((a, b) => b.seq - a.seq);
    const page = mine.slice(0, limit);
    const nextCursor =
      mine.length > limit ? Buffer.from(String(page.at(-1)!.seq)).toString('base64url') : null;
    return { data: page.map((record) => record.transfer), nextCursor };
  }

  // --- state machine -----------------------------------------------------------------------------

  #expireIfDue(record: TransferRecord): void {
    if (record.transfer.status !== 'pending') return;
    const intent = [...this.#intents.values()].find(
      (entry) => entry.transferId === record.transfer.transferId,
    );
    if (intent && !intent.spent && this.now() >= intent.expiresAt) this.#enter(record, 'expired', {});
  }

  #enter(
    record: TransferRecord,
    status: TransferStatus,
    details: { failureReason?: string | undefined },
  ): void {
    const transfer = record.transfer;
    transfer.status = status;
    transfer.updatedAt = new Date(this.now()).toISOString();
    const hash = () => `0x${randomBytes(32).toString('hex')}`;
    if (status === 'submitted') transfer.srcTxHash = hash();
    if (status === 'source_confirmed') {
      transfer.providerRef = String(1_000_000 + record.seq);
      this.#adjust(
        transfer,
        transfer.source,
        -(BigInt(transfer.source.amountRaw) + BigInt(transfer.gasFeeRaw)),
      );
    }
    if (status === 'delivered')
      this.#adjust(transfer, transfer.destination, BigInt(transfer.destination.amountRaw));
    if (status === 'delivered') transfer.dstTxHash = hash();
    if (status === 'refunded') {
      transfer.refundTxHash = hash();
      this.#adjust(transfer, transfer.source, BigInt(transfer.source.amountRaw));
    }
    if (status === 'failed') transfer.failureReason = details.failureReason ?? 'the operation reverted';
    if (CALLBACK_STATES.has(status)) this.#callback(structuredClone(transfer));
  }

  #adjust(transfer: BridgeTransfer, side: BridgeTransfer['source'], delta: bigint): void {
    const user = this.#users.get(transfer.userId);
    if (!user) return;
    const key = `${side.chainId}:${side.tokenAddress.toLowerCase()}`;
    user.balances.set(key, (user.balances.get(key) ?? 0n) + delta);
  }

  #callback(body: BridgeTransfer): void {
    this.#callbackLog.push(body);
    const target = this.#callbackTarget;
    if (!target) return;
    const deliver =
      typeof target === 'function'
        ? async () => target(body)
        : async () => {
            await fetch(target, {
              method: 'POST',
              headers: { ...this.#callbackHeaders, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
          };
    deliver().catch(() => {
      // Delivery retries are not specified; a failed delivery is dropped, as a partner must tolerate.
    });
  }

  /** The arguments of a public method, checked by its schema in ./args.ts, ids resolved. */
  #check<K extends keyof SimulatorSchemas>(
    method: K,
    args: Record<string, unknown>,
  ): z.output<SimulatorSchemas[K]> {
    return parseArgs(this.#args[method], args, `PartnerSimulator.${method}`) as z.output<SimulatorSchemas[K]>;
  }
}

/**
 * Creates a simulator of the whole specified service.
 *
 * @example
 * import { createPartnerSimulator } from 'partner-s2s-sdk/testing';
 * const sim = createPartnerSimulator();
 * const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
 */
export function createPartnerSimulator(options: SimulatorOptions = {}): PartnerSimulator {
  return new PartnerSimulator(options);
}
