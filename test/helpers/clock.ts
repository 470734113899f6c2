import { vi } from 'vitest';

/**
 * The test's own clock, for tests of quotes and deadlines of seconds: `Date`, `performance` and
 * the timers are vitest's, and move with the real clock (so servers, sockets and the simulator
 * over HTTP go on as usual) and by leaps where a test waits (`later`, `untilAborted`). A quote
 * of 3 s then runs out in the time its timers take to fire, not in 3 s. Put back after each test
 * (test/setup.ts). `setImmediate` stays real: the leaps yield to I/O through it.
 */
export function useTestClock(): void {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    shouldAdvanceTime: true,
  });
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Waits `ms`: on the test's clock, a leap; otherwise in real time. */
export async function later(ms: number): Promise<void> {
  if (!vi.isFakeTimers()) return new Promise((resolve) => setTimeout(resolve, ms));
  await vi.advanceTimersByTimeAsync(ms);
}

/**
 * Until `signal` aborts (a deadline the code under test set), or forever without one. On the
 * test's clock, time leaps to each timer in turn until it does; a turn of I/O between leaps lets
 * an answer in flight arrive first.
 */
export function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return new Promise(() => {});
  const aborted = signal.aborted
    ? Promise.resolve()
    : new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  return vi.isFakeTimers() ? leaping(aborted) : aborted;
}

/**
 * `work`'s outcome, time leaping to each timer in turn until it settles: for code whose waits are
 * timers (a mocked fetch, the simulator in process). An answer in flight on a socket is waited for
 * in real time: a leap would fire its timeout first, so none is made while `busy()` (a request
 * counter of the test's `fetch`, see `countingFetch`). Needs the test's clock (`useTestClock`).
 */
export async function leaping<T>(work: Promise<T>, busy: () => boolean = () => false): Promise<T> {
  let settled = false;
  const done = () => {
    settled = true;
  };
  work.then(done, done);
  while (!settled) {
    await turn();
    if (!settled && !busy() && vi.getTimerCount() > 0) await vi.advanceTimersToNextTimerAsync();
  }
  return work;
}

/**
 * The runtime's `fetch` (as it is now: the answer may be put in its place with `vi.stubGlobal`),
 * counting the requests in flight (`busy`) for `leaping`.
 */
export function countingFetch(): { fetch: typeof globalThis.fetch; busy: () => boolean } {
  const runtime = globalThis.fetch;
  let inFlight = 0;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    inFlight++;
    try {
      const response = await runtime(input, init);
      // The body is read by the client after this resolves: buffered here, so that the request
      // is over once it is counted out (a 204 has none to buffer).
      return new Response(response.body === null ? null : await response.arrayBuffer(), response);
    } finally {
      inFlight--;
    }
  };
  return { fetch, busy: () => inFlight > 0 };
}
