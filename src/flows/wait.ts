import { DEFAULTS, withDefaults } from '../core/defaults.js';
import type { RequestOptions } from '../core/request-options.js';
import { Deadline, sleep } from '../core/time.js';
import { AbortError, TimeoutError } from '../errors/client-errors.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import { FINAL_STATES, type KnownTransferStatus, stateRank, type TransferStatus } from '../schemas/states.js';
import { isAnswerMismatch } from './submit.js';

/** True once `status` is `until`, a final state, or a state that can only come after `until`. */
export function hasReached(status: TransferStatus, until: TransferStatus | undefined): boolean {
  if (FINAL_STATES.has(status)) return true;
  if (until === undefined) return false;
  if (status === until) return true;
  const at = stateRank(status);
  const target = stateRank(until);
  return at !== undefined && target !== undefined && at > target;
}

/** Anything that emits `transfer` events as a callback router does. */
export interface TransferSource {
  on(event: 'transfer', listener: (transfer: BridgeTransfer) => void): unknown;
  off(event: 'transfer', listener: (transfer: BridgeTransfer) => void): unknown;
}

/**
 * Where a transfer stands on its way to a final state, as `transfers.wait` times it: each phase
 * has its own deadline (`phaseTimeoutsMs`), since a refund takes hours where a delivery takes
 * seconds.
 *
 * - `sourceConfirmation`: `pending` or `submitted`, until the deposit lands on the source chain.
 * - `delivery`: `source_confirmed`, until the tokens arrive (or nobody fills and a refund starts).
 * - `refund`: `refund_pending`, until the refund lands in a later settlement.
 */
export type WaitPhase = 'sourceConfirmation' | 'delivery' | 'refund';

/** In the order a transfer passes them; a wait never goes back to an earlier one. */
const PHASES: readonly WaitPhase[] = ['sourceConfirmation', 'delivery', 'refund'];

/**
 * The phase of each state that is not final. A state the service adds later has no phase here: the
 * wait stays in the phase it was in, so an unknown state never grants more time.
 */
const PHASE_OF_STATE = {
  pending: 'sourceConfirmation',
  submitted: 'sourceConfirmation',
  source_confirmed: 'delivery',
  refund_pending: 'refund',
} as const satisfies Partial<Record<KnownTransferStatus, WaitPhase>>;

/** The phase a read puts the wait in: never one before `current`, the first one at the start. */
function phaseOf(status: TransferStatus, current: WaitPhase | undefined): WaitPhase {
  const found: WaitPhase | undefined = (PHASE_OF_STATE as Partial<Record<string, WaitPhase>>)[status];
  if (current === undefined) return found ?? PHASES[0]!;
  if (found === undefined) return current;
  return PHASES.indexOf(found) > PHASES.indexOf(current) ? found : current;
}

/**
 * How long `transfers.wait` waits in each phase before giving up with a `TimeoutError` naming it.
 * A phase's time counts from the read that first saw the transfer in it (the first phase's from
 * the start of the wait). A phase left out keeps its default (`DEFAULTS.wait.phaseTimeoutsMs`).
 *
 * @example
 * // A refund can take a day where this partner's bridge settles; the other phases as they are.
 * await client.bridge.transfers.wait({ userId, transferId }, { phaseTimeoutsMs: { refund: 24 * 3_600_000 } });
 */
export interface WaitPhaseTimeouts {
  /**
   * `pending` or `submitted`, until `source_confirmed` (or a final state). An unsigned intent
   * expires within minutes, and a signed operation lands on the source chain in less.
   * @default 600000 (10 minutes)
   * @example
   * await client.bridge.transfers.wait({ userId, transferId }, { phaseTimeoutsMs: { sourceConfirmation: 5 * 60_000 } });
   */
  sourceConfirmation?: number;
  /**
   * `source_confirmed`, until `delivered` ("usually seconds later") or `refund_pending`. A deposit
   * nobody fills stays `source_confirmed` until its fill deadline passes, which the specification
   * does not state (hours on Across): raise this to follow such a transfer into its refund.
   * @default 600000 (10 minutes)
   * @example
   * await client.bridge.transfers.wait({ userId, transferId }, { phaseTimeoutsMs: { delivery: 4 * 3_600_000 } });
   */
  delivery?: number;
  /**
   * `refund_pending`, until `refunded`: the refund lands "in a later settlement taking hours".
   * @default 21600000 (6 hours)
   * @example
   * await client.bridge.transfers.wait({ userId, transferId }, { phaseTimeoutsMs: { refund: 24 * 3_600_000 } });
   */
  refund?: number;
}

