/**
 * Time, said once for every layer: `Deadline` is the one bound of a piece of work (an attempt, a
 * body read, a token-store operation, a signer, a listener), `sleep` the one wait (after ky's
 * `utils/timeout.ts` and `utils/delay.ts`), and `settleWithin` the bound on a promise without a
 * signal (a store's command). The stores, the tracker and the router take their timers from here,
 * not from the HTTP layer.
 */

/** The errors a deadline ends with, built when it ends (so that a stack says where). */
export interface DeadlineErrors {
  timedOut: () => unknown;
  aborted: () => unknown;
}

/** Told once, with the deadline's error, when a deadline ends: a race it runs, a wait on it. */
type OnEnd = (reason: unknown) => void;

/**
 * The end of a piece of work: after `ms`, or as soon as the caller's `signal` aborts, whichever
 * comes first. Its `signal` aborts then with the error to throw as its reason, so that everything
 * given the deadline (fetch, a body reader, a wait) stops the same way and says the same thing.
 * Created once per attempt and passed down; `clear()` leaves no timer and no listener.
 *
 * A deadline holds no function of its own while it runs: its timer calls one shared function,
 * it listens to the caller's signal as an object (`handleEvent`), and its `AbortController` is
 * made when its `signal` is first read (a race or a wait needs none). Each call in flight holds
 * one, so what it weighs is multiplied by every call.
 *
 * @example
 * const deadline = new Deadline(5_000, options.signal, { timedOut, aborted });
 * try { return await deadline.race(work()); } finally { deadline.clear(); }
 */
export class Deadline implements Wait {
  /** Its place on the shared timer (see `Wait`): ten thousand deadlines, one timer. */
  readonly endsAt: number;
  waiting = false;
  prev: Wait | undefined;
  next: Wait | undefined;
  #controller: AbortController | undefined;
  #over = false;
  #reason: unknown;
  readonly #errors: DeadlineErrors;
  readonly #caller: AbortSignal | undefined;
  /** Its own timer, for a deadline that must not keep the process alive (`unref`). */
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** One waiter in the field itself (the usual case), more in an array. */
  #waiting: OnEnd | OnEnd[] | undefined;

  /**
   * `ms` of `Infinity` bounds the work by the signal alone; 0 or less is over at once. `unref`:
   * the timer does not keep the process alive (work nobody waits on, a cache lookup).
   */
  constructor(
    ms: number,
    signal: AbortSignal | undefined,
    errors: DeadlineErrors,
    { unref = false }: { unref?: boolean } = {},
  ) {
    this.#errors = errors;
    const now = performance.now();
    this.endsAt = now + ms;
    if (signal?.aborted) {
      this.#stop(errors.aborted());
      return;
    }
    if (ms <= 0) {
      this.#stop(errors.timedOut());
      return;
    }
    if (unref) {
      if (Number.isFinite(ms)) this.#timer = setTimeout(Deadline.#expire, ms, this);
      this.#timer?.unref?.();
    } else if (Number.isFinite(ms)) add(this, now);
    if (signal) {
      this.#caller = signal;
      signal.addEventListener('abort', this, { once: true });
    }
  }

