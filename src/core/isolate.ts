import type { Redact } from '../errors/redact.js';
import { EventEmitter } from './emitter.js';
import { settleWithin } from './time.js';

/** Told what a partner's function threw or rejected with; never throws itself. */
export type Report = (what: string, error: unknown) => void;

/** A report that drops everything (the failure stays isolated, only unreported). */
export const ignoreReport: Report = () => {};

/** Longest part of a warning given to what a partner's function threw: a log line, not a dump. */
const MAX_DESCRIBED = 300;

/** Marks a promise a partner's function returned as handled, so that it cannot end the process. */
export function quiet(result: unknown, onRejected: (error: unknown) => void = () => {}): void {
  try {
    const then = (result as { then?: unknown } | null | undefined)?.then;
    if (typeof then === 'function') then.call(result, undefined, onRejected);
  } catch {
    // A hostile thenable: whatever it does, it cannot reach the call.
  }
}

/**
 * Calls a partner's function (a listener, `onProgress`) so that nothing it throws, nor a promise it
 * returns that rejects, reaches the caller or goes unhandled: both are told to `report` instead.
 */
export function isolate<A extends unknown[]>(
  what: string,
  fn: (...args: A) => unknown,
  report: Report,
): (...args: A) => void {
  return (...args) => {
    try {
      quiet(fn(...args), (error) => report(what, error));
    } catch (error) {
      report(what, error);
    }
  };
}

/** `Name: message` of what was thrown, bounded; never throws, whatever it is. */
function describe(error: unknown): string {
  try {
    const text =
      error instanceof Error ? `${error.name}: ${error.message}` : `${typeof error}: ${String(error)}`;
    return text.length > MAX_DESCRIBED ? `${text.slice(0, MAX_DESCRIBED)}…` : text;
  } catch {
    return 'an unreadable value';
  }
}

/**
 * A report through `warn` (the client's logger when its level lets warnings through). A logger that
 * throws or rejects is ignored, and is never told of its own failure: a report cannot loop.
 */
export function warnReport(warn: ((line: string) => unknown) | undefined, redact: Redact): Report {
  if (!warn) return ignoreReport;
  let reporting = false;
  return (what, error) => {
    if (reporting) return;
    reporting = true;
    try {
      quiet(warn(redact(`partner-s2s-sdk: ${what} failed; ignored, the call goes on: ${describe(error)}`)));
    } catch {
      // The logger itself failed: there is nowhere left to say so.
    } finally {
      reporting = false;
    }
  };
}

/** Whether the work of one bounded run may still have effects; cleared once its bound passed. */
export interface Run {
  live: boolean;
}

/**
 * Runs partner code within `ms`: on timeout the run is marked over and the promise rejects with
 * what `timedOut` makes; the work is left to finish on its own, and what it rejects with later is
 * dropped. The bound of a step the caller waits on (the router's listeners, its store, the check).
 *
 * @example
 * await bounded((run) => store.claim(request), 10_000, () => new CallbackTimeoutError(details));
 */
export function bounded<T>(
  work: (run: Run) => T | PromiseLike<T>,
  ms: number,
  timedOut: () => unknown,
): Promise<T> {
  const run: Run = { live: true };
  // On the shared timer: most steps settle within a turn, where a timer of their own would cost more.
  return settleWithin(
    Promise.resolve().then(() => work(run)),
    ms,
    () => {
      run.live = false;
      return timedOut();
    },
  );
}

/** A listener as the emitter holds it; the holder's `on` has checked it is a function. */
export type Listener = (...args: unknown[]) => unknown;
type Args<F> = F extends (...args: infer A) => unknown ? A : never;

/** Marks what the emitter holds for a `once` listener: the partner's function it stands for. */
const ORIGINAL = Symbol('listener');

/**
 * What the emitter holds for a `once` listener: it calls the partner's function the first time
 * only, and leaves the emitter as it does. Two dispatches may walk the same listeners at once;
 * `spent` lets only the first one through, and `off` spends it too.
 */
interface OnceListener {
  (...args: unknown[]): unknown;
  readonly [ORIGINAL]: Listener;
  spent: boolean;
}

const NONE: readonly Listener[] = [];