/**
 * Options of `bridge.transfers.wait`: a deadline per phase, `totalTimeoutMs` over the whole wait.
 *
 * @example
 * const final = await client.bridge.transfers.wait({ userId, transferId }, {
 *   router, // wake up on callbacks; reads go on as the fallback
 *   phaseTimeoutsMs: { ...DEFAULTS.wait.phaseTimeoutsMs, refund: 24 * 3_600_000 },
 *   signal: AbortSignal.timeout(30 * 60_000),
 * });
 */
export interface WaitOptions extends Omit<RequestOptions, 'timeoutMs'> {
  /**
   * Wake up on callbacks as they arrive through this router; reads continue as a fallback, at
   * `pollIntervalMs` (then 15 s by default, growing to a minute) once the router took a delivery
   * during the wait. Until then, and from a delivery its `authenticate` refused to the next one it
   * takes, reads go on as without a router (2 s, growing to 15 s), and a `TimeoutError` names how
   * many deliveries were refused (`refusedDeliveries`). A callback is never taken on its word: it
   * triggers one read of the transfer, and the wait resolves with what that read says. A forged or
   * stale callback therefore costs one read and the wait goes on. The deadlines are the same as
   * without a router.
   *
   * @example
   * const final = await client.bridge.transfers.wait({ userId, transferId }, { router });
   */
  router?: TransferSource;
  /**
   * The deadline of each phase the transfer passes (`WaitPhaseTimeouts`); past one, the wait
   * throws a `TimeoutError` whose `phase` names it. Used when `totalTimeoutMs` is not given, or
   * when both are: then each phase has its deadline and `totalTimeoutMs` bounds them all.
   * @default DEFAULTS.wait.phaseTimeoutsMs (10 min to source confirmation, 10 min more to delivery, 6 h in a refund)
   * @example
   * await client.bridge.transfers.wait({ userId, transferId }, { phaseTimeoutsMs: { delivery: 30 * 60_000 } });
   */
  phaseTimeoutsMs?: WaitPhaseTimeouts;
  /**
   * How long to wait in all before giving up with a `TimeoutError`, whatever the phase. Given
   * alone, it is the only deadline (no phase deadlines apply, as before phases existed); given
   * with `phaseTimeoutsMs`, it caps them.
   * @default none: the phases' deadlines apply
   * @example
   * await client.bridge.transfers.wait({ userId, transferId }, { totalTimeoutMs: 30 * 60_000 });
   */
  totalTimeoutMs?: number;
  /**
   * @deprecated Use `totalTimeoutMs`. In this release `timeoutMs` still bounds the whole wait, as it
   * did; in the next one it will mean what it means for every other method, the time of one read.
   * Giving both is an `ArgumentError`. The client says so once, through `logger.warn`.
   */
  timeoutMs?: number;
  /**
   * First delay between reads; it grows by half each time up to `maxPollIntervalMs`.
   * @default DEFAULTS.wait.pollIntervalMs (2000), DEFAULTS.wait.withRouter.pollIntervalMs (15000) with a `router` that takes deliveries: callbacks wake the wait, reads are the fallback
   * @example
   * await client.bridge.transfers.wait({ userId, transferId }, { pollIntervalMs: 5_000 });
   */
  pollIntervalMs?: number;
  /**
   * Longest delay between reads.
   * @default DEFAULTS.wait.maxPollIntervalMs (15000), DEFAULTS.wait.withRouter.maxPollIntervalMs (60000) with a `router` that takes deliveries
   * @example
   * await client.bridge.transfers.wait({ userId, transferId }, { maxPollIntervalMs: 30_000 });
   */
  maxPollIntervalMs?: number;
}

