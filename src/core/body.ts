/**
 * The one capped body reader of the SDK: responses in the transport, deliveries in the callback
 * handlers (web streams and node:http requests), requests in the simulator. Each source is pumped
 * into the same bounds: a byte cap known as soon as it is passed, and a `Deadline`. In core/, beside
 * time, because both sides read bodies: the callback receiver does not import the client's HTTP
 * layer for it.
 */

import { Deadline, settleWithin, within as withinDeadline } from './time.js';

/** What reading a body turns into errors; each builds the error to throw. */
export interface BodyErrors {
  timedOut: () => unknown;
  aborted: () => unknown;
  broken: (cause: unknown) => unknown;
}

/** The bounds of one read. */
export interface BodyLimits {
  /** Past this many bytes reading stops and the result is `undefined`. `Infinity` for none. */
  maxBytes: number;
  /** Time of the whole read; `Infinity` for none, 0 or less times out at once. */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
  /**
   * The deadline of the work the read is part of (an attempt), in place of `timeoutMs` and
   * `signal`: its error ends the read. The caller clears it.
   */
  deadline?: Deadline | undefined;
}

/**
 * The events a node:http request (any node Readable) emits, typed loosely so that this layer
 * imports nothing from node and the transport stays usable where node:stream is missing.
 */
export interface NodeBody {
  on(event: 'data' | 'end' | 'error' | 'close', listener: (...args: never[]) => void): unknown;
}

const decoder = new TextDecoder();

/** UTF-8 text of bytes read by `readBytes` or `readNodeBytes`. */
export function decodeText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Chunks under a byte cap, joined once at the end. */
class Chunks {
  readonly #parts: Uint8Array[] = [];
  #size = 0;
  constructor(readonly maxBytes: number) {}

  /** Adds a chunk; false once the cap is passed (the chunk is then dropped). */
  add(chunk: Uint8Array): boolean {
    this.#size += chunk.byteLength;
    if (this.#size > this.maxBytes) return false;
    this.#parts.push(chunk);
    return true;
  }

  join(): Uint8Array {
    if (this.#parts.length === 1) return this.#parts[0]!;
    const all = new Uint8Array(this.#size);
    let offset = 0;
    for (const part of this.#parts) {
      all.set(part, offset);
      offset += part.byteLength;
    }
    return all;
  }
}

/** The read's deadline: the one given, or one of its own made from `timeoutMs` and `signal`. */
function deadlineOf(limits: BodyLimits, errors: BodyErrors): Deadline {
  return limits.deadline ?? new Deadline(limits.timeoutMs ?? Number.POSITIVE_INFINITY, limits.signal, errors);
}

/**
 * Calls `halt` at most once with the deadline's error when it ends. Returns the disarm, which
 * leaves no timer and no listener behind (a given deadline is its owner's to clear).
 */
function watch(limits: BodyLimits, deadline: Deadline, halt: (error: unknown) => void): () => void {
  const onEnd = () => halt(deadline.reason);
  deadline.signal.addEventListener('abort', onEnd, { once: true });
  return () => {
    deadline.signal.removeEventListener('abort', onEnd);
    if (deadline !== limits.deadline) deadline.clear();
  };
}

/**
 * Reads a web body (a `Response`'s or a `Request`'s) within `limits`; either way the body is
 * cancelled, which releases the connection. A body that breaks off is `broken(cause)`. A body
 * longer than `maxBytes` (declared or counted) is cancelled as soon as that is known and
 * `undefined` is returned: an endless or oversized body must not fill the heap before the deadline.
 *
 * @example
 * const bytes = await readBytes(response, { maxBytes: 1_048_576, timeoutMs: 5_000 }, errors);
 */
export async function readBytes(
  message: Pick<Response, 'body' | 'headers'>,
  limits: BodyLimits,
  errors: BodyErrors,
): Promise<Uint8Array | undefined> {
  const body = message.body;
  if (!body) return new Uint8Array(0);
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = body.getReader();
  } catch (error) {
    throw errors.broken(error);
  }
  const declared = Number(message.headers.get('content-length') ?? 0);
  const deadline = deadlineOf(limits, errors);
  if (deadline.over || declared > limits.maxBytes) {
    reader.cancel().catch(() => {});
    if (deadline !== limits.deadline) deadline.clear();
    if (!deadline.over) return undefined;
    throw deadline.reason;
  }
  // Cancelling the reader settles a pending read (as done), so no race per chunk is needed.
  let halted: unknown;
  const disarm = watch(limits, deadline, (error) => {
    halted ??= error;
    reader.cancel().catch(() => {});
  });
  try {
    const chunks = new Chunks(limits.maxBytes);
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        throw halted ?? errors.broken(error);
      }
      if (halted !== undefined) throw halted;
      if (next.done) return chunks.join();
      if (!chunks.add(next.value)) {
        reader.cancel().catch(() => {});
        return undefined;
      }
    }
  } finally {
    disarm();
  }
}

