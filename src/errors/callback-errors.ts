import { PartnerError } from './base.js';

/** The part of a delivery that did not settle within `listenerTimeoutMs`. */
export type CallbackTimeoutStage = 'authenticate' | 'store' | 'listeners';

/**
 * A callback delivery did not settle within the router's `listenerTimeoutMs`: a listener, the
 * `authenticate` check or the store hung. The delivery was answered 503 and its state not recorded,
 * so the service's redelivery dispatches it again; what the late work does afterwards is ignored.
 *
 * @example
 * router.on('error', (e) => {
 *   if (e instanceof CallbackTimeoutError) log.warn(`${e.kind} of ${e.transferId} hung in ${e.stage}`);
 * });
 */
export class CallbackTimeoutError extends PartnerError {
  override name = 'CallbackTimeoutError' as const;
  /** The transfer, when the body had been read that far (never for `authenticate`). */
  readonly transferId: string | undefined;
  /** The callback kind (`bridge_transfer_…`), `unknown` or `ignored`, when known. */
  readonly kind: string | undefined;
  readonly stage: CallbackTimeoutStage;
  readonly timeoutMs: number;

  constructor(init: {
    stage: CallbackTimeoutStage;
    timeoutMs: number;
    transferId?: string | undefined;
    kind?: string | undefined;
  }) {
    const what = init.transferId === undefined ? 'a callback delivery' : `${init.kind} of ${init.transferId}`;
    super(`${init.stage} did not settle within ${init.timeoutMs} ms for ${what}`);
    this.stage = init.stage;
    this.timeoutMs = init.timeoutMs;
    this.transferId = init.transferId;
    this.kind = init.kind;
  }
}