/** Which transfer `bridge.transfers.wait` waits on, and for which state. */
export interface WaitParams {
  userId: string;
  transferId: string;
  /** Resolve once this state (or a later or final one) is reached, instead of only a final state. */
  until?: TransferStatus | undefined;
}

/** The phase deadlines that apply, or none when `totalTimeoutMs` alone was given. */
function phaseDeadlines(
  options: WaitOptions,
  total: number | undefined,
): Record<WaitPhase, number> | undefined {
  if (total !== undefined && options.phaseTimeoutsMs === undefined) return undefined;
  return withDefaults(DEFAULTS.wait.phaseTimeoutsMs, options.phaseTimeoutsMs);
}

/** How often a wait reads: a first delay between reads, growing by half each time up to `max`. */
interface Cadence {
  delay: number;
  max: number;
}

/**
 * What a wait hears from its router: a callback claiming the awaited state, whether the router is
 * taking deliveries, and how many it refused. Deliveries refused by `authenticate` never reach a
 * `transfer` listener, so a router that refuses them is as good as none: until it took one during
 * the wait, and again from a refusal to the next one it takes, the wait reads at the cadence it
 * has without a router.
 */
class RouterWatch {
  /** Set by a callback claiming the awaited state; cleared by the read that confirms or refutes it. */
  claimed = false;
  /** A delivery was taken during the wait and none refused since. */
  trusted = false;
  refused = 0;
  /** Ends the nap under way, if any. */
  wake: (() => void) | undefined;
  readonly #stop: () => void;

  constructor(router: TransferSource | undefined, params: WaitParams) {
    if (!router) {
      this.#stop = () => {};
      return;
    }
    const onTransfer = (transfer: BridgeTransfer) => {
      this.trusted = true;
      if (transfer.transferId !== params.transferId || !hasReached(transfer.status, params.until)) return;
      this.claimed = true;
      this.wake?.();
    };
    const onRejected = () => {
      this.refused++;
      if (!this.trusted) return;
      this.trusted = false;
      // The nap under way was timed for a router that works: time it again without one.
      this.wake?.();
    };
    // A callback router also reports refused deliveries; a source that emits transfers only may
    // refuse to take the name.
    const source = router as unknown as {
      on(event: 'rejected', listener: () => void): unknown;
      off(event: 'rejected', listener: () => void): unknown;
    };
    let hearsRefusals = true;
    try {
      source.on('rejected', onRejected);
    } catch {
      hearsRefusals = false;
    }
    router.on('transfer', onTransfer);
    this.#stop = () => {
      router.off('transfer', onTransfer);
      if (hearsRefusals) source.off('rejected', onRejected);
    };
  }

  stop(): void {
    this.#stop();
  }

  /**
   * Sleeps between two reads: until the cadence of the moment says, `until` at the latest, cut
   * short by a claiming callback or `signal`. No timer outlives it.
   */
  async nap(cadence: () => Cadence, until: number, signal: AbortSignal): Promise<void> {
    const started = Date.now();
    for (;;) {
      const ms = Math.min(started + cadence().delay, until) - Date.now();
      if (ms <= 0 || this.claimed || signal.aborted) return;
      const nap = new AbortController();
      const end = () => nap.abort();
      signal.addEventListener('abort', end, { once: true });
      this.wake = end;
      await sleep(ms, nap.signal, () => undefined).catch(() => undefined);
      signal.removeEventListener('abort', end);
      this.wake = undefined;
      // Slept its time (by the timer, not the clock, which a test may hold still): done.
      if (!nap.signal.aborted) return;
    }
  }
}

/** The wait's deadline says nothing itself: `stopped` builds the error from where the wait stood. */
const UNSAID = { timedOut: () => undefined, aborted: () => undefined };

