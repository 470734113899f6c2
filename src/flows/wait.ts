import type { RequestOptions } from '../core/request-options.js';
import { AbortError, TimeoutError } from '../errors/client-errors.js';
import { sleep } from '../http/abort.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import { FINAL_STATES, stateRank, type TransferStatus } from '../schemas/states.js';

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

/** Options of `bridge.transfers.wait`: `totalTimeoutMs` bounds the whole wait. */
export interface WaitOptions extends Omit<RequestOptions, 'timeoutMs'> {
  /**
   * Wake up on callbacks as they arrive through this router; reads continue as a fallback, at
   * `pollIntervalMs` (then 15 s by default, growing to a minute). A callback is never taken on its
   * word: it triggers one read of the transfer, and the wait resolves with what that read says. A
   * forged or stale callback therefore costs one read and the wait goes on.
   *
   * @example
   * const final = await client.bridge.transfers.wait({ userId, transferId }, { router });
   */
  router?: TransferSource;
  /**
   * How long to wait in all before giving up with a `TimeoutError`.
   * @default 600000 (10 minutes)
   * @example
   * await client.bridge.transfers.wait({ userId, transferId }, { totalTimeoutMs: 30 * 60_000 });
   */
  totalTimeoutMs?: number;
  /**
   * @deprecated Use `totalTimeoutMs`. In this release `timeoutMs` still bounds the whole wait, as it
   * did; in the next one it will mean what it means for every other method, the time of one read.
   * Giving both is an `ArgumentError`.
   */
  timeoutMs?: number;
  /**
   * First delay between reads; it grows by half each time up to `maxPollIntervalMs`.
   * @default 2000 (15000 with a `router`: callbacks wake the wait, reads are the fallback)
   */
  pollIntervalMs?: number;
  /** Longest delay between reads. @default 15000 (60000 with a `router`) */
  maxPollIntervalMs?: number;
}

/** Which transfer `bridge.transfers.wait` waits on, and for which state. */
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
  const total = options.totalTimeoutMs ?? options.timeoutMs ?? 600_000;
  const deadline = Date.now() + total;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), total);
  const onAbort = () => controller.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const path = '/bridge/transfers/{transferId}';
  // Named by the deadline's error, so that a caller who gives up knows where the transfer stood.
  let lastStatus: TransferStatus | undefined;
  const stopped = () =>
    options.signal?.aborted
      ? new AbortError({ cause: options.signal.reason })
      : new TimeoutError({
          method: 'GET',
          path,
          timeoutMs: total,
          transferId: params.transferId,
          lastStatus,
        });
  const router = options.router;
  let delay = options.pollIntervalMs ?? (router ? 15_000 : 2_000);
  const maxDelay = options.maxPollIntervalMs ?? (router ? 60_000 : 15_000);
  // Set by a callback claiming the awaited state; cleared by the read that confirms or refutes it.
  let claimed = false;
  let wake: (() => void) | undefined;
  const onTransfer = (transfer: BridgeTransfer) => {
    if (transfer.transferId !== params.transferId || !hasReached(transfer.status, params.until)) return;
    claimed = true;
    wake?.();
  };
  router?.on('transfer', onTransfer);
  try {
    for (;;) {
      claimed = false;
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
      lastStatus = transfer.status;
      if (hasReached(transfer.status, params.until)) return transfer;
      // Checked here, not only by the timer: reads that settle without I/O would never let it fire.
      const left = deadline - Date.now();
      if (left <= 0 || controller.signal.aborted) throw stopped();
      // A callback that came during the read is confirmed by the next read, without a nap.
      if (claimed) continue;
      // One nap per round, cut short by a callback or the caller, so that no timer outlives the wait.
      const nap = new AbortController();
      const endNap = () => nap.abort();
      controller.signal.addEventListener('abort', endNap, { once: true });
      wake = endNap;
      await sleep(Math.min(delay, left), nap.signal, () => undefined).catch(() => undefined);
      controller.signal.removeEventListener('abort', endNap);
      wake = undefined;
      if (controller.signal.aborted) throw stopped();
      if (!claimed) delay = Math.min(maxDelay, Math.round(delay * 1.5));
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    router?.off('transfer', onTransfer);
  }
}
