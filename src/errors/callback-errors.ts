import type { Issue } from '../schemas/issues.js';
import { PartnerError } from './base.js';

/**
 * A callback body that is broken JSON or a bridge transfer with missing or mistyped fields.
 *
 * @example
 * try { parseBridgeCallback(body); } catch (e) { if (e instanceof CallbackParseError) return new Response(null, { status: 400 }); }
 */
export class CallbackParseError extends PartnerError {
  override name = 'CallbackParseError' as const;
  readonly issues: Issue[];

  constructor({ message, issues = [], cause }: { message: string; issues?: Issue[]; cause?: unknown }) {
    super(message, { cause });
    this.issues = issues;
  }
}

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

/**
 * A listener threw or rejected for a dispatched callback (or, with `kind` `unknown`, for a body
 * that is not a bridge transfer), so its state was not recorded and the delivery was answered
 * 500: the service delivers it again and the listeners run again. Each listener's own error was
 * reported on `error` first; this one carries them as `causes`, the first of them also as `cause`
 * (its reason ends the message).
 *
 * @example
 * router.on('error', (e) => {
 *   if (e instanceof CallbackListenerError) log.warn(`${e.kind} of ${e.transferId} will be redelivered`);
 * });
 */
export class CallbackListenerError extends PartnerError {
  override name = 'CallbackListenerError' as const;
  /** The transfer; undefined for a body that is not a bridge transfer (`kind` `unknown`). */
  readonly transferId: string | undefined;
  readonly kind: string;
  /** What the failing listeners threw, in the order they ran. */
  readonly causes: readonly unknown[];

  constructor(init: { transferId: string | undefined; kind: string; causes: readonly unknown[] }) {
    const what =
      init.transferId === undefined
        ? 'a body that is not a bridge transfer'
        : `${init.kind} of ${init.transferId}`;
    // The first failure is the `cause`, so that the message ends with why it failed.
    super(
      `${init.causes.length} listener(s) failed for ${what}; not recorded`,
      init.causes.length > 0 ? { cause: init.causes[0] } : undefined,
    );
    this.transferId = init.transferId;
    this.kind = init.kind;
    this.causes = init.causes;
  }
}

/**
 * Another process (or delivery) holds the store's claim on this transfer: the delivery was answered
 * 503 so that the service delivers it again once the other one finished.
 *
 * @example
 * router.on('error', (e) => { if (e instanceof CallbackBusyError) metrics.increment('callbacks.busy'); });
 */
export class CallbackBusyError extends PartnerError {
  override name = 'CallbackBusyError' as const;
  readonly transferId: string;
  readonly kind: string;

  constructor(init: { transferId: string; kind: string }) {
    super(`${init.kind} of ${init.transferId} is being handled elsewhere; try again later`);
    this.transferId = init.transferId;
    this.kind = init.kind;
  }
}
