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
