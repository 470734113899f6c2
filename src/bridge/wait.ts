import { AbortError, TimeoutError } from '../errors/client-errors.js';
import { type BridgeTransfer, FINAL_STATES, type TransferStatus } from '../schemas/bridge.js';
import { sleep } from '../transport/abort.js';
import type { RequestOptions } from '../transport/transport.js';

/** Where each state sits on the way to a final one; states on one rank are alternatives. */
const RANK: Record<string, number> = {
  pending: 0,
  submitted: 1,
  source_confirmed: 2,
  refund_pending: 3,
  delivered: 4,
  refunded: 4,
  failed: 4,
  expired: 4,
};

/** The order of a state for "never backwards" decisions; unknown states rank as undefined. */
export function stateRank(status: TransferStatus): number | undefined {
  return RANK[status];
}

/** True once `status` is `until`, a final state, or a state that can only come after `until`. */
export function hasReached(status: TransferStatus, until: TransferStatus | undefined): boolean {
  if (FINAL_STATES.has(status)) return true;
  if (until === undefined) return false;
  if (status === until) return true;
  const at = RANK[status];
  const target = RANK[until];
  return at !== undefined && target !== undefined && at > target;
}

export interface WaitOptions extends Omit<RequestOptions, 'timeoutMs'> {
  /**
   * How long to wait in all before giving up with a `TimeoutError`.
   * @default 600000 (10 minutes)
   */
  timeoutMs?: number;
  /**
   * First delay between reads; it grows by half each time up to `maxPollIntervalMs`.
   * @default 2000
   */
  pollIntervalMs?: number;
  /** @default 15000 */
  maxPollIntervalMs?: number;
}

export interface WaitParams {
  userId: string;
  transferId: string;
  /** Resolve once this state (or a later or final one) is reached, instead of only a final state. */
  until?: TransferStatus | undefined;
}

/** Polls `read` with backoff until the transfer reaches what is waited for. */
export async function pollTransfer(
  read: (options: RequestOptions) => Promise<BridgeTransfer>,
  params: WaitParams,
  options: WaitOptions = {},
): Promise<BridgeTransfer> {
  const total = options.timeoutMs ?? 600_000;
  const deadline = Date.now() + total;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), total);
  const onAbort = () => controller.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const path = '/bridge/transfers/{transferId}';
  const stopped = () =>
    options.signal?.aborted
      ? new AbortError({ cause: options.signal.reason })
      : new TimeoutError('GET', path, total);
  let delay = options.pollIntervalMs ?? 2_000;
  const maxDelay = options.maxPollIntervalMs ?? 15_000;
  try {
    for (;;) {
      let transfer: BridgeTransfer;
      try {
        transfer = await read({
          signal: controller.signal,
          ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
        });
      } catch (error) {
        if (controller.signal.aborted) throw stopped();
        throw error;
      }
      if (hasReached(transfer.status, params.until)) return transfer;
      // Checked here, not only by the timer: reads that settle without I/O would never let it fire.
      const left = deadline - Date.now();
      if (left <= 0 || controller.signal.aborted) throw stopped();
      await sleep(Math.min(delay, left), controller.signal, stopped);
      delay = Math.min(maxDelay, Math.round(delay * 1.5));
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}
