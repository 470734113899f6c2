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

/** What `readText` turns into errors; each builds the error to throw. */
export interface BodyErrors {
  timedOut: () => unknown;
  aborted: () => unknown;
  broken: (cause: unknown) => unknown;
}

/**
 * Reads a response (or request) body to text within `ms`, or until `signal` aborts; either way the body is
 * cancelled, which releases the connection. A body that breaks off is `broken(cause)`. A body
 * longer than `maxBytes` is cancelled as soon as that is known, and `undefined` is returned: an
 * endless or oversized answer must not fill the heap before the timeout.
 */
export async function readText(
  response: Pick<Response, 'body' | 'headers'>,
  ms: number,
  maxBytes: number,
  signal: AbortSignal | undefined,
  errors: BodyErrors,
): Promise<string | undefined> {
  const body = response.body;
  if (!body) return '';
  const reader = body.getReader();
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (ms <= 0 || signal?.aborted || declared > maxBytes) {
    reader.cancel().catch(() => {});
    if (declared > maxBytes && ms > 0 && !signal?.aborted) return undefined;
    throw ms <= 0 ? errors.timedOut() : errors.aborted();
  }
  // Cancelling the reader settles a pending read (as done), so no race per chunk is needed.
  let halted: unknown;
  const halt = (error: unknown) => {
    halted ??= error;
    reader.cancel().catch(() => {});
  };
  const timer = setTimeout(() => halt(errors.timedOut()), ms);
  const onAbort = () => halt(errors.aborted());
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        throw halted ?? errors.broken(error);
      }
      if (halted !== undefined) throw halted;
      if (next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) {
        reader.cancel().catch(() => {});
        return undefined;
      }
      chunks.push(next.value);
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
