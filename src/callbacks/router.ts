import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkListener } from '../core/args.js';
import { DEFAULTS } from '../core/defaults.js';
import { CallbackBusyError, CallbackListenerError, CallbackTimeoutError } from '../errors/callback-errors.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import { type BridgeCallbackKind, FINAL_STATES, stateRank } from '../schemas/states.js';
import { type CallbackRouterEvents, ROUTER_EVENTS } from './events.js';
import { createDeliveryHandler, webHandler } from './handler.js';
import { Listeners } from './listeners.js';
import { nodeListener } from './node.js';
import { type CallbackRouterOptions, routerSettings } from './options.js';
import type { CallbackDispatcher, DispatchOutcome, IgnoredReason } from './outcomes.js';
import { type ParsedCallback, parseBridgeCallback } from './parse.js';
import { type CallbackStore, type ClaimRequest, type ClaimResult, MemoryClaims } from './store.js';

export type { CallbackRouterEvents } from './events.js';
export type { CallbackRouterOptions } from './options.js';
export type {
  CallbackRequest,
  DispatchOutcome,
  IgnoredCallback,
  IgnoredReason,
  RejectedDelivery,
} from './outcomes.js';

const RESOLVED = Promise.resolve();

/**
 * Routes bridge callbacks to typed listeners, once each and never backwards for one transfer.
 * Mount `fetchHandler` (Hono, Bun, Deno, workers) or `nodeHandler` (node:http, Express).
 *
 * @example
 * const router = createCallbackRouter({ authenticate: (r) => sameSecret(r.headers.get('x-token'), TOKEN) });
 * router.on('bridge_transfer_delivered', (transfer) => credit(transfer.userId, transfer.destination.amount));
 * router.on('bridge_transfer_refunded', (transfer) => notifyRefund(transfer));
 * http.createServer(router.nodeHandler).listen(8080);
 */
export class CallbackRouter implements CallbackDispatcher {
  /** The partner's store, called within `listenerTimeoutMs`; or else the router's own, in memory. */
  readonly #store: CallbackStore | undefined;
  readonly #memory: MemoryClaims | undefined;
  readonly #strict: boolean;
  readonly #claimTtlMs: number;
  readonly #acknowledgeListenerErrors: boolean;
  /** Deliveries for one transfer are handled one after another, so the order check sees each. */
  readonly #queues = new Map<string, Promise<unknown>>();
  /** The emitter is private, so nothing reaches a listener around the dedupe. */
  readonly #listeners: Listeners;

  constructor(options: CallbackRouterOptions) {
    const settings = routerSettings(options);
    this.#store = settings.store;
    this.#memory = settings.store ? undefined : new MemoryClaims(DEFAULTS.callbacks.storeCapacity);
    this.#strict = settings.strict;
    this.#claimTtlMs = settings.claimTtlMs;
    this.#acknowledgeListenerErrors = settings.acknowledgeListenerErrors;
    this.#listeners = new Listeners(settings.listenerTimeoutMs, settings.warn);
    const { authenticate } = settings;
    const handle = createDeliveryHandler({
      maxBodyBytes: settings.maxBodyBytes,
      bodyTimeoutMs: settings.bodyTimeoutMs,
      authenticate,
      bounded: (work) => this.#listeners.bounded('authenticate', undefined, undefined, work),
      dispatcher: this,
      reportError: (error) => this.#listeners.error(error),
      reportRejected: (rejected) => this.#listeners.rejected(rejected),
    });
    const withHeaders = authenticate !== undefined;
    this.fetchHandler = webHandler(handle, withHeaders);
    this.nodeHandler = nodeListener(handle, {
      withHeaders,
      onWriteError: (error) => this.#listeners.error(error),
    });
  }

  /**
   * Adds a listener for one event: a callback kind, `transfer`, `unknown`, `ignored` or `error`.
   *
   * @throws ArgumentError for an unknown event name or a listener that is not a function.
   * @example
   * router.on('bridge_transfer_delivered', (transfer) => credit(transfer.userId, transfer.destination.amount));
   */
  on<E extends keyof CallbackRouterEvents>(event: E, listener: CallbackRouterEvents[E]): this {
    checkListener('CallbackRouter.on', ROUTER_EVENTS, event, listener);
    this.#listeners.subscribe(event, listener, false);
    return this;
  }

