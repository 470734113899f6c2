import { PartnerError } from './base.js';

/** Where the transfer tracker failed. */
/**
 * Where the transfer tracker failed. `mismatch`: an observation (a delivery, a listed transfer)
 * named another user or transfer than the tracked record; it was not taken.
 */
export type TrackerErrorStage = 'track' | 'store' | 'read' | 'listener' | 'discover' | 'mismatch';

/**
 * The transfer tracker could not do one step: record a transfer (`track`; from `bridge.execute`,
 * nothing was signed), reach its store, read a transfer, or run a listener in time. On the
 * tracker's `error` event nothing is lost (an observation refused as another user's or transfer's
 * (`mismatch`) is not taken, and the record stays due): the step is tried again later. `cause` holds what failed
 * underneath.
 *
 * @example
 * tracker.on('error', (e) => { if (e instanceof TrackerError) log.warn(e.stage, e.transferId, e.message); });
 */
export class TrackerError extends PartnerError {
  override name = 'TrackerError' as const;
  readonly stage: TrackerErrorStage;
  /** The transfer concerned, when there is one. */
  readonly transferId: string | undefined;

  constructor(init: {
    stage: TrackerErrorStage;
    message: string;
    transferId?: string | undefined;
    cause?: unknown;
  }) {
    super(init.message, { cause: init.cause });
    this.stage = init.stage;
    this.transferId = init.transferId;
  }
}
