import type { IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod';
import { byteCount, checkListener, durationMs, parseArgs, withMethods } from '../core/args.js';
import {
  CallbackBusyError,
  CallbackListenerError,
  CallbackTimeoutError,
  type CallbackTimeoutStage,
} from '../errors/callback-errors.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import { FINAL_STATES, stateRank } from '../schemas/states.js';
import { type CallbackRequest, createDeliveryHandler, webHandler } from './handler.js';
import { nodeListener } from './node.js';
import {
  type BridgeCallbackKind,
  CALLBACK_KINDS,
  type ParsedCallback,
  parseBridgeCallback,
} from './parse.js';
import {
  type CallbackStore,
  type ClaimRequest,
  type ClaimResult,
  DEFAULT_CAPACITY,
  MemoryClaims,
} from './store.js';

export type { CallbackRequest } from './handler.js';

/** Why a callback was not dispatched. */
export type IgnoredReason = 'duplicate' | 'stale' | 'unexpected_state';

/** A bridge callback the router did not dispatch, as its `ignored` event reports it. */
export interface IgnoredCallback {
  reason: IgnoredReason;
  transfer: BridgeTransfer;
  /** The state already dispatched for this transfer, for `duplicate` and `stale`. */
  previous: string | undefined;
}

type KindListeners = { [K in BridgeCallbackKind]: (transfer: BridgeTransfer) => void | Promise<void> };

/** The router's events: one per callback kind, plus `transfer`, `unknown`, `ignored` and `error`. */
export interface CallbackRouterEvents extends KindListeners {
  /** Every dispatched bridge callback, whatever its kind. */
  transfer: (transfer: BridgeTransfer, kind: BridgeCallbackKind) => void | Promise<void>;
  /** A body that is not a bridge transfer (portfolio callbacks share the endpoint). */
  unknown: (body: unknown) => void | Promise<void>;
  /** A duplicate, a state older than one already dispatched, or a state with no callback kind. */
  ignored: (ignored: IgnoredCallback) => void | Promise<void>;
  /**
   * A delivery `authenticate` refused (answered 401), or whose check threw. Nothing of its body is
   * trusted, so only the request is shown: log it to find a misconfigured secret.
   */
  rejected: (rejected: RejectedDelivery) => void;
  /**
   * A listener threw or rejected (the other listeners still ran; then a `CallbackListenerError`
   * sums the delivery up), a delivery did not settle within `listenerTimeoutMs` (a
   * `CallbackTimeoutError`), another process held the transfer (a `CallbackBusyError`), or the
   * store failed.
   */
  error: (error: unknown) => void;
}

/** A delivery refused by `authenticate`, as the `rejected` event reports it. */
export interface RejectedDelivery {
  /** What `authenticate` was shown (its `raw` request included). */
  request: CallbackRequest;
  /** What the check threw, when it threw rather than answering false. */
  error: unknown;
}

/**
 * Options of `createCallbackRouter`. Only `authenticate` is required.
 *
 * @example
 * const router = createCallbackRouter({
 *   authenticate: (req) => req.headers.get('x-callback-token') === process.env.CALLBACK_TOKEN, // constant time in production
 *   store: createRedisCallbackStore({ client: redis }), // a fleet dispatches each state once
 *   listenerTimeoutMs: 5_000,
 * });
 */
export interface CallbackRouterOptions {
  /**
   * Remembers the last dispatched state per transfer, to drop duplicates and late states. Share
   * one between processes (`partner-s2s-sdk/redis`) and the fleet dispatches each state once.
   * @default a MemoryCallbackStore of 50,000 transfers
   */
  store?: CallbackStore;
  /**
   * How long a delivery holds the store's claim on its transfer: past it, a process that died
   * mid-delivery no longer blocks the transfer. Keep it above `listenerTimeoutMs`.
   * @default listenerTimeoutMs * 3
   */
  claimTtlMs?: number;
  /**
   * Answer 2xx and record the state even when a listener threw (the behaviour before 0.2). By
   * default a throwing listener leaves the state unrecorded and the delivery is answered 500, so
   * the service delivers it again: at least once, which needs listeners idempotent per
   * `(transferId, status)`.
   * @default false
   * @example
   * createCallbackRouter({ authenticate, acknowledgeListenerErrors: true }); // at most once
   */
  acknowledgeListenerErrors?: boolean;
  /**
   * Decides whether a delivery is genuine; required. The specification defines no delivery
   * authentication, so the SDK invents none: check a shared secret header (in constant time), an
   * HMAC of `body`, or mTLS details here. A rejected delivery never reaches a listener and is
   * answered 401; a check that does not settle within `listenerTimeoutMs` is answered 503.
   *
   * `'none'` accepts every delivery. Only for tests, or when something in front of the handler
   * already authenticated the request: anyone who can reach the endpoint can then forge callbacks.
   *
   * @example
   * const expected = Buffer.from(process.env.CALLBACK_TOKEN!);
   * authenticate: (req) => {
   *   const given = Buffer.from(req.headers.get('x-callback-token') ?? '');
   *   return given.length === expected.length && crypto.timingSafeEqual(given, expected);
   * }
   */
  authenticate: ((request: CallbackRequest) => boolean | Promise<boolean>) | 'none';
  /**
   * How long the listeners of one delivery, the `authenticate` check and each store call may take.
   * Past it the delivery is answered 503 and its state is not recorded (the service's redelivery
   * dispatches it again), the `error` event gets a `CallbackTimeoutError`, the transfer's later
   * deliveries go ahead, and whatever the late work does afterwards is ignored.
   *
   * @default 10000
   * @example
   * createCallbackRouter({ authenticate, listenerTimeoutMs: 30_000 }); // a slow ledger write
   */
  listenerTimeoutMs?: number;
  /**
   * How long reading one request body may take; a slower body is answered 408 and the connection
   * closed, whatever the server's own `requestTimeout` (even 0).
   *
   * @default 10000
   * @example
   * createCallbackRouter({ authenticate, bodyTimeoutMs: 5_000 });
   */
  bodyTimeoutMs?: number;
  /**
   * Largest body accepted, in bytes; larger deliveries are answered 413.
   * @default 1048576 (1 MiB)
   */
  maxBodyBytes?: number;
  /** Reject bridge callbacks with fields or states the SDK does not know. @default false */
  strict?: boolean;
}

/** What one delivery led to. */
export type DispatchOutcome =
  | { outcome: 'dispatched'; kind: BridgeCallbackKind; transfer: BridgeTransfer }
  | { outcome: 'ignored'; reason: IgnoredReason; transfer: BridgeTransfer }
  | { outcome: 'unknown'; body: unknown };

const MIB = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;

/** The names `on`, `once` and `off` take: a typo would otherwise never fire. */
const ROUTER_EVENTS: readonly (keyof CallbackRouterEvents)[] = [
  ...CALLBACK_KINDS,
  'transfer',
  'unknown',
  'ignored',
  'rejected',
  'error',
];

// Built on the first createCallbackRouter, not at import.
const routerOptionsSchema = z.lazy(() =>
  z.looseObject({
    store: withMethods<CallbackStore>(
      ['claim', 'commit', 'release'],
      'must have claim, commit and release methods (get/set stores: see the CHANGELOG for 0.2)',
    ).optional(),
    claimTtlMs: durationMs.optional(),
    acknowledgeListenerErrors: z.boolean({ error: 'must be true or false' }).optional(),
    authenticate: z.custom<CallbackRouterOptions['authenticate']>(
      (value) => typeof value === 'function' || value === 'none',
      "is required: a function that checks each delivery, or 'none' to accept every delivery (anyone who can reach the endpoint can then forge callbacks)",
    ),
    maxBodyBytes: byteCount.optional(),
    strict: z.boolean({ error: 'must be true or false' }).optional(),
    listenerTimeoutMs: durationMs.optional(),
    bodyTimeoutMs: durationMs.optional(),
  }),
);

/** Whether the work of one bounded step may still have effects; cleared once it timed out. */
interface Run {
  live: boolean;
}

/** One subscription; `once` ones are dropped as they are called. */
interface Subscription {
  listener: (...args: never[]) => unknown;
  once: boolean;
}

const NONE: readonly Subscription[] = [];
const RESOLVED = Promise.resolve();

/** One event to emit, with its listeners' arguments. */
interface Emission {
  event: keyof CallbackRouterEvents;
  args: readonly unknown[];
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
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
export class CallbackRouter {
  /** The partner's store, called within `listenerTimeoutMs`; or else the router's own, in memory. */
  readonly #store: CallbackStore | undefined;
  readonly #memory: MemoryClaims | undefined;
  readonly #authenticate: Exclude<CallbackRouterOptions['authenticate'], 'none'> | undefined;
  readonly #maxBodyBytes: number;
  readonly #strict: boolean;
  readonly #timeoutMs: number;
  readonly #bodyTimeoutMs: number;
  readonly #claimTtlMs: number;
  readonly #acknowledgeListenerErrors: boolean;
  /** Deliveries for one transfer are handled one after another, so the order check sees each. */
  readonly #queues = new Map<string, Promise<unknown>>();
  /**
   * The emitter is private, so nothing reaches a listener around the dedupe. Each list is replaced,
   * never changed in place, so a delivery walks the listeners as they were when it began.
   */
  readonly #subscriptions = new Map<keyof CallbackRouterEvents, readonly Subscription[]>();

  constructor(options: CallbackRouterOptions) {
    const checked = parseArgs(routerOptionsSchema, options ?? {}, 'createCallbackRouter');
    this.#store = checked.store;
    this.#memory = checked.store ? undefined : new MemoryClaims(DEFAULT_CAPACITY);
    this.#authenticate = checked.authenticate === 'none' ? undefined : checked.authenticate;
    this.#maxBodyBytes = checked.maxBodyBytes ?? MIB;
    this.#strict = checked.strict ?? false;
    this.#timeoutMs = checked.listenerTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#bodyTimeoutMs = checked.bodyTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#claimTtlMs = checked.claimTtlMs ?? this.#timeoutMs * 3;
    this.#acknowledgeListenerErrors = checked.acknowledgeListenerErrors ?? false;
    const handle = createDeliveryHandler({
      maxBodyBytes: this.#maxBodyBytes,
      bodyTimeoutMs: this.#bodyTimeoutMs,
      authenticate: this.#authenticate,
      bounded: (work) => this.#bounded('authenticate', undefined, undefined, work),
      dispatch: (body) => this.dispatch(body),
      reportError: (error) => this.#reportError(error),
      reportRejected: (rejected) => this.#reportRejected(rejected),
    });
    const withHeaders = this.#authenticate !== undefined;
    this.fetchHandler = webHandler(handle, withHeaders);
    this.nodeHandler = nodeListener(handle, {
      withHeaders,
      onWriteError: (error) => this.#reportError(error),
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
    this.#subscribe(event, { listener, once: false });
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
    this.#subscribe(event, { listener, once: true });
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
    this.#unsubscribe(event, (subscription) => subscription.listener === listener);
    return this;
  }

  #subscribe(event: keyof CallbackRouterEvents, subscription: Subscription): void {
    this.#subscriptions.set(event, [...(this.#subscriptions.get(event) ?? []), subscription]);
  }

  #unsubscribe(event: keyof CallbackRouterEvents, match: (subscription: Subscription) => boolean): void {
    const list = this.#subscriptions.get(event);
    if (!list) return;
    const kept = list.filter((subscription) => !match(subscription));
    if (kept.length > 0) this.#subscriptions.set(event, kept);
    else this.#subscriptions.delete(event);
  }

  /** Whether a listener in a walked list is to be called: a `once` one only by the first walk. */
  #claim(event: keyof CallbackRouterEvents, subscription: Subscription): boolean {
    if (!subscription.once) return true;
    // Two deliveries may walk the same list at once: only the first one calls it.
    if (!this.#subscriptions.get(event)?.includes(subscription)) return false;
    this.#unsubscribe(event, (other) => other === subscription);
    return true;
  }

  /**
   * Parses one callback body and dispatches it. Use it directly when the framework already read
   * (and authenticated) the body; the handlers call it for you. The state is recorded after the
   * listeners settled, so a delivery that timed out is dispatched again when it comes again.
   *
   * @throws CallbackParseError for a broken body; CallbackTimeoutError when listeners or the store
   *   did not settle within `listenerTimeoutMs`; whatever the store threw.
   * @example
   * app.post('/callbacks', async (c) => c.json(await router.dispatch(await c.req.json())));
   */
  async dispatch(body: unknown): Promise<DispatchOutcome> {
    const parsed: ParsedCallback = parseBridgeCallback(body, { strict: this.#strict });
    if (parsed.kind === 'unknown') {
      const emitting = this.#emit(undefined, 'unknown', undefined, [
        { event: 'unknown', args: [parsed.body] },
      ]);
      if (emitting) await emitting;
      return { outcome: 'unknown', body: parsed.body };
    }
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
    // Each step is awaited only when it returned a promise: the router's own store and listeners
    // that return at once take no turn of the event loop, and no timer.
    const deliver = async (): Promise<DispatchOutcome> => {
      const claiming = this.#claimState(request, kind);
      const claim = claiming instanceof Promise ? await claiming : claiming;
      if (claim.outcome === 'duplicate' || claim.outcome === 'stale') {
        return this.#ignore(claim.outcome, transfer, claim.previous);
      }
      if (claim.outcome === 'busy') {
        const busy = new CallbackBusyError({ transferId: id, kind });
        this.#reportError(busy);
        throw busy;
      }
      const { token } = claim;
      // Listeners first, then the record: a state is recorded only once every listener for it
      // succeeded, so a failed or hung delivery is dispatched again when the service retries.
      const failures: unknown[] = [];
      const emitting = this.#emit(id, kind, failures, [
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
        const failed = new CallbackListenerError({ transferId: id, kind, causes: failures });
        this.#reportError(failed);
        throw failed;
      }
      if (this.#memory) this.#memory.commit(request, token);
      else await this.#bounded('store', id, kind, () => this.#store!.commit(request, token));
      return { outcome: 'dispatched', kind, transfer };
    };
    // Always a turn later, even with nothing under way for the transfer: `dispatch` returns before
    // any listener runs, and a listener that dispatches the same transfer again queues behind it.
    const run = (this.#queues.get(id) ?? RESOLVED).then(deliver);
    // A timed-out step rejects `run` on time, so the transfer's next delivery does not wait on it.
    const forget = () => {
      if (this.#queues.get(id) === settled) this.#queues.delete(id);
    };
    const settled: Promise<void> = run.then(forget, forget);
    this.#queues.set(id, settled);
    return run;
  }

  /** Claims a state: at once in the router's own store, else in the partner's within the bound. */
  #claimState(request: ClaimRequest, kind: string): ClaimResult | Promise<ClaimResult> {
    if (this.#memory) return this.#memory.claim(request);
    return this.#bounded('store', request.transferId, kind, () => this.#store!.claim(request));
  }

  /**
   * Gives the claim back so that the service's retry need not wait for it to expire. A release that
   * fails is reported; the claim then expires on its own, so nothing is lost either way.
   */
  async #releaseQuietly(request: ClaimRequest, token: string): Promise<void> {
    if (this.#memory) return this.#memory.release(request, token);
    try {
      await this.#bounded('store', request.transferId, undefined, () => this.#store!.release(request, token));
    } catch (error) {
      if (!(error instanceof CallbackTimeoutError)) this.#reportError(error);
    }
  }

  async #ignore(
    reason: IgnoredReason,
    transfer: BridgeTransfer,
    previous: string | undefined,
  ): Promise<DispatchOutcome> {
    const emitting = this.#emit(transfer.transferId, 'ignored', undefined, [
      { event: 'ignored', args: [{ reason, transfer, previous }] },
    ]);
    if (emitting) await emitting;
    return { outcome: 'ignored', reason, transfer };
  }

  /**
   * Calls the listeners of each emission in turn; one that fails is reported (and collected into
   * `failures`, when given) and does not stop the rest. Listeners that return at once are called
   * with no timer: nothing could interrupt them anyway. From the first that returns a promise, the
   * rest of the step runs within what is left of `listenerTimeoutMs`; `undefined` when there was
   * nothing to wait for.
   */
  #emit(
    transferId: string | undefined,
    kind: string,
    failures: unknown[] | undefined,
    emissions: readonly Emission[],
  ): Promise<void> | undefined {
    const started = performance.now();
    for (let e = 0; e < emissions.length; e++) {
      const { event, args } = emissions[e]!;
      const list = this.#subscriptions.get(event) ?? NONE;
      for (let i = 0; i < list.length; i++) {
        const pending = this.#call(event, list[i]!, args, failures);
        if (pending === undefined) continue;
        const left = this.#timeoutMs - (performance.now() - started);
        return this.#bounded(
          'listeners',
          transferId,
          kind,
          async (run) => {
            await this.#settle(run, pending, failures);
            await this.#emitSafely(run, event, list, i + 1, args, failures);
            for (const later of emissions.slice(e + 1)) {
              const laterList = this.#subscriptions.get(later.event) ?? NONE;
              await this.#emitSafely(run, later.event, laterList, 0, later.args, failures);
            }
          },
          left,
        );
      }
    }
    return undefined;
  }

  /** Calls one listener; its promise when it returned one, reporting a synchronous failure. */
  #call(
    event: keyof CallbackRouterEvents,
    subscription: Subscription,
    args: readonly unknown[],
    failures: unknown[] | undefined,
  ): PromiseLike<unknown> | undefined {
    if (!this.#claim(event, subscription)) return undefined;
    try {
      const result = (subscription.listener as (...a: unknown[]) => unknown)(...args);
      return isThenable(result) ? result : undefined;
    } catch (error) {
      this.#reportError(error);
      failures?.push(error);
      return undefined;
    }
  }

  /** Waits for one listener's promise; a rejection is reported unless the step timed out first. */
  async #settle(run: Run, pending: PromiseLike<unknown>, failures: unknown[] | undefined): Promise<void> {
    try {
      await pending;
    } catch (error) {
      if (!run.live) return;
      this.#reportError(error);
      failures?.push(error);
    }
  }

  /**
   * Runs partner code (listeners, the check, the store) within `listenerTimeoutMs`. On timeout the
   * step rejects with a `CallbackTimeoutError`, reported on `error`; the work is left to finish on
   * its own and nothing it does later is reported.
   */
  #bounded<T>(
    stage: CallbackTimeoutStage,
    transferId: string | undefined,
    kind: string | undefined,
    work: (run: Run) => T | Promise<T>,
    ms = this.#timeoutMs,
  ): Promise<T> {
    const run: Run = { live: true };
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        run.live = false;
        const error = new CallbackTimeoutError({ stage, timeoutMs: this.#timeoutMs, transferId, kind });
        this.#reportError(error);
        reject(error);
      }, ms);
      Promise.resolve()
        .then(() => work(run))
        .then(
          (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(error);
          },
        );
    });
  }

  /** `#emit`'s async rest: the listeners of `list` from `from` on, each awaited in turn. */
  async #emitSafely(
    run: Run,
    event: keyof CallbackRouterEvents,
    list: readonly Subscription[],
    from: number,
    args: readonly unknown[],
    failures: unknown[] | undefined,
  ): Promise<void> {
    for (let i = from; i < list.length; i++) {
      if (!run.live) return;
      const pending = this.#call(event, list[i]!, args, failures);
      if (pending !== undefined) await this.#settle(run, pending, failures);
    }
  }

  #reportRejected(rejected: RejectedDelivery): void {
    for (const subscription of this.#subscriptions.get('rejected') ?? NONE) {
      if (!this.#claim('rejected', subscription)) continue;
      try {
        (subscription.listener as (rejected: RejectedDelivery) => void)(rejected);
      } catch (error) {
        this.#reportError(error);
      }
    }
  }

  #reportError(error: unknown): void {
    for (const subscription of this.#subscriptions.get('error') ?? NONE) {
      if (!this.#claim('error', subscription)) continue;
      try {
        (subscription.listener as (error: unknown) => void)(error);
      } catch {
        // An error listener that throws has nobody left to tell.
      }
    }
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
