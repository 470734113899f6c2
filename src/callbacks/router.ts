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
 * What stands in the queue for a delivery run at once (the handlers'): the deliveries of the same
 * transfer that come meanwhile wait on its end, and a promise of that end is made only for them.
 */
class Turn {
  #ended: Promise<void> | undefined;
  #resolve: (() => void) | undefined;
  #over = false;

  get ended(): Promise<void> {
    if (this.#over) return RESOLVED;
    this.#ended ??= new Promise<void>((resolve) => {
      this.#resolve = resolve;
    });
    return this.#ended;
  }

  end(): void {
    this.#over = true;
    this.#resolve?.();
  }
}

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
  readonly #queues = new Map<string, Promise<unknown> | Turn>();
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
      dispatch: (body) => this.#accept(body),
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
    if (parsed.kind === 'unknown') return Promise.resolve(this.#dispatchUnknown(parsed.body));
    if (parsed.kind === 'unexpected_state')
      return Promise.resolve(this.#ignore('unexpected_state', parsed.transfer, undefined));
    return this.#enqueue(parsed.kind, parsed.transfer);
  }

  /**
   * The handlers' `dispatch`: a delivery with nothing under way for its transfer runs at once, and
   * its outcome is returned as it is when it settled at once (the router's own store, listeners
   * that return at once), so a delivery waits on no turn it does not need. Its transfer is taken
   * meanwhile: a listener that dispatches the same transfer again still queues behind it.
   */
  #accept(body: string): DispatchOutcome | Promise<DispatchOutcome> {
    const parsed: ParsedCallback = parseBridgeCallback(body, { strict: this.#strict });
    if (parsed.kind === 'unknown') return this.#dispatchUnknown(parsed.body);
    const { transfer } = parsed;
    if (parsed.kind === 'unexpected_state') return this.#ignore('unexpected_state', transfer, undefined);
    const id = transfer.transferId;
    if (this.#queues.has(id)) return this.#enqueue(parsed.kind, transfer);
    const turn = new Turn();
    this.#queues.set(id, turn);
    const end = () => {
      if (this.#queues.get(id) === turn) this.#queues.delete(id);
      turn.end();
    };
    let result: DispatchOutcome | Promise<DispatchOutcome>;
    try {
      result = this.#deliver(this.#claimRequest(transfer), parsed.kind, transfer);
    } catch (error) {
      end();
      throw error;
    }
    if (result instanceof Promise) result.then(end, end);
    else end();
    return result;
  }

  #claimRequest(transfer: BridgeTransfer): ClaimRequest {
    return {
      transferId: transfer.transferId,
      status: transfer.status,
      rank: stateRank(transfer.status) ?? 0,
      final: FINAL_STATES.has(transfer.status),
      ttlMs: this.#claimTtlMs,
    };
  }

  /** A bridge delivery, behind whatever is under way for its transfer. */
  #enqueue(kind: BridgeCallbackKind, transfer: BridgeTransfer): Promise<DispatchOutcome> {
    const id = transfer.transferId;
    const request = this.#claimRequest(transfer);
    const previous = this.#queues.get(id);
    const before = previous === undefined ? RESOLVED : previous instanceof Turn ? previous.ended : previous;
    // Always a turn later, even with nothing under way for the transfer: `dispatch` returns before
    // any listener runs, and a listener that dispatches the same transfer again queues behind it.
    const run = before.then(() => this.#deliver(request, kind, transfer));
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
  #dispatchUnknown(body: unknown): DispatchOutcome | Promise<DispatchOutcome> {
    const failures: unknown[] = [];
    const emitting = this.#listeners.emit(undefined, 'unknown', failures, [
      { event: 'unknown', args: [body] },
    ]);
    const done = (): DispatchOutcome => {
      if (failures.length > 0 && !this.#acknowledgeListenerErrors)
        throw this.#listenerFailure(undefined, 'unknown', failures);
      return { outcome: 'unknown', body };
    };
    return emitting ? emitting.then(done) : done();
  }

  /**
   * One bridge delivery, its turn come: claim the state, run the listeners, record it. Each step
   * is waited on only when it returned a promise: the router's own store and listeners that return
   * at once take no turn of the event loop, and no timer.
   */
  #deliver(
    request: ClaimRequest,
    kind: BridgeCallbackKind,
    transfer: BridgeTransfer,
  ): DispatchOutcome | Promise<DispatchOutcome> {
    const claiming = this.#claimState(request, kind);
    return claiming instanceof Promise
      ? claiming.then((claim) => this.#claimed(claim, request, kind, transfer))
      : this.#claimed(claiming, request, kind, transfer);
  }

  #claimed(
    claim: ClaimResult,
    request: ClaimRequest,
    kind: BridgeCallbackKind,
    transfer: BridgeTransfer,
  ): DispatchOutcome | Promise<DispatchOutcome> {
    if (claim.outcome === 'duplicate' || claim.outcome === 'stale') {
      return this.#ignore(claim.outcome, transfer, claim.previous);
    }
    if (claim.outcome === 'busy') {
      const busy = new CallbackBusyError({ transferId: request.transferId, kind });
      this.#listeners.error(busy);
      throw busy;
    }
    const { token } = claim;
    // Listeners first, then the record: a state is recorded only once every listener for it
    // succeeded, so a failed or hung delivery is dispatched again when the service retries.
    const failures: unknown[] = [];
    const emitting = this.#listeners.emit(request.transferId, kind, failures, [
      { event: kind, args: [transfer] },
      { event: 'transfer', args: [transfer, kind] },
    ]);
    if (!emitting) return this.#record(request, token, kind, transfer, failures);
    return emitting.then(
      () => this.#record(request, token, kind, transfer, failures),
      async (error: unknown) => {
        await this.#releaseQuietly(request, token);
        throw error;
      },
    );
  }

  /** The listeners settled: the state recorded, or given back when one of them failed. */
  #record(
    request: ClaimRequest,
    token: string,
    kind: BridgeCallbackKind,
    transfer: BridgeTransfer,
    failures: readonly unknown[],
  ): DispatchOutcome | Promise<DispatchOutcome> {
    if (failures.length > 0 && !this.#acknowledgeListenerErrors) {
      const released = this.#releaseQuietly(request, token);
      if (!released) throw this.#listenerFailure(request.transferId, kind, failures);
      return released.then(() => {
        throw this.#listenerFailure(request.transferId, kind, failures);
      });
    }
    const outcome: DispatchOutcome = { outcome: 'dispatched', kind, transfer };
    if (this.#memory) {
      this.#memory.commit(request, token);
      return outcome;
    }
    return this.#listeners
      .bounded('store', request.transferId, kind, () => this.#store!.commit(request, token))
      .then(() => outcome);
  }

  /** Sums up the listeners that failed for one delivery, reported on `error`: the error to throw. */
  #listenerFailure(
    transferId: string | undefined,
    kind: string,
    failures: readonly unknown[],
  ): CallbackListenerError {
    const failed = new CallbackListenerError({ transferId, kind, causes: failures });
    this.#listeners.error(failed);
    return failed;
  }

  /** Claims a state: at once in the router's own store, else in the partner's within the bound. */
  #claimState(request: ClaimRequest, kind: string): ClaimResult | Promise<ClaimResult> {
    if (this.#memory) return this.#memory.claim(request);
    return this.#listeners.bounded('store', request.transferId, kind, () => this.#store!.claim(request));
  }

  /**
   * Gives the claim back so that the service's retry need not wait for it to expire: at once in
   * the router's own store. A release that fails is reported; the claim then expires on its own,
   * so nothing is lost either way.
   */
  #releaseQuietly(request: ClaimRequest, token: string): Promise<void> | undefined {
    if (this.#memory) {
      this.#memory.release(request, token);
      return undefined;
    }
    return this.#listeners
      .bounded('store', request.transferId, undefined, () => this.#store!.release(request, token))
      .catch((error: unknown) => {
        if (!(error instanceof CallbackTimeoutError)) this.#listeners.error(error);
      });
  }

  #ignore(
    reason: IgnoredReason,
    transfer: BridgeTransfer,
    previous: string | undefined,
  ): DispatchOutcome | Promise<DispatchOutcome> {
    const emitting = this.#listeners.emit(transfer.transferId, 'ignored', undefined, [
      { event: 'ignored', args: [{ reason, transfer, previous }] },
    ]);
    const outcome: DispatchOutcome = { outcome: 'ignored', reason, transfer };
    return emitting ? emitting.then(() => outcome) : outcome;
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