  /** The own timer's one function, for every deadline that has one. */
  static #expire(deadline: Deadline): void {
    deadline.end();
  }

  /** Its time is up (the shared timer's call). */
  end(): void {
    this.#stop(this.#errors.timedOut());
  }

  /** The caller's signal aborted: the deadline listens to it as an object, not through a closure. */
  handleEvent(): void {
    this.#stop(this.#errors.aborted());
  }

  #stop(reason: unknown): void {
    if (this.#over) return;
    const waiting = this.#waiting;
    this.clear();
    this.#over = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    if (typeof waiting === 'function') waiting(reason);
    else if (waiting) for (const onEnd of waiting) onEnd(reason);
  }

  #onEnd(onEnd: OnEnd): void {
    const waiting = this.#waiting;
    if (waiting === undefined) this.#waiting = onEnd;
    else if (typeof waiting === 'function') this.#waiting = [waiting, onEnd];
    else waiting.push(onEnd);
  }

  /** Aborted, with the deadline's error as its reason, when the deadline ends. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#over) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get over(): boolean {
    return this.#over;
  }

  /** The error the deadline ended with; `undefined` while it runs. */
  get reason(): unknown {
    return this.#over ? this.#reason : undefined;
  }

  /** What is left of its time, in milliseconds; 0 once over. */
  remainingMs(): number {
    return this.#over ? 0 : Math.max(0, this.endsAt - performance.now());
  }

  /** Resolves once the deadline ends, whichever way; never once it is cleared. */
  ended(): Promise<void> {
    if (this.#over) return Promise.resolve();
    return new Promise((resolve) => this.#onEnd(() => resolve()));
  }

  /**
   * Settles with `promise`, or rejects with the deadline's error once it ends first. The
   * rejection of a `promise` that lost is handled.
   */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.#over) {
      promise.catch(() => {});
      return Promise.reject(this.#reason);
    }
    return new Promise<T>((resolve, reject) => {
      this.#onEnd(reject);
      promise.then(resolve, reject);
    });
  }

  /** Disarms the timer and the caller's listener; the deadline no longer ends by itself. */
  clear(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    remove(this);
    this.#waiting = undefined;
    this.#caller?.removeEventListener('abort', this);
  }
}

/**
 * Settles with `promise` within `ms` and `signal`, or rejects with the deadline's error; a
 * deadline made for one piece of work and cleared after it.
 */
export function within<T>(
  promise: Promise<T>,
  ms: number,
  signal: AbortSignal | undefined,
  errors: DeadlineErrors,
): Promise<T> {
  const deadline = new Deadline(ms, signal, errors);
  return deadline.race(promise).finally(() => deadline.clear());
}

/** What a `sleep` ends with when its time is up: not an error. */
const SLEPT = Symbol('slept');

/**
 * Waits `ms`, or rejects with `reason()` as soon as `signal` aborts: a deadline whose end by time
 * is the point. Never keeps a timer alive after; with `unref`, not even while it waits.
 */
export async function sleep(
  ms: number,
  signal: AbortSignal | undefined,
  reason: () => unknown,
  options?: { unref?: boolean },
): Promise<void> {
  const deadline = new Deadline(ms, signal, { timedOut: () => SLEPT, aborted: reason }, options);
  await deadline.ended();
  if (deadline.reason !== SLEPT) throw deadline.reason;
}

/** One wait on the shared timer: when it is due, what ends it then, and its place in the list. */
interface Wait {
  readonly endsAt: number;
  end(): void;
  waiting: boolean;
  prev: Wait | undefined;
  next: Wait | undefined;
}

/**
 * The waits of `settleWithin`, on one timer armed for the earliest of them and holding the process
 * only while one is waiting. Most of them settle within a turn of the event loop (a body that came
 * with its headers, a store in memory), where a timer and an AbortController each would cost more
 * than the wait itself; the few that last are ended on time all the same. A list linked through
 * the waits themselves: a Set added to and emptied once per wait would rebuild its table again
 * and again.
 */
let first: Wait | undefined;
let last: Wait | undefined;
let count = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
let armedAt = Number.POSITIVE_INFINITY;
/**
 * The `setTimeout` the timer was made with and its `clearTimeout`: a test that installs fake
 * timers (or takes them out) swaps them, and a timer of the other clock would fire at the wrong
 * time or never, and could only be cleared by its own clock.
 */
let armedWith: typeof setTimeout | undefined;
let disarm: typeof clearTimeout = clearTimeout;

function arm(at: number, now: number): void {
  disarm(timer);
  armedAt = at;
  armedWith = globalThis.setTimeout;
  disarm = globalThis.clearTimeout;
  timer = setTimeout(expire, Math.max(1, Math.ceil(at - now)));
  if (count === 0) timer.unref?.();
}