/** Polls `read` with backoff until the transfer reaches what is waited for, or a deadline. */
/** The read intervals of a wait, without and with a router whose deliveries wake it. */
function cadences(options: WaitOptions): { direct: Cadence; routed: Cadence } {
  const given = { pollIntervalMs: options.pollIntervalMs, maxPollIntervalMs: options.maxPollIntervalMs };
  const direct = withDefaults(DEFAULTS.wait, given);
  // With a router taking deliveries, callbacks wake the wait and reads are the fallback.
  const routed = withDefaults(DEFAULTS.wait.withRouter, given);
  return {
    direct: { delay: direct.pollIntervalMs, max: direct.maxPollIntervalMs },
    routed: { delay: routed.pollIntervalMs, max: routed.maxPollIntervalMs },
  };
}

export async function pollTransfer(
  read: (options: RequestOptions) => Promise<BridgeTransfer>,
  params: WaitParams,
  options: WaitOptions = {},
): Promise<BridgeTransfer> {
  const started = Date.now();
  const total = options.totalTimeoutMs ?? options.timeoutMs;
  const phases = phaseDeadlines(options, total);
  // Named by the deadline's error, so that a caller who gives up knows where the transfer stood.
  let lastStatus: TransferStatus | undefined;
  let phase: WaitPhase | undefined;
  // The last answer refused as another transfer's, while no read since was right.
  let refused: unknown;
  // Until a read says which phase the transfer is in, no phase's time can have run out: the
  // longest one bounds the first read, and the first phase counts from the start of the wait.
  let phaseMs = phases ? Math.max(...Object.values(phases)) : Number.POSITIVE_INFINITY;
  let phaseEnd = started + phaseMs;
  const totalEnd = total === undefined ? Number.POSITIVE_INFINITY : started + total;
  const deadline = () =>
    phaseEnd < totalEnd ? { at: phaseEnd, ms: phaseMs } : { at: totalEnd, ms: total as number };

  // Ends at the nearest deadline, or with the caller's signal; it cuts a read or a nap short. A
  // new phase gets a new one, so that the old phase's timer, firing as the read that ends it came
  // back, does not stop the wait. The error is built by `stopped`, which knows where it stood.
  let bound: Deadline | undefined;
  const arm = () => {
    bound?.clear();
    bound = new Deadline(Math.max(0, deadline().at - Date.now()), options.signal, UNSAID);
  };
  arm();
  const halted = () => bound?.over === true || options.signal?.aborted === true;
  const router = options.router;
  const watch = new RouterWatch(router, params);
  const stopped = () =>
    options.signal?.aborted
      ? new AbortError({ cause: options.signal.reason })
      : new TimeoutError({
          method: 'GET',
          path: '/bridge/transfers/{transferId}',
          timeoutMs: deadline().ms,
          transferId: params.transferId,
          lastStatus,
          phase,
          refusedDeliveries: router ? watch.refused : undefined,
          cause: refused,
        });
  const { direct, routed } = cadences(options);
  const cadence = () => (watch.trusted ? routed : direct);
  try {
    for (;;) {
      watch.claimed = false;
      let transfer: BridgeTransfer | undefined;
      try {
        transfer = await read({
          signal: (bound as Deadline).signal,
          ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
        });
        refused = undefined;
      } catch (error) {
        if (halted()) throw stopped();
        // Another transfer, or another user's: never the answer; read again on the schedule.
        if (!isAnswerMismatch(error)) throw error;
        refused = error;
      }
      if (transfer) {
        lastStatus = transfer.status;
        if (hasReached(transfer.status, params.until)) return transfer;
        const next = phaseOf(transfer.status, phase);
        if (next !== phase) {
          if (phases) {
            phaseMs = phases[next];
            phaseEnd = (phase === undefined ? started : Date.now()) + phaseMs;
            arm();
          }
          phase = next;
        }
      }
      // Checked here, not only by the timer: reads that settle without I/O would never let it fire.
      if (deadline().at - Date.now() <= 0 || halted()) throw stopped();
      // A callback that came during the read is confirmed by the next read, without a nap.
      if (watch.claimed) continue;
      await watch.nap(cadence, deadline().at, (bound as Deadline).signal);
      if (halted()) throw stopped();
      if (!watch.claimed) {
        const used = cadence();
        used.delay = Math.min(used.max, Math.round(used.delay * 1.5));
      }
    }
  } finally {
    bound?.clear();
    watch.stop();
  }
}