/** Digits only: a content-length as an HTTP message carries it, nothing `Number` would bend. */
const LENGTH = /^\d{1,15}$/;

/**
 * A request body's text, read whole with `text()` when its declared length is within the cap;
 * otherwise (no length, or one a decoding may outgrow) with `readBytes`. A server's HTTP parser
 * frames the body by that length, so the read is bounded without counting chunks, and adapters
 * that present node:http as a `Request` (Hono's) read it straight from the socket, where a reader
 * would have them build a web stream first. The text is checked against that length all the same
 * (see `framed`). The deadline ends the wait; the read itself cannot be cancelled, and stops at
 * the framed length or when the connection closes. `length` is the content-length header when the
 * caller has read it already.
 *
 * @example
 * const text = await readRequestText(request, { maxBytes: 1_048_576, timeoutMs: 10_000 }, errors);
 */
export function readRequestText(
  message: Pick<Request, 'body' | 'headers' | 'text'>,
  limits: BodyLimits,
  errors: BodyErrors,
  length: string | null = message.headers.get('content-length'),
): Promise<string | undefined> {
  if (
    length === null ||
    !LENGTH.test(length) ||
    Number(length) > limits.maxBytes ||
    message.headers.has('content-encoding')
  ) {
    return readBytes(message, limits, errors).then((bytes) =>
      bytes === undefined ? undefined : decoder.decode(bytes),
    );
  }
  const declared = Number(length);
  let reading: Promise<string>;
  try {
    reading = message.text();
  } catch (error) {
    return Promise.reject(errors.broken(error));
  }
  const ms = limits.timeoutMs ?? Number.POSITIVE_INFINITY;
  const check = (text: string) => framed(text, declared, limits.maxBytes, errors);
  if (limits.deadline || limits.signal) {
    const read = reading.then(check, (error: unknown) => Promise.reject(errors.broken(error)));
    return limits.deadline ? limits.deadline.race(read) : withinDeadline(read, ms, limits.signal, errors);
  }
  // Time alone: the shared timer's, with the check in the same turn.
  return settleWithin(reading, ms, errors.timedOut, { settle: check, fail: errors.broken });
}

/**
 * A body read by its declared length, held to it. Behind a server the HTTP parser has framed it
 * so; a `Request` built in process may carry a stream that says otherwise, and is refused as one
 * whose length is wrong: past the cap as too large (`undefined`), else as broken. The text counts
 * its bytes without encoding it again unless it is shorter than declared (UTF-8 has at least one
 * byte per UTF-16 unit, and a decoding never yields fewer bytes than it was given).
 */
function framed(text: string, declared: number, maxBytes: number, errors: BodyErrors): string | undefined {
  if (!withinBytes(text, maxBytes)) return undefined;
  if (text.length > declared) throw errors.broken(new Error('the body is longer than its content-length'));
  if (text.length < declared && (text.length * 3 < declared || encoder.encode(text).byteLength < declared))
    throw errors.broken(new Error('the body is shorter than its content-length'));
  return text;
}