/** One dispatch a caller waits on: where its failures are collected, its bounded run, its name in reports. */
export interface Step {
  /** What each failing listener threw or rejected with, in order. */
  failures?: unknown[] | undefined;
  /** Once over (its bound passed), a late rejection is dropped. */
  run?: Run | undefined;
  /** How a failing listener is named to `report`; `a '<event>' listener` otherwise. */
  what?: string | undefined;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * A partner's listeners, isolated: the one place the SDK calls them (the client's events, the
 * router's and the tracker's listeners). Nothing a listener throws, nor a promise it returns that
 * rejects, reaches the caller or goes unhandled: it is told to `report` (the logger) and then on
 * the `errorEvent`, when the holder has one; what an `error` listener throws goes only to
 * `report`, so a report cannot loop. `emit` does not wait; a holder whose caller waits calls
 * `call` and `settle` in its own order, within a bound of `bounded`. Held by eventemitter3,
 * whose `emit` is never used: `listeners(event)` is a fresh array each time, so a dispatch walks
 * the listeners as they were when it began.
 *
 * @example
 * const listeners = new PartnerListeners<TrackerEvents>(report, 'error');
 * listeners.on('final', (transfer) => credit(transfer));
 * const failures: unknown[] = [];
 * for (const listener of listeners.listeners('final')) {
 *   const pending = listeners.call('final', listener, [transfer], failures);
 *   if (pending) await listeners.settle('final', settleWithin(pending, 10_000, timedOut), failures);
 * }
 */
export class PartnerListeners<Events extends object> {
  readonly #emitter = new EventEmitter<string>();
  readonly #report: Report;
  readonly #errorEvent: (keyof Events & string) | undefined;

  constructor(report: Report, errorEvent?: keyof Events & string) {
    this.#report = report;
    this.#errorEvent = errorEvent;
  }

  on<E extends keyof Events & string>(event: E, listener: Events[E]): void {
    this.#emitter.on(event, listener as Listener);
  }

  once<E extends keyof Events & string>(event: E, given: Events[E]): void {
    const listener = given as Listener;
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
  off<E extends keyof Events & string>(event: E, listener: Events[E]): void {
    for (const held of this.listeners(event)) {
      const wrapper = held as Partial<OnceListener>;
      if (wrapper[ORIGINAL] !== listener) continue;
      wrapper.spent = true;
      this.#emitter.off(event, held);
    }
    this.#emitter.off(event, listener as Listener);
  }

  listenerCount(event: keyof Events & string): number {
    return this.#emitter.listenerCount(event);
  }

  /** The listeners of `event` as they are now: a copy, which later changes leave alone. */
  listeners(event: keyof Events & string): readonly Listener[] {
    return this.#emitter.listenerCount(event) === 0 ? NONE : this.#emitter.listeners(event);
  }

  /** Calls the listeners of `event` without waiting for them; what they reject is still caught. */
  emit<E extends keyof Events & string>(event: E, ...args: Args<Events[E]>): void {
    for (const listener of this.listeners(event)) {
      const pending = this.call(event, listener, args);
      if (pending) quiet(pending, (error) => this.failed(event, error));
    }
  }

  /**
   * Calls one listener of `event`: its promise when it returned one (for the caller to `settle`,
   * or to drop), `undefined` otherwise. A throw is reported, and collected into `step.failures`.
   */
  call(
    event: keyof Events & string,
    listener: Listener,
    args: readonly unknown[],
    step?: Step,
  ): PromiseLike<unknown> | undefined {
    try {
      const result = listener(...args);
      return isThenable(result) ? result : undefined;
    } catch (error) {
      this.#failedIn(event, error, step);
      return undefined;
    }
  }

  /**
   * Waits for a listener's promise (bounded by the caller, if it wants a bound); a rejection is
   * reported and collected into `step.failures`, unless `step.run` is over: what its bound left
   * is dropped.
   */
  async settle(event: keyof Events & string, pending: PromiseLike<unknown>, step?: Step): Promise<void> {
    try {
      await pending;
    } catch (error) {
      if (step?.run && !step.run.live) return;
      this.#failedIn(event, error, step);
    }
  }

  #failedIn(event: keyof Events & string, error: unknown, step: Step | undefined): void {
    this.failed(event, error, step?.what);
    step?.failures?.push(error);
  }

  /** A listener of `event` failed: reported, then told on the error event unless it was its own. */
  failed(event: keyof Events & string, error: unknown, what = `a '${event}' listener`): void {
    try {
      this.#report(what, error);
    } catch {
      // The report itself failed: there is nowhere left to say so.
    }
    if (event !== this.#errorEvent) this.error(error);
  }

  /** Tells the error event's listeners, when the holder has one; their failures only to `report`. */
  error(error: unknown): void {
    if (this.#errorEvent !== undefined)
      this.emit(this.#errorEvent, ...([error] as Args<Events[keyof Events & string]>));
  }
}
