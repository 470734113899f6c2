import { z } from 'zod';
import { isPartnerError } from '../errors/base.js';
import { ArgumentError } from '../errors/client-errors.js';
import { toIssues } from '../schemas/issues.js';

/**
 * Runs code that reads caller-supplied values. A getter or proxy that throws would otherwise escape
 * as whatever it threw; it becomes an `ArgumentError` (the original in `cause`), before any request.
 */
export function readArgs<T>(where: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (isPartnerError(error)) throw error;
    throw new ArgumentError({
      where,
      issues: [{ path: '', message: 'could not be read: reading them threw' }],
      cause: error,
    });
  }
}

/** Checks a method's arguments; every problem is named at once, before any request. */
export function parseArgs<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const result = readArgs(where, () => schema.safeParse(value));
  if (result.success) return result.data;
  throw new ArgumentError({ where, issues: toIssues(result.error) });
}

/** An object with the named methods: a store, a router, anything the SDK calls back into. */
export function withMethods<T>(names: readonly string[], message: string) {
  return z.custom<T>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function'),
    message,
  );
}

// The shared argument schemas are `z.lazy`: each is built on the first parse that needs it, so that
// importing the SDK builds none of them (each chain of checks is 2 to 4 zod schemas to build).
export const nonEmptyString = z.lazy(() =>
  z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty'),
);

/** Node's timers take at most 2^31 − 1 ms; a longer delay fires at once instead. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A duration that a timer can hold. */
export const durationMs = z.lazy(() =>
  z
    .int({ error: 'must be a whole number of milliseconds' })
    .positive('must be positive')
    .max(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} (about 24.8 days)`),
);

/** A size limit in bytes. */
export const byteCount = z.lazy(() =>
  z.int({ error: 'must be a whole number of bytes' }).positive('must be positive'),
);

export const maxRetries = z.lazy(() =>
  z.int({ error: 'must be an integer' }).min(0, 'must not be negative').max(10, 'must be at most 10'),
);

// ky hands the signal to `AbortSignal.any`, which takes only real AbortSignals.
const abortSignal = z.custom<AbortSignal>((value) => value instanceof AbortSignal, 'must be an AbortSignal');

/** The options every method takes; unknown keys are left alone so that options can grow. */
export const requestOptionsSchema = z.looseObject({
  signal: abortSignal.optional(),
  timeoutMs: durationMs.optional(),
  maxRetries: maxRetries.optional(),
});

/**
 * Checks a method's options (the common case, none, costs nothing) and returns a copy read once,
 * so that a getter cannot answer differently later.
 */
export function parseOptions<S extends z.ZodType, T>(
  schema: S,
  options: T | undefined,
  where: string,
): T | undefined {
  if (options === undefined) return undefined;
  return parseArgs(schema, options, `${where} (options)`) as T;
}

/**
 * Checks an `on`/`once`/`off` call: a known event name and a function. An unknown name would never
 * fire, and a listener that is no function would throw deep inside the emitter at the next event.
 */
export function checkListener(
  where: string,
  events: readonly string[],
  event: unknown,
  listener: unknown,
): void {
  const issues: { path: string; message: string }[] = [];
  readArgs(where, () => {
    if (typeof event !== 'string' || !events.includes(event))
      issues.push({ path: 'event', message: `must be one of ${events.join(', ')}` });
    if (typeof listener !== 'function') issues.push({ path: 'listener', message: 'must be a function' });
  });
  if (issues.length > 0) throw new ArgumentError({ where, issues });
}
