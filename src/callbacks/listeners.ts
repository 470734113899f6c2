import { bounded, type Listener, PartnerListeners, type Run, type Step } from '../core/isolate.js';
import { PREFIX } from '../core/logger.js';
import { CallbackTimeoutError, type CallbackTimeoutStage } from '../errors/callback-errors.js';
import type { CallbackRouterEvents } from './events.js';
import type { RejectedDelivery } from './outcomes.js';

type EventName = keyof CallbackRouterEvents;

/** One event to emit, with its listeners' arguments. */
export interface Emission {
  event: EventName;
  args: readonly unknown[];
}

/**
 * The router's policy over its partner code, held by the core's `PartnerListeners`: a delivery's
 * listeners are awaited in turn, the whole step within `listenerTimeoutMs`; the check and the
 * store are bounded likewise. A failure is logged at `warn` and reported on `error` (an `error`
 * listener's own only logged); none escapes, so nothing a delivery sets off can end unhandled.
 *
 * @example
 * const listeners = new Listeners(10_000, logWriter(console, 'warn', 'warn'));
 * listeners.subscribe('transfer', (t) => credit(t), false);
 * await listeners.emit(id, kind, failures, [{ event: 'transfer', args: [transfer, kind] }]);
 */
export class Listeners {
  /** Private to the router, so nothing reaches a listener around the dedupe. */
  readonly #held: PartnerListeners<CallbackRouterEvents>;
  readonly #timeoutMs: number;
  readonly #warn: ((line: string, ...rest: unknown[]) => void) | undefined;

  constructor(timeoutMs: number, warn: ((line: string, ...rest: unknown[]) => void) | undefined) {
    this.#timeoutMs = timeoutMs;
    this.#warn = warn;
    // The error itself goes with the line, for its stack.
    const report = (what: string, error: unknown) =>
      warn?.(`${PREFIX} callback router: ${what} threw or rejected`, error);
    this.#held = new PartnerListeners<CallbackRouterEvents>(report, 'error');
  }

  subscribe(event: EventName, given: (...args: never[]) => unknown, once: boolean): void {
    const listener = given as CallbackRouterEvents[EventName];
    if (once) this.#held.once(event, listener);
    else this.#held.on(event, listener);
  }

  /** Removes every subscription of `listener` to `event`, `once` ones included. */
  unsubscribe(event: EventName, listener: unknown): void {
    this.#held.off(event, listener as CallbackRouterEvents[EventName]);
  }

  /**
   * Calls the listeners of each emission in turn; one that fails is reported (and collected into
   * `failures`, when given) and does not stop the rest. Listeners that return at once are called
   * with no timer: nothing could interrupt them anyway. From the first that returns a promise, the
   * rest of the step runs within what is left of `listenerTimeoutMs`; `undefined` when there was
   * nothing to wait for.
   */
  emit(
    transferId: string | undefined,
    kind: string,
    failures: unknown[] | undefined,
    emissions: readonly Emission[],
  ): Promise<void> | undefined {
    const started = performance.now();
    const step: Step = { failures, run: undefined };
    for (let e = 0; e < emissions.length; e++) {
      const { event, args } = emissions[e]!;
      const list = this.#held.listeners(event);
      for (let i = 0; i < list.length; i++) {
        const pending = this.#held.call(event, list[i]!, args, step);
        if (pending === undefined) continue;
        const left = this.#timeoutMs - (performance.now() - started);
        const rest = async (run: Run) => {
          step.run = run;
          await this.#held.settle(event, pending, step);
          await this.#emitFrom(step, { event, args }, list.slice(i + 1));
          for (const later of emissions.slice(e + 1))
            await this.#emitFrom(step, later, this.#held.listeners(later.event));
        };
        return this.bounded('listeners', transferId, kind, rest, left);
      }
    }
    return undefined;
  }

  /** `emit`'s async rest: the listeners of `list`, each awaited in turn while the step lives. */
  async #emitFrom(step: Step, { event, args }: Emission, list: readonly Listener[]): Promise<void> {
    for (const listener of list) {
      if (!step.run?.live) return;
      const pending = this.#held.call(event, listener, args, step);
      if (pending !== undefined) await this.#held.settle(event, pending, step);
    }
  }

  /**
   * Runs partner code (listeners, the check, the store) within `listenerTimeoutMs`. On timeout the
   * step rejects with a `CallbackTimeoutError`, reported on `error`; the work is left to finish on
   * its own and nothing it does later is reported.
   */
  bounded<T>(
    stage: CallbackTimeoutStage,
    transferId: string | undefined,
    kind: string | undefined,
    work: (run: Run) => T | Promise<T>,
    ms = this.#timeoutMs,
  ): Promise<T> {
    return bounded(work, ms, () => {
      const error = new CallbackTimeoutError({ stage, timeoutMs: this.#timeoutMs, transferId, kind });
      this.error(error);
      return error;
    });
  }

  /** Tells the `rejected` listeners of a refused delivery; a check that threw is a failure too. */
  rejected(rejected: RejectedDelivery): void {
    this.#held.emit('rejected', rejected);
    if (rejected.error === undefined) return;
    this.#warn?.(
      `${PREFIX} callback router: authenticate threw or rejected; the delivery was refused`,
      rejected.error,
    );
    this.error(rejected.error);
  }

  /** Reports an error on `error`. */
  error(error: unknown): void {
    this.#held.error(error);
  }
}
