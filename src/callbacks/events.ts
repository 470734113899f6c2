import type { BridgeTransfer } from '../schemas/bridge.js';
import { type BridgeCallbackKind, CALLBACK_KINDS } from '../schemas/states.js';
import type { IgnoredCallback, RejectedDelivery } from './outcomes.js';

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

/** The names `on`, `once` and `off` take: a typo would otherwise never fire. */
export const ROUTER_EVENTS: readonly (keyof CallbackRouterEvents)[] = [
  ...CALLBACK_KINDS,
  'transfer',
  'unknown',
  'ignored',
  'rejected',
  'error',
];
