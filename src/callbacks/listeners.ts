import { PREFIX } from '../core/logger.js';
import { CallbackTimeoutError, type CallbackTimeoutStage } from '../errors/callback-errors.js';
import type { CallbackRouterEvents, RejectedDelivery } from './options.js';

type EventName = keyof CallbackRouterEvents;

/** Whether the work of one bounded step may still have effects; cleared once it timed out. */
export interface Run {
  live: boolean;
}

/** One subscription; `once` ones are dropped as they are called. */
interface Subscription {
  listener: (...args: never[]) => unknown;
  once: boolean;
}

/** One event to emit, with its listeners' arguments. */
export interface Emission {
  event: EventName;
  args: readonly unknown[];
}

const NONE: readonly Subscription[] = [];

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
   * Private to the router, so nothing reaches a listener around the dedupe. Each list is replaced,
   * never changed in place, so a delivery walks the listeners as they were when it began.
   */
  readonly #subscriptions = new Map<EventName, readonly Subscription[]>();
  readonly #timeoutMs: number;
  readonly #warn: ((line: string, ...rest: unknown[]) => void) | undefined;

  constructor(timeoutMs: number, warn: ((line: string, ...rest: unknown[]) => void) | undefined) {
    this.#timeoutMs = timeoutMs;
    this.#warn = warn;
  }

  subscribe(event: EventName, listener: Subscription['listener'], once: boolean): void {
    this.#subscriptions.set(event, [...(this.#subscriptions.get(event) ?? []), { listener, once }]);
  }

  /** Removes every subscription of `listener` to `event`. */
  unsubscribe(event: EventName, listener: unknown): void {
    this.#drop(event, (subscription) => subscription.listener === listener);
  }

  #drop(event: EventName, match: (subscription: Subscription) => boolean): void {
    const list = this.#subscriptions.get(event);
    if (!list) return;
    const kept = list.filter((subscription) => !match(subscription));
    if (kept.length > 0) this.#subscriptions.set(event, kept);
    else this.#subscriptions.delete(event);
  }

  /** Whether a listener in a walked list is to be called: a `once` one only by the first walk. */
  #claim(event: EventName, subscription: Subscription): boolean {
    if (!subscription.once) return true;
    // Two deliveries may walk the same list at once: only the first one calls it.
    if (!this.#subscriptions.get(event)?.includes(subscription)) return false;
    this.#drop(event, (other) => other === subscription);
    return true;
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
      const list = this.#subscriptions.get(event) ?? NONE;
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
              const laterList = this.#subscriptions.get(later.event) ?? NONE;
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
    subscription: Subscription,
    args: readonly unknown[],
    failures: unknown[] | undefined,
  ): PromiseLike<unknown> | undefined {
    if (!this.#claim(event, subscription)) return undefined;
    try {
      const result = (subscription.listener as (...a: unknown[]) => unknown)(...args);
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
    list: readonly Subscription[],
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
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        run.live = false;
        const error = new CallbackTimeoutError({ stage, timeoutMs: this.#timeoutMs, transferId, kind });
        this.error(error);
        reject(error);
      }, ms);
      Promise.resolve()
        .then(() => work(run))
        .then(
          (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(error);
          },
        );
    });
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
    for (const subscription of this.#subscriptions.get(event) ?? NONE) {
      const pending = this.#call(event, subscription, args, undefined);
      if (pending) Promise.resolve(pending).then(undefined, (error: unknown) => this.#failed(event, error));
    }
  }

  /** A listener threw or rejected: logged, and reported on `error` unless it was an `error` one. */
  #failed(event: EventName, error: unknown): void {
    this.#warn?.(`${PREFIX} callback router: a '${event}' listener threw or rejected`, error);
    if (event !== 'error') this.error(error);
  }
}
