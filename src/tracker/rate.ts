import { sleep } from '../core/time.js';
import { AbortError } from '../errors/client-errors.js';

/**
 * Counts a second as this long: a read is counted by the service when it arrives, and two reads
 * sent a second apart can arrive closer together. The margin keeps the service's count within
 * `maxReadsPerSecond` all the same.
 */
const WINDOW_MS = 1_100;

/**
 * At most `perSecond` reads in any window of a second (a sliding log, stricter than a refilling
 * bucket, which lets up to twice the rate through in one second).
 */
export class ReadLimiter {
  /** Reads let through per window. */
  readonly #perSecond: number;
  /** The window: a (padded) second, longer for a rate below one a second (0.5: one read per 2.2 s). */
  readonly #windowMs: number;
  readonly #sent: number[] = [];

  constructor(perSecond: number) {
    this.#perSecond = Math.max(1, Math.floor(perSecond));
    this.#windowMs = (WINDOW_MS * this.#perSecond) / perSecond;
  }

  #prune(now: number): void {
    while (this.#sent.length > 0 && now - this.#sent[0]! >= this.#windowMs) this.#sent.shift();
  }

  /** Reads that could start now. */
  available(): number {
    this.#prune(performance.now());
    return this.#perSecond - this.#sent.length;
  }

  /** Waits for room for one read and takes it; rejects with `AbortError` when `signal` fires first. */
  async take(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted) throw new AbortError({ cause: signal.reason });
      const now = performance.now();
      this.#prune(now);
      if (this.#sent.length < this.#perSecond) {
        this.#sent.push(now);
        return;
      }
      await sleep(
        Math.max(1, this.#sent[0]! + this.#windowMs - now),
        signal,
        () => new AbortError({ cause: signal.reason }),
      );
    }
  }
}
