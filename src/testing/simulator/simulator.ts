import { parseArgs } from '../../core/args.js';
import { API_PREFIX } from '../../core/defaults.js';
import type { BridgeRoute, BridgeTransfer, TransferStatus } from '../../schemas/bridge.js';
import type { Address, Hex } from '../../schemas/common.js';
import { SimAdmin } from './admin.js';
import { ADMIN_PREFIX, adminApi } from './admin-http.js';
import { simulatorOptionsArgs } from './args.js';
import type { CallbackDelivery, CallbackSigning } from './callbacks.js';
import { createCore, type SimCore } from './core.js';
import { partnerApi, type ReceivedRequest } from './endpoints.js';
import { listenOn, simulatorFetch } from './http.js';
import { openApiMount } from './openapi.js';
import { DEFAULT_ROUTE_TOKENS } from './routes.js';

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
  /**
   * Sign every callback POSTed to a URL the Standard Webhooks way, as a service that signs so
   * would: `webhook-id` (one per delivery, the same on its retries), `webhook-timestamp` (this
   * machine's clock at each try, which `advanceClock` does not move) and `webhook-signature`
   * (`v1,<base64>` by each secret, space-separated when several, as during a rotation). Secrets in
   * the `whsec_<base64>` form; the receiving router checks them with `standardWebhooks`.
   *
   * @example
   * createPartnerSimulator({ callbacks: url, callbackSigning: { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } });
   */
  callbackSigning?: CallbackSigning;
  /** Create a demo organisation, credential and funded user (`sim.demo`). @default true */
  demo?: boolean;
  /**
   * Draw ids, secrets, wallet keys and hashes from a deterministic stream instead of the system's
   * random bytes: the same seed gives the same demo credentials and wallet. For tests only; a
   * seeded secret is no secret.
   *
   * @example
   * createPartnerSimulator({ seed: 42 }).demo.credentials.clientId; // the same on every run
   */
  seed?: number;
  /**
   * A token every call of the admin API (`sim.adminPath`, over `sim.fetch` and `sim.listen()`)
   * must present as `Authorization: Bearer <adminToken>`; a call without it, or with another, is a
   * 401. Without it the admin API is guarded only by being reachable on loopback (see
   * docs/simulator.md). Printable ASCII without spaces.
   *
   * @example
   * const sim = createPartnerSimulator({ adminToken: 'a-long-random-string' });
   */
  adminToken?: string;
  /**
   * Chain mode: the simulator is the bundler on a real chain (anvil, or anvil forking Base, whose
   * contracts sit at the addresses of the simulator's Base route). Construct reads the wallet's
   * token balance, EIP-7702 delegation and EntryPoint nonce there; a submit sends the EntryPoint's
   * `handleOps` (a type-4 transaction carrying the authorization when the batch has one) from the
   * bundler account: the node's first unlocked account (`eth_accounts`), or `bundlerPrivateKey`'s.
   * What the EntryPoint refuses (`AA24 signature error`, `AA25 invalid account nonce`, …) fails the
   * transfer with the chain's reason and sends nothing; a sent operation is `submitted` with the
   * transaction's hash as `srcTxHash`, then `source_confirmed` from its receipt, or `failed` naming
   * the revert when its calls reverted (its nonce spent). The destination side stays simulated:
   * delivered `autoAdvance.deliveredMs` (2 s) after the source is confirmed, unless `autoAdvance:
   * false` (then `sim.advance`). Only routes that start on the node's chain can be built. Balances
   * are the chain's, so `fund` and `balance` throw: fund the wallet on the chain. The demo user is
   * funded nowhere.
   *
   * @example
   * const sim = createPartnerSimulator({ chain: { rpcUrl: 'http://127.0.0.1:8545' } });
   * // the demo wallet needs the route's token on that chain before a construct
   */
  chain?: { rpcUrl: string; bundlerPrivateKey?: Hex };
}

/** The demo data the simulator holds (`sim.demo`). */
export interface SimDemo {
  organisationId: string;
  credentials: { clientId: string; clientSecret: string };
  userId: string;
  wallet: { address: Address; privateKey: Hex };
}

/** A user the simulator created, with its wallet's key so tests can sign for it. */
export interface SimUser {
  userId: string;
  /** `null` when the user has no linked wallet. */
  wallet: { address: Address; privateKey: Hex } | null;
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
  // A facade: the state lives in ./simulator/ by concern, the checked operations in its admin.ts.
  /** The base URL to give the client when using `fetch` (no server is needed for it). */
  readonly baseUrl = 'http://simulator.localhost';
  // Not readonly: `reset()` (and the admin API's /reset) starts again from a fresh state.
  #core: SimCore;
  #admin: SimAdmin;
  readonly #options: SimulatorOptions;
  /**
   * Requests seen: method, path below /api/v1/s2s, and `at`, when it arrived (epoch ms, real time,
   * not moved by `advanceClock`), e.g. to count a client's reads per second.
   */
  readonly requests: ReceivedRequest[] = [];
  /** Ready-made organisation, credential and funded user, unless `demo: false`. */
  demo: SimDemo;
  /** Where the admin HTTP API is mounted, below the base URL (see docs/simulator.md). */
  readonly adminPath = ADMIN_PREFIX;
  /** A fetch function that answers as the service would. */
  readonly fetch: (input: Request | URL | string, init?: RequestInit) => Promise<Response>;