  /**
   * Like `on`, for the next time the event fires only.
   *
   * @example
   * router.once('bridge_transfer_delivered', (transfer) => console.log('first delivery', transfer.transferId));
   */
  once<E extends keyof CallbackRouterEvents>(event: E, listener: CallbackRouterEvents[E]): this {
    checkListener('CallbackRouter.once', ROUTER_EVENTS, event, listener);
    this.#listeners.subscribe(event, listener, true);
    return this;
  }

  /**
   * Removes a listener added with `on` or `once` (every time it was added).
   *
   * @example
   * router.off('transfer', onTransfer);
   */
  off<E extends keyof CallbackRouterEvents>(event: E, listener: CallbackRouterEvents[E]): this {
    checkListener('CallbackRouter.off', ROUTER_EVENTS, event, listener);
    this.#listeners.unsubscribe(event, listener);
    return this;
  }

  /**
   * Parses one callback body and dispatches it. Use it directly when the framework already read
   * (and authenticated) the body; the handlers call it for you. The state is recorded after the
   * listeners settled, so a delivery that timed out is dispatched again when it comes again.
   *
   * @throws CallbackParseError for a broken body; CallbackListenerError when a listener threw or
   *   rejected (of a callback kind, `transfer` or `unknown`; unless `acknowledgeListenerErrors`);
   *   CallbackTimeoutError when listeners or the store did not settle within `listenerTimeoutMs`;
   *   whatever the store threw.
   * @example
   * app.post('/callbacks', async (c) => c.json(await router.dispatch(await c.req.json())));
   */
  dispatch(body: unknown): Promise<DispatchOutcome> {
    // Not an async function: the handler awaits the returned promise itself, and an async wrapper
    // around it would cost each delivery further turns of the microtask queue.
    try {
      return this.#route(body);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `dispatch`, throwing a parse error at once. */
  #route(body: unknown): Promise<DispatchOutcome> {
    const parsed: ParsedCallback = parseBridgeCallback(body, { strict: this.#strict });
    if (parsed.kind === 'unknown') return this.#dispatchUnknown(parsed.body);
    const { transfer } = parsed;
    if (parsed.kind === 'unexpected_state') return this.#ignore('unexpected_state', transfer, undefined);
    const kind = parsed.kind;
    const id = transfer.transferId;
    const request: ClaimRequest = {
      transferId: id,
      status: transfer.status,
      rank: stateRank(transfer.status) ?? 0,
      final: FINAL_STATES.has(transfer.status),
      ttlMs: this.#claimTtlMs,
    };
    // Always a turn later, even with nothing under way for the transfer: `dispatch` returns before
    // any listener runs, and a listener that dispatches the same transfer again queues behind it.
    const run = (this.#queues.get(id) ?? RESOLVED).then(() => this.#deliver(request, kind, transfer));
    // A timed-out step rejects `run` on time, so the transfer's next delivery does not wait on it.
    const forget = () => {
      if (this.#queues.get(id) === settled) this.#queues.delete(id);
    };
    const settled: Promise<void> = run.then(forget, forget);
    this.#queues.set(id, settled);
    return run;
  }

  /**
   * A body that is no bridge transfer. Portfolio callbacks come this way: a failed listener is
   * answered as a bridge one is, so that the service delivers the body again.
   */
  async #dispatchUnknown(body: unknown): Promise<DispatchOutcome> {
    const failures: unknown[] = [];
    const emitting = this.#listeners.emit(undefined, 'unknown', failures, [
      { event: 'unknown', args: [body] },
    ]);
    if (emitting) await emitting;
    this.#throwFailures(undefined, 'unknown', failures);
    return { outcome: 'unknown', body };
  }

  /**
   * One bridge delivery, its turn come: claim the state, run the listeners, record it. Each step
   * is awaited only when it returned a promise: the router's own store and listeners that return
   * at once take no turn of the event loop, and no timer.
   */
  async #deliver(
    request: ClaimRequest,
    kind: BridgeCallbackKind,
    transfer: BridgeTransfer,
  ): Promise<DispatchOutcome> {
    const id = request.transferId;
    const claiming = this.#claimState(request, kind);
    const claim = claiming instanceof Promise ? await claiming : claiming;
    if (claim.outcome === 'duplicate' || claim.outcome === 'stale') {
      return this.#ignore(claim.outcome, transfer, claim.previous);
    }
    if (claim.outcome === 'busy') {
      const busy = new CallbackBusyError({ transferId: id, kind });
      this.#listeners.error(busy);
      throw busy;
    }
    const { token } = claim;
    // Listeners first, then the record: a state is recorded only once every listener for it
    // succeeded, so a failed or hung delivery is dispatched again when the service retries.
    const failures: unknown[] = [];
    const emitting = this.#listeners.emit(id, kind, failures, [
      { event: kind, args: [transfer] },
      { event: 'transfer', args: [transfer, kind] },
    ]);
    if (emitting) {
      try {
        await emitting;
      } catch (error) {
        await this.#releaseQuietly(request, token);
        throw error;
      }
    }
    if (failures.length > 0 && !this.#acknowledgeListenerErrors) {
      await this.#releaseQuietly(request, token);
      this.#throwFailures(id, kind, failures);
    }
    if (this.#memory) this.#memory.commit(request, token);
    else await this.#listeners.bounded('store', id, kind, () => this.#store!.commit(request, token));
    return { outcome: 'dispatched', kind, transfer };
  }

