import { checkListener } from '../core/args.js';
import { PartnerListeners, quiet } from '../core/isolate.js';
import type { Logger } from '../core/logger.js';
import { settleWithin } from '../core/time.js';
import { TrackerError } from '../errors/tracker-errors.js';
import type { WaitPhase } from '../flows/wait.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import type { UserOperationConfirmation } from '../schemas/chain.js';
import type { TransferStatus } from '../schemas/states.js';

/** A phase that passed its deadline (`overdue`). */
export interface TransferOverdue {
  /** The transfer as last observed. */
  transfer: BridgeTransfer;
  phase: WaitPhase;
  /** When the phase was first observed. */
  since: Date;
  /**
   * For a transfer held in `submitted`: what the chain says of its operation, when the tracker
   * knows the operation (recorded by `execute`, or `track` given the bundle) and the client has an
   * RPC for its chain (`chains`). Undefined otherwise, or when the chain could not be read in time
   * (reported on `error`).
   */
  onChain?: UserOperationConfirmation;
}

/** The tracker's events, the names `on` and `off` take. */
export interface TransferTrackerEvents {
  /**
   * A state newer than the last one dispatched for this transfer, in rank order, never backwards;
   * `previous` is that last one (`undefined` for the first). Awaited: when it throws or rejects the
   * state is dispatched again later, never recorded as done.
   */
  transition: (transfer: BridgeTransfer, previous: TransferStatus | undefined) => unknown;
  /** After the `transition` of a final state (delivered, refunded, failed, expired). Awaited likewise. */
  final: (transfer: BridgeTransfer) => unknown;
  /** A phase passed its deadline: once per phase. Awaited likewise. */
  overdue: (overdue: TransferOverdue) => unknown;
  /** The discovery sweep adopted a transfer nobody tracked (its states follow as `transition`s). */
  discovered: (transfer: BridgeTransfer) => unknown;
  /** A read, the store or a listener failed: nothing is lost, the step is tried again later. */
  error: (error: unknown) => unknown;
}

export type TrackerEventName = keyof TransferTrackerEvents;

const EVENTS: readonly TrackerEventName[] = ['transition', 'final', 'overdue', 'discovered', 'error'];

/**
 * The tracker's policy over its listeners, held by the core's `PartnerListeners`: `dispatch`
 * awaits each listener in turn, each within `listenerTimeoutMs` and only under a lease just
 * renewed, and says whether all succeeded; `notify` calls them without waiting. A failure is
 * logged and reported on `error` (an `error` listener's own only logged).
 */
export class TrackerEvents {
  readonly #held: PartnerListeners<TransferTrackerEvents>;
  readonly #logger: Logger | undefined;
  readonly #boundMs: number;

  constructor(logger: Logger | undefined, boundMs: number) {
    this.#logger = logger;
    this.#boundMs = boundMs;
    this.#held = new PartnerListeners<TransferTrackerEvents>(
      (what, error) => this.#warn(`${what} threw or rejected`, error),
      'error',
    );
  }

  on(where: string, event: unknown, listener: unknown): void {
    checkListener(where, EVENTS, event, listener);
    this.#held.on(event as TrackerEventName, listener as never);
  }

  off(where: string, event: unknown, listener: unknown): void {
    checkListener(where, EVENTS, event, listener);
    this.#held.off(event as TrackerEventName, listener as never);
  }

  /**
   * Calls the listeners of `event` one after another; true when every one returned or resolved in
   * time (a hung one counts as failed, and what it does after its bound is dropped). `hold` is
   * asked right before each listener whether the caller still holds the transfer (a step renews
   * its lease): once it answers false no listener is called, and false is answered.
   */
  async dispatch(
    event: TrackerEventName,
    transferId: string,
    args: readonly unknown[],
    hold: () => Promise<boolean>,
  ): Promise<boolean> {
    const step = { failures: [] as unknown[], what: `a '${event}' listener of ${transferId}` };
    const timedOut = () =>
      new TrackerError({
        stage: 'listener',
        transferId,
        message: `a '${event}' listener of ${transferId} did not settle within ${this.#boundMs} ms`,
      });
    for (const listener of this.#held.listeners(event)) {
      if (!(await hold())) return false;
      const pending = this.#held.call(event, listener, args, step);
      if (pending) await this.#held.settle(event, settleWithin(pending, this.#boundMs, timedOut), step);
    }
    return step.failures.length === 0;
  }

  /** Tells the `discovered` listeners, without waiting for them. */
  discovered(transfer: BridgeTransfer): void {
    this.#held.emit('discovered', transfer);
  }

  error(error: unknown): void {
    this.#held.error(error);
  }

  /** Reports a failure of the tracker's own work: a warning, and the `error` event. */
  fail(error: unknown, warning: string): void {
    this.#warn(warning, error);
    this.error(error);
  }

  #warn(line: string, error: unknown): void {
    try {
      quiet(this.#logger?.warn(`partner-s2s-sdk: transfer tracker: ${line}`, error));
    } catch {
      // A logger that throws is ignored.
    }
  }
}