  constructor(input: SimulatorOptions = {}) {
    const options = (parseArgs(simulatorOptionsArgs, input, 'PartnerSimulator options') ??
      {}) as SimulatorOptions;
    this.#options = options;
    this.#core = createCore(options);
    this.#admin = new SimAdmin(this.#core);
    // Both mounts read the state of the moment, so that a reset reaches requests already routed.
    this.fetch = simulatorFetch([
      { prefix: API_PREFIX, handle: (request) => partnerApi(this.#core, this.requests).handle(request) },
      openApiMount(),
      adminApi({
        admin: () => this.#admin,
        deliveries: () => this.callbackDeliveries,
        routes: () => this.routes(),
        reset: () => {
          this.reset();
          return this.demo ?? null;
        },
        adminToken: options.adminToken,
      }),
    ]);
    this.demo = this.#createDemo();
  }

  #createDemo(): SimDemo {
    if (this.#options.demo === false) return undefined as never;
    const org = this.createOrganisation({ scopes: ['all:read', 'all:write'] });
    const credentials = this.createCredential({ organisationId: org, scopes: ['all:read', 'all:write'] });
    const user = this.createUser({ organisationId: org });
    const { base, bsc } = DEFAULT_ROUTE_TOKENS;
    const demo = { organisationId: org, credentials, userId: user.userId, wallet: user.wallet! };
    // In chain mode the wallet holds what the chain says it holds.
    if (this.#options.chain) return demo;
    this.fund(user.userId, base.chainId, base.contractAddress, 1_000n * 10n ** BigInt(base.decimals));
    this.fund(user.userId, bsc.chainId, bsc.contractAddress, 1_000n * 10n ** BigInt(bsc.decimals));
    return demo;
  }

  /**
   * Starts again: every organisation, credential, user, transfer, route setting and callback is
   * dropped, timers and callback retries stop, and the demo data is created anew (the same again
   * with a `seed`). Options stay as given.
   *
   * @example
   * sim.reset();
   * const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
   */
  reset(): void {
    const target = this.#core.callbacks.target;
    this.close();
    // The callback target of the moment survives: a partner's receiver is set up once per run.
    const { callbacks: _given, ...rest } = this.#options;
    this.#core = createCore(target ? { ...rest, callbacks: target } : rest);
    this.#admin = new SimAdmin(this.#core);
    this.requests.length = 0;
    this.demo = this.#createDemo();
  }

  // --- clock -------------------------------------------------------------------------------------

  /** The simulator's time in ms; moves with the real clock plus whatever `advanceClock` added. */
  now(): number {
    return this.#core.clock.now();
  }

  /** Moves the simulator's clock forward: tokens and quotes expire accordingly. */
  advanceClock(ms: number): void {
    this.#admin.run('advanceClock', { ms });
  }

  // --- administration ----------------------------------------------------------------------------

  /** An organisation (a partner) holding `scopes`; returns its id. */
  createOrganisation(params: { scopes: string[]; id?: string }): string {
    return this.#admin.run('createOrganisation', { params });
  }

  /** Withdraws a scope (or wildcard) from an organisation: every token loses it at once. */
  withdrawOrganisationScope(organisationId: string, scope: string): void {
    this.#admin.run('withdrawOrganisationScope', { organisationId, scope });
  }

  /** Suspends or reactivates an organisation: its credentials and tokens stop working at once. */
  setOrganisationActive(organisationId: string, active: boolean): void {
    this.#admin.run('setOrganisationActive', { organisationId, active });
  }

  /** A credential of an organisation. The secret is returned here only, as the service shows it once. */
  createCredential(params: { organisationId: string; scopes: string[] }): {
    clientId: string;
    clientSecret: string;
  } {
    return this.#admin.run('createCredential', { params });
  }

  /** Revokes a credential: it and every token issued to it stop working at once. */
  revokeCredential(clientId: string): void {
    this.#admin.run('revokeCredential', { clientId });
  }

  /** Issues a new secret; the old one keeps working for `graceMs`. The new secret is shown once. */
  rotateCredential(clientId: string, params: { graceMs: number }): { clientSecret: string } {
    return this.#admin.run('rotateCredential', { clientId, params });
  }

  /**
   * A user of an organisation, with a new linked wallet (a real key) unless `wallet: false`; or,
   * given an address, with that wallet linked, whose key the simulator never sees: your KMS's
   * signer, to prove it signs what the chain accepts (see `chain`).
   *
   * @example
   * const { userId } = sim.createUser({ organisationId: sim.demo.organisationId, wallet: kmsSigner.address });
   */
  createUser(params: { organisationId: string; wallet?: boolean }): SimUser;
  createUser(params: { organisationId: string; wallet: Address | string }): {
    userId: string;
    wallet: { address: Address; privateKey: null };
  };
  createUser(params: { organisationId: string; wallet?: boolean | Address | string }): {
    userId: string;
    wallet: { address: Address; privateKey: Hex | null } | null;
  } {
    return this.#admin.run('createUser', { params });
  }

  /**
   * Sets a user's balance of a token on a chain, in base units. In chain mode an `ArgumentError`:
   * the balances are the chain's, fund the wallet there.
   */
  fund(userId: string, chainId: number, token: string, raw: bigint): void {
    this.#admin.run('fund', { userId, chainId, token, raw });
  }

  /** A user's balance of a token on a chain, in base units. In chain mode an `ArgumentError`: read the chain. */
  balance(userId: string, chainId: number, token: string): bigint {
    return this.#admin.run('balance', { userId, chainId, token });
  }

  /** Every route, as `GET /bridge/routes` shows it. */
  routes(): BridgeRoute[] {
    return this.#core.routes.list();
  }

  /**
   * Changes how a route behaves: paused (400), unreachable (`limits: null`, 503), fees, and its
   * limits in source base units (`minAmountRaw`, `maxAmountRaw`; an amount outside is a 400), and
   * the time a signer is given (`signWindowSec`: while a quote lives less, construct answers 503
   * "quote expires too soon to sign"; 0, the default, is off), and the SpokePool function its
   * batches deposit through (`depositFunction`: `deposit`, the default, or `depositV3`; the verifier
   * accepts both).
   *
   * @example
   * sim.configureRoute(routeId, { providerFeeBps: 25n }); // the next construct is priced higher
   * sim.configureRoute(routeId, { signWindowSec: 300 }); // quotes of 120 s are refused with 503
   * sim.configureRoute(routeId, { depositFunction: 'depositV3' }); // batches deposit with address arguments
   */
  configureRoute(
    routeId: string,
    change: {
      paused?: boolean;
      reachable?: boolean;
      gasFeeRaw?: bigint;
      providerFeeBps?: bigint;
      feeCeilingBps?: bigint;
      minAmountRaw?: bigint;
      maxAmountRaw?: bigint;
      /** While a quote lives less than this many seconds, construct answers 503; 0 is off. */
      signWindowSec?: number;
      /** The SpokePool function batches deposit through: `deposit` (the default) or `depositV3`. */
      depositFunction?: 'deposit' | 'depositV3';
    },
  ): void {
    this.#admin.run('configureRoute', { routeId, change });
  }

  /** Where callbacks go from now on. */
  setCallbacks(target: SimulatorOptions['callbacks']): void {
    this.#admin.run('setCallbacks', { target });
  }

  /** Every callback body sent so far, in order. */
  get callbacks(): readonly BridgeTransfer[] {
    return this.#core.callbacks.log;
  }

  /**
   * Every callback delivery with its attempts, state and the receiver's last status or error. A
   * delivery a receiver refused (non-2xx) or could not take is retried up to 5 times, 1 s, 2 s,
   * 4 s, 8 s apart, then marked `failed`.
   *
   * @example
   * const failed = sim.callbackDeliveries.filter((delivery) => delivery.state === 'failed');
   */
  get callbackDeliveries(): readonly CallbackDelivery[] {
    return this.#core.callbacks.deliveries;
  }

  /** A transfer as the service holds it now. */
  transfer(transferId: string): BridgeTransfer {
    return this.#admin.run('transfer', { transferId });
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
    return this.#admin.run('advance', { transferId, status, details });
  }

  /** Stops timers of automatic progress and callback retries. */
  close(): void {
    this.#core.transfers.close();
    this.#core.callbacks.close();
  }

  // --- transport ---------------------------------------------------------------------------------

  /**
   * Serves the simulator over HTTP, on 127.0.0.1 unless `host` says otherwise. The admin API is
   * served too, under `url + sim.adminPath`: anyone who can reach the port can administer it, so
   * bind another host only on purpose.
   *
   * @example
   * const server = await sim.listen();
   * const client = new PartnerClient({ baseUrl: server.url, ...sim.demo.credentials });
   * await server.close();
   */
  async listen(port = 0, host?: string): Promise<{ url: string; close: () => Promise<void> }> {
    const checked = this.#admin.check('listen', { port, host });
    return listenOn(this.fetch, checked.port, checked.host);
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
