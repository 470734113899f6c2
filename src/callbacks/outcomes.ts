import type { BridgeTransfer } from '../schemas/bridge.js';
import type { BridgeCallbackKind } from '../schemas/states.js';

/**
 * What a delivery is and what it led to, apart from the code that dispatches it: the HTTP handler
 * and the listeners are written against these types, and the router is one `CallbackDispatcher`.
 */

/** What `authenticate` is shown of a delivery: enough for a shared header, an IP allowlist or an HMAC. */
export interface CallbackRequest {
  method: string;
  url: string;
  headers: Headers;
  /** The raw body as text. */
  body: string;
  /** The peer address, when the handler knows it (node:http). */
  remoteAddress: string | undefined;
  /** The original request object (`Request` or `IncomingMessage`), for mTLS details and the like. */
  raw: unknown;
}

/** A delivery refused by `authenticate`, as the `rejected` event reports it. */
export interface RejectedDelivery {
  /** What `authenticate` was shown (its `raw` request included). */
  request: CallbackRequest;
  /** What the check threw, when it threw rather than answering false. */
  error: unknown;
}

/** Why a callback was not dispatched. */
export type IgnoredReason = 'duplicate' | 'stale' | 'unexpected_state';

/** A bridge callback the router did not dispatch, as its `ignored` event reports it. */
export interface IgnoredCallback {
  reason: IgnoredReason;
  transfer: BridgeTransfer;
  /** The state already dispatched for this transfer, for `duplicate` and `stale`. */
  previous: string | undefined;
}

/** What one delivery led to. */
export type DispatchOutcome =
  | { outcome: 'dispatched'; kind: BridgeCallbackKind; transfer: BridgeTransfer }
  | { outcome: 'ignored'; reason: IgnoredReason; transfer: BridgeTransfer }
  | { outcome: 'unknown'; body: unknown };

/**
 * What the HTTP handler needs of whatever dispatches a body it accepted: `CallbackRouter` is one.
 *
 * @example
 * const dispatcher: CallbackDispatcher = { dispatch: async (body) => ({ outcome: 'unknown', body }) };
 */
export interface CallbackDispatcher {
  /**
   * Settles with what the delivery led to once it is recorded; rejects (a `CallbackParseError`,
   * a `CallbackListenerError`, …) when the delivery is to be answered with an error.
   */
  dispatch(body: unknown): Promise<DispatchOutcome>;
}

/**
 * How the HTTP handler hands on a body it accepted: `CallbackDispatcher.dispatch` fits, and the
 * router hands one that returns the outcome itself when the delivery settled at once (its own
 * store, listeners that return at once), so that a delivery takes no turn it does not need.
 * A parse error may be thrown rather than rejected.
 *
 * @example
 * const dispatch: Dispatch = (body) => dispatcher.dispatch(body);
 */
export type Dispatch = (body: string) => DispatchOutcome | Promise<DispatchOutcome>;
