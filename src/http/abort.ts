/** Signals and deadlines (body reading is in body.ts, so the transport and handlers share one reader). */

/** Rejects with `reason()` once `signal` aborts; settles with `promise` otherwise. Leaves no listener. */
export function raceSignal<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  reason: () => unknown,
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(reason());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(reason());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits `ms`, or rejects with `reason()` as soon as `signal` aborts. Never keeps a timer alive after. */
export function sleep(ms: number, signal: AbortSignal | undefined, reason: () => unknown): Promise<void> {
  if (ms <= 0) return signal?.aborted ? Promise.reject(reason()) : Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const wait = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return raceSignal(wait, signal, reason).finally(() => clearTimeout(timer));
}

/**
 * Settles with `promise`, or rejects with `timedOut()` after `ms` or with `aborted()` once `signal`
 * aborts, whichever comes first. The timer is cleared either way, so it keeps nothing alive.
 */
export function within<T>(
  promise: Promise<T>,
  ms: number,
  signal: AbortSignal | undefined,
  timedOut: () => unknown,
  aborted: () => unknown,
): Promise<T> {
  if (ms <= 0) {
    promise.catch(() => {});
    return Promise.reject(timedOut());
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  promise.catch(() => {});
  return raceSignal(Promise.race([promise, deadline]), signal, aborted).finally(() => clearTimeout(timer));
}
