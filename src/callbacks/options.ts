import * as z from 'zod';
import { byteCount, durationMs, loggerOption, logLevelOption, withMethods } from '../core/args.js';
import type { Logger, LogLevel } from '../core/logger.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import type { CallbackRequest } from './handler.js';
import { type BridgeCallbackKind, CALLBACK_KINDS } from './parse.js';
import type { CallbackStore } from './store.js';

/** The router's public shapes: its options, its events and what a delivery led to. */

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
  /**
   * A body that is not a bridge transfer (portfolio callbacks share the endpoint). Answered as a
   * bridge callback is: a listener that throws or rejects gets the delivery answered 500 (unless
   * `acknowledgeListenerErrors`), so the service delivers it again; nothing deduplicates these
   * bodies, so make the listener idempotent.
   */
  unknown: (body: unknown) => void | Promise<void>;
  /** A duplicate, a state older than one already dispatched, or a state with no callback kind. */
  ignored: (ignored: IgnoredCallback) => void | Promise<void>;
  /**
   * A delivery `authenticate` refused (answered 401), or whose check threw. Nothing of its body is
   * trusted, so only the request is shown: log it to find a misconfigured secret. Not awaited;
   * what it throws or rejects is logged and reported on `error`.
   */
  rejected: (rejected: RejectedDelivery) => void | Promise<void>;
  /**
   * A listener threw or rejected (the other listeners still ran; then a `CallbackListenerError`
   * sums the delivery up), `authenticate` threw, a delivery did not settle within
   * `listenerTimeoutMs` (a `CallbackTimeoutError`), another process held the transfer (a
   * `CallbackBusyError`), or the store failed. Not awaited; what an `error` listener throws or
   * rejects is logged at `warn`, and changes nothing else.
   */
  error: (error: unknown) => void | Promise<void>;
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
   * default a throwing listener (of a callback kind, `transfer` or `unknown`) leaves the state
   * unrecorded and the delivery is answered 500, so the service delivers it again: at least once,
   * which needs listeners idempotent per `(transferId, status)`.
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
  /**
   * Where the router writes a warning when something the partner handed it (a listener,
   * `authenticate`, the logger itself) throws or rejects: anything with `debug`, `info`, `warn`
   * and `error`. The warning names the listener's event (or `authenticate`) and passes on what it
   * threw; what the logger throws in turn is dropped.
   * @default console
   * @example
   * createCallbackRouter({ authenticate, logger: pino(), logLevel: 'warn' });
   */
  logger?: Logger;
  /**
   * How much the router logs: from `warn` on, a line for each listener or `authenticate` that
   * threw or rejected.
   * @default the `PARTNER_S2S_LOG` environment variable, else 'off'
   * @example
   * createCallbackRouter({ authenticate, logLevel: 'warn' }); // to console
   */
  logLevel?: LogLevel;
}

/** What one delivery led to. */
export type DispatchOutcome =
  | { outcome: 'dispatched'; kind: BridgeCallbackKind; transfer: BridgeTransfer }
  | { outcome: 'ignored'; reason: IgnoredReason; transfer: BridgeTransfer }
  | { outcome: 'unknown'; body: unknown };

/** The names `on`, `once` and `off` take: a typo would otherwise never fire. */
export const ROUTER_EVENTS: readonly (keyof CallbackRouterEvents)[] = [
  ...CALLBACK_KINDS,
  'transfer',
  'unknown',
  'ignored',
  'rejected',
  'error',
];

// Built on the first createCallbackRouter, not at import.
export const routerOptionsSchema = z.lazy(() =>
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
    logger: loggerOption.optional(),
    logLevel: logLevelOption.optional(),
  }),
);
