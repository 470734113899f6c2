import { EventEmitter } from '../core/emitter.js';
import { quiet } from '../core/isolate.js';
import { PREFIX } from '../core/logger.js';
import { settleWithin } from '../core/time.js';
import { CallbackTimeoutError, type CallbackTimeoutStage } from '../errors/callback-errors.js';
import type { CallbackRouterEvents } from './events.js';
import type { RejectedDelivery } from './outcomes.js';

type EventName = keyof CallbackRouterEvents;
/** A listener as the emitter holds it; the router's `on` has checked it is a function. */
type Listener = (...args: unknown[]) => unknown;

/** Whether the work of one bounded step may still have effects; cleared once it timed out. */
export interface Run {
  live: boolean;
}

/** One event to emit, with its listeners' arguments. */
export interface Emission {
  event: EventName;
  args: readonly unknown[];
}

/** Marks what the emitter holds for a `once` listener: the partner's function it stands for. */
const ORIGINAL = Symbol('listener');

/**
 * What the emitter holds for a `once` listener: it calls the partner's function the first time
 * only, and leaves the emitter as it does. Two deliveries may walk the same listeners at once;
 * `spent` lets only the first one through, and `off` spends it too.
 */
interface OnceListener {
  (...args: unknown[]): unknown;
  readonly [ORIGINAL]: Listener;
  spent: boolean;
}

const NONE: readonly Listener[] = [];

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * The router's listeners and the rest of the partner's code it runs: the subscriptions, the calls
 * within `listenerTimeoutMs`, and what they throw or reject. A failure is logged at `warn` and
 * reported on `error` (but an `error` listener's own only logged); none escapes, whatever a
 * listener returns, so nothing a delivery sets off can end as an unhandled rejection.
 *
 * @example
 * const listeners = new Listeners(10_000, logWriter(console, 'warn', 'warn'));
 * listeners.subscribe('transfer', (t) => credit(t), false);
 * await listeners.emit(id, kind, failures, [{ event: 'transfer', args: [transfer, kind] }]);
 */
export class Listeners {
  /**
   * Holds the subscriptions; private to the router, so nothing reaches a listener around the
   * dedupe. Its `emit` is never used: the router awaits what listeners return, for at least once,
   * and isolates what they throw. `listeners(event)` is a fresh array each time, so a delivery
   * walks the listeners as they were when it began.
   */
  readonly #emitter = new EventEmitter<EventName>();
  readonly #timeoutMs: number;
  readonly #warn: ((line: string, ...rest: unknown[]) => void) | undefined;

  constructor(timeoutMs: number, warn: ((line: string, ...rest: unknown[]) => void) | undefined) {
    this.#timeoutMs = timeoutMs;
    this.#warn = warn;
  }

  subscribe(event: EventName, given: (...args: never[]) => unknown, once: boolean): void {
    const listener = given as Listener;
    if (!once) {
      this.#emitter.on(event, listener);
      return;
    }
    const emitter = this.#emitter;
    const wrapper: OnceListener = Object.assign(
      (...args: unknown[]) => {
        if (wrapper.spent) return undefined;
        wrapper.spent = true;
        emitter.off(event, wrapper);
        return listener(...args);
      },
      { [ORIGINAL]: listener, spent: false },
    );
    emitter.on(event, wrapper);
  }

  /** Removes every subscription of `listener` to `event`, `once` ones included. */
  unsubscribe(event: EventName, listener: unknown): void {
    for (const held of this.#listenersOf(event)) {
      const wrapper = held as Partial<OnceListener>;
      if (wrapper[ORIGINAL] !== listener) continue;
      wrapper.spent = true;
      this.#emitter.off(event, held);
    }
    this.#emitter.off(event, listener as Listener);
  }

  /** The listeners of `event` as they are now: a copy, which later changes leave alone. */
  #listenersOf(event: EventName): readonly Listener[] {
    return this.#emitter.listenerCount(event) === 0 ? NONE : this.#emitter.listeners(event);
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
    for (let e = 0; e < emissions.length; e++) {
      const { event, args } = emissions[e]!;
      const list = this.#listenersOf(event);
      for (let i = 0; i < list.length; i++) {
        const pending = this.#call(event, list[i]!, args, failures);
        if (pending === undefined) continue;
        const left = this.#timeoutMs - (performance.now() - started);
        return this.bounded(
          'listeners',
          transferId,
          kind,
          async (run) => {
            await this.#settle(run, event, pending, failures);
            await this.#emitFrom(run, event, list, i + 1, args, failures);
            for (const later of emissions.slice(e + 1)) {
              const laterList = this.#listenersOf(later.event);
              await this.#emitFrom(run, later.event, laterList, 0, later.args, failures);
            }
          },
          left,
        );
      }
    }
    return undefined;
  }

  /** Calls one listener; its promise when it returned one, reporting a synchronous failure. */
  #call(
    event: EventName,
    listener: Listener,
    args: readonly unknown[],
    failures: unknown[] | undefined,
  ): PromiseLike<unknown> | undefined {
    try {
      const result = listener(...args);
      return isThenable(result) ? result : undefined;
    } catch (error) {
      this.#failed(event, error);
      failures?.push(error);
      return undefined;
    }
  }

  /** Waits for one listener's promise; a rejection is reported unless the step timed out first. */
  async #settle(
    run: Run,
    event: EventName,
    pending: PromiseLike<unknown>,
    failures: unknown[] | undefined,
  ): Promise<void> {
    try {
      await pending;
    } catch (error) {
      if (!run.live) return;
      this.#failed(event, error);
      failures?.push(error);
    }
  }

  /** `emit`'s async rest: the listeners of `list` from `from` on, each awaited in turn. */
  async #emitFrom(
    run: Run,
    event: EventName,
    list: readonly Listener[],
    from: number,
    args: readonly unknown[],
    failures: unknown[] | undefined,
  ): Promise<void> {
    for (let i = from; i < list.length; i++) {
      if (!run.live) return;
      const pending = this.#call(event, list[i]!, args, failures);
      if (pending !== undefined) await this.#settle(run, event, pending, failures);
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
    const run: Run = { live: true };
    // On the shared timer: most steps settle within a turn, where a timer of their own would cost more.
    return settleWithin(
      Promise.resolve().then(() => work(run)),
      ms,
      () => {
        run.live = false;
        const error = new CallbackTimeoutError({ stage, timeoutMs: this.#timeoutMs, transferId, kind });
        this.error(error);
        return error;
      },
    );
  }

  /** Tells the `rejected` listeners of a refused delivery; a check that threw is a failure too. */
  rejected(rejected: RejectedDelivery): void {
    this.#notify('rejected', [rejected]);
    if (rejected.error === undefined) return;
    this.#warn?.(
      `${PREFIX} callback router: authenticate threw or rejected; the delivery was refused`,
      rejected.error,
    );
    this.error(rejected.error);
  }

  /** Reports an error on `error`. */
  error(error: unknown): void {
    this.#notify('error', [error]);
  }

  /** Calls the listeners of an event nobody waits on; what they reject is still caught. */
  #notify(event: 'rejected' | 'error', args: readonly unknown[]): void {
    for (const listener of this.#listenersOf(event)) {
      const pending = this.#call(event, listener, args, undefined);
      if (pending) quiet(pending, (error) => this.#failed(event, error));
    }
  }

  /** A listener threw or rejected: logged, and reported on `error` unless it was an `error` one. */
  #failed(event: EventName, error: unknown): void {
    this.#warn?.(`${PREFIX} callback router: a '${event}' listener threw or rejected`, error);
    if (event !== 'error') this.error(error);
  }
}
