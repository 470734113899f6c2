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
 * Reads a response body to text within `ms`, or until `signal` aborts; either way the body is
 * cancelled, which releases the connection. A body that breaks off is `broken(cause)`.
 */
export async function readText(
  response: Response,
  ms: number,
  signal: AbortSignal | undefined,
  timedOut: () => unknown,
  aborted: () => unknown,
  broken: (cause: unknown) => unknown,
): Promise<string> {
  const body = response.body;
  if (!body) return '';
  const reader = body.getReader();
  if (ms <= 0 || signal?.aborted) {
    reader.cancel().catch(() => {});
    throw ms <= 0 ? timedOut() : aborted();
  }
  // Cancelling the reader settles a pending read (as done), so no race per chunk is needed.
  let halted: unknown;
  const halt = (error: unknown) => {
    halted ??= error;
    reader.cancel().catch(() => {});
  };
  const timer = setTimeout(() => halt(timedOut()), ms);
  const onAbort = () => halt(aborted());
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        throw halted ?? broken(error);
      }
      if (halted !== undefined) throw halted;
      if (next.done) break;
      chunks.push(next.value);
      size += next.value.byteLength;
    }
    if (chunks.length === 1) return decoder.decode(chunks[0]);
    const all = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      all.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return decoder.decode(all);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

const decoder = new TextDecoder();