const encoder = new TextEncoder();

/**
 * Whether decoded text came from at most `maxBytes` bytes. UTF-8 takes at most 3 bytes per UTF-16
 * unit (a replacement character included), so only text near the cap is encoded again to count.
 */
export function withinBytes(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return false;
  return text.length * 3 <= maxBytes || encoder.encode(text).byteLength <= maxBytes;
}

/**
 * `readBytes` as text within an attempt's deadline (the transport's shape).
 *
 * @example
 * const text = await readText(response, deadline, 1_048_576, errors);
 */
export async function readText(
  message: Pick<Response, 'body' | 'headers'>,
  deadline: Deadline,
  maxBytes: number,
  errors: BodyErrors,
): Promise<string | undefined> {
  const bytes = await readBytes(message, { maxBytes, deadline }, errors);
  return bytes === undefined ? undefined : decoder.decode(bytes);
}

/**
 * Reads a node:http request body within `limits`. Past `maxBytes` the rest is not kept and
 * `undefined` is returned; the caller decides whether to close the connection. The listeners stay
 * attached after the read, so a late `error` on the request is never left unhandled.
 *
 * @example
 * const bytes = await readNodeBytes(req, { maxBytes: 1_048_576, timeoutMs: 10_000 }, errors);
 */
export function readNodeBytes(
  stream: NodeBody,
  limits: BodyLimits,
  errors: BodyErrors,
): Promise<Uint8Array | undefined> {
  if (limits.deadline?.over) return Promise.reject(limits.deadline.reason);
  if ((limits.timeoutMs ?? 1) <= 0) return Promise.reject(errors.timedOut());
  if (limits.signal?.aborted) return Promise.reject(errors.aborted());
  return new Promise((resolve, reject) => {
    const chunks = new Chunks(limits.maxBytes);
    let done = false;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      disarm();
      settle();
    };
    let disarm = () => {};
    stream.on('data', (chunk: Uint8Array) => {
      if (!done && !chunks.add(chunk)) finish(() => resolve(undefined));
    });
    stream.on('end', () => finish(() => resolve(chunks.join())));
    stream.on('error', (error: unknown) => finish(() => reject(errors.broken(error))));
    stream.on('close', () =>
      finish(() => reject(errors.broken(new Error('the request closed before its body ended')))),
    );
    // Armed once the listeners are on, so a stream that refuses them leaves no timer. A node:http
    // server's own requestTimeout may be 0 (none): a body dripping a byte at a time is cut here.
    disarm = watch(limits, deadlineOf(limits, errors), (error) => finish(() => reject(error)));
  });
}

const WHOLE: BodyLimits = { maxBytes: Number.POSITIVE_INFINITY, timeoutMs: Number.POSITIVE_INFINITY };
/** With no deadline and no signal only `broken` can happen: the body's own error, as it is. */
const OWN_ERRORS: BodyErrors = {
  timedOut: () => undefined,
  aborted: () => undefined,
  broken: (cause) => cause,
};

/**
 * A web body read whole, with no bound: for the simulator, which stands for a service that sets
 * none. A body that breaks rejects with its own error.
 *
 * @example
 * const text = await readWholeText(request);
 */
export async function readWholeText(message: Pick<Response, 'body' | 'headers'>): Promise<string> {
  return decoder.decode(await readBytes(message, WHOLE, OWN_ERRORS));
}

/**
 * A node:http request body read whole, with no bound (see `readWholeText`).
 *
 * @example
 * const bytes = await readWholeBody(req);
 */
export async function readWholeBody(stream: NodeBody): Promise<Uint8Array<ArrayBuffer>> {
  return (await readNodeBytes(stream, WHOLE, OWN_ERRORS)) as Uint8Array<ArrayBuffer>;
}