  /** Sums up the listeners that failed for one delivery, unless they are to be acknowledged. */
  #throwFailures(transferId: string | undefined, kind: string, failures: readonly unknown[]): void {
    if (failures.length === 0 || this.#acknowledgeListenerErrors) return;
    const failed = new CallbackListenerError({ transferId, kind, causes: failures });
    this.#listeners.error(failed);
    throw failed;
  }

  /** Claims a state: at once in the router's own store, else in the partner's within the bound. */
  #claimState(request: ClaimRequest, kind: string): ClaimResult | Promise<ClaimResult> {
    if (this.#memory) return this.#memory.claim(request);
    return this.#listeners.bounded('store', request.transferId, kind, () => this.#store!.claim(request));
  }

  /**
   * Gives the claim back so that the service's retry need not wait for it to expire. A release that
   * fails is reported; the claim then expires on its own, so nothing is lost either way.
   */
  async #releaseQuietly(request: ClaimRequest, token: string): Promise<void> {
    if (this.#memory) return this.#memory.release(request, token);
    try {
      await this.#listeners.bounded('store', request.transferId, undefined, () =>
        this.#store!.release(request, token),
      );
    } catch (error) {
      if (!(error instanceof CallbackTimeoutError)) this.#listeners.error(error);
    }
  }

  async #ignore(
    reason: IgnoredReason,
    transfer: BridgeTransfer,
    previous: string | undefined,
  ): Promise<DispatchOutcome> {
    const emitting = this.#listeners.emit(transfer.transferId, 'ignored', undefined, [
      { event: 'ignored', args: [{ reason, transfer, previous }] },
    ]);
    if (emitting) await emitting;
    return { outcome: 'ignored', reason, transfer };
  }

  /**
   * A web `Request` → `Response` handler: works as it is in Hono, Bun, Deno and workers.
   *
   * @example
   * app.post('/callbacks', (c) => router.fetchHandler(c.req.raw));   // Hono
   * Bun.serve({ fetch: router.fetchHandler });
   */
  readonly fetchHandler: (request: Request) => Promise<Response>;

  /**
   * A node:http / Express handler: the same handler as `fetchHandler`, adapted. With Express, a
   * body already read by `express.raw()`, `express.text()` or `express.json()` is used as it is.
   *
   * @example
   * http.createServer(router.nodeHandler).listen(8080);
   * app.post('/callbacks', express.raw({ type: '*\/*' }), router.nodeHandler);
   */
  readonly nodeHandler: (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => void;
}

/**
 * Creates a callback router. `authenticate` is required: a check of each delivery, or `'none'`.
 *
 * @example
 * const router = createCallbackRouter({ authenticate: (req) => checkSecret(req.headers) });
 * router.on('bridge_transfer_delivered', (transfer) => { … });
 */
export function createCallbackRouter(options: CallbackRouterOptions): CallbackRouter {
  return new CallbackRouter(options);
}