function expire(): void {
  // The timer was armed for `armedAt`: that time has come by the timers' clock, whatever
  // `performance.now()` says (a test's fake timers move one and not the other).
  const now = Math.max(performance.now(), armedAt);
  timer = undefined;
  armedAt = Number.POSITIVE_INFINITY;
  const due: Wait[] = [];
  let next = Number.POSITIVE_INFINITY;
  for (let wait = first; wait !== undefined; wait = wait.next) {
    // A timer may fire a fraction of a millisecond before the clock says it is due.
    if (wait.endsAt <= now + 1) due.push(wait);
    else if (wait.endsAt < next) next = wait.endsAt;
  }
  for (const wait of due) remove(wait);
  if (next !== Number.POSITIVE_INFINITY) arm(next, now);
  for (const wait of due) wait.end();
}

function add(wait: Wait, now: number): void {
  wait.waiting = true;
  wait.prev = last;
  if (last) last.next = wait;
  else first = wait;
  last = wait;
  count++;
  // A timer that should have fired long ago was lost (one made under a test's fake clock), or one
  // of the other clock is armed: re-arm.
  if (
    timer === undefined ||
    wait.endsAt < armedAt ||
    armedAt < now - 1_000 ||
    armedWith !== globalThis.setTimeout
  )
    arm(wait.endsAt, now);
  else if (count === 1) timer.ref?.();
}

/** Whether `wait` was still waiting (it is not any more). */
function remove(wait: Wait): boolean {
  if (!wait.waiting) return false;
  wait.waiting = false;
  if (wait.prev) wait.prev.next = wait.next;
  else first = wait.next;
  if (wait.next) wait.next.prev = wait.prev;
  else last = wait.prev;
  wait.prev = undefined;
  wait.next = undefined;
  if (--count === 0) timer?.unref?.();
  return true;
}

/** What `settleWithin` turns the outcome of its promise into, in the same turn. */
export interface SettleMap<T, U> {
  /** The value to resolve with; what it throws rejects. */
  settle?: (value: T) => U;
  /** The error to reject with when the promise rejected. */
  fail?: (error: unknown) => unknown;
}

/**
 * Settles with `promise` within `ms`, or rejects with `timedOut()` once `ms` passed first; what
 * `promise` does after that is ignored (a rejection too, so it is never unhandled). `Infinity`
 * bounds nothing; 0 or less times out at once. A `Deadline`'s `race` without a signal to abort:
 * no AbortController, and no timer of its own. `map.settle` and `map.fail` map what `promise`
 * settled with (a throw of `settle` rejects) in the same turn, where a `then` after would take one more.
 *
 * @example
 * const text = await settleWithin(request.text(), 10_000, () => new RequestTimeout());
 * const rows = await settleWithin(db.query(sql), 5_000, timedOut, { fail: (error) => new StoreError(error) });
 */
export function settleWithin<T, U = T>(
  promise: PromiseLike<T>,
  ms: number,
  timedOut: () => unknown,
  map: SettleMap<T, U> = {},
): Promise<U> {
  const settle = map.settle ?? ((value: T) => value as unknown as U);
  const fail = map.fail ?? ((error: unknown) => error);
  if (ms === Number.POSITIVE_INFINITY)
    return Promise.resolve(promise).then(settle, (error: unknown) => Promise.reject(fail(error)));
  if (!(ms > 0)) {
    promise.then(undefined, () => {});
    return Promise.reject(timedOut());
  }
  return new Promise<U>((resolve, reject) => {
    const now = performance.now();
    const end = (make: () => unknown) => {
      try {
        reject(make());
      } catch (error) {
        reject(error);
      }
    };
    const wait: Wait = {
      endsAt: now + ms,
      end: () => end(timedOut),
      waiting: false,
      prev: undefined,
      next: undefined,
    };
    add(wait, now);
    promise.then(
      (value) => {
        if (!remove(wait)) return;
        try {
          resolve(settle(value));
        } catch (error) {
          reject(error);
        }
      },
      (error: unknown) => {
        if (remove(wait)) end(() => fail(error));
      },
    );
  });
}
