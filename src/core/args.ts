import * as z from 'zod';
import { isPartnerError } from '../errors/base.js';
import { ArgumentError } from '../errors/client-errors.js';
import { toIssues } from '../schemas/issues.js';
import { ApiPromise, type ResponseSink } from './api-promise.js';
import { LOG_LEVELS, type Logger } from './logger.js';
import type { RequestOptions } from './request-options.js';

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

/** A `logger` option: what the client and the router write their lines to. */
export const loggerOption = z.lazy(() =>
  withMethods<Logger>(['debug', 'info', 'warn', 'error'], 'must have debug, info, warn and error methods'),
);

/** A `logLevel` option. */
export const logLevelOption = z.lazy(() =>
  z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }),
);

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

// A signal from another realm or library may not fire `abort` the way the SDK listens for it, and
// an object that only inherits from AbortSignal throws a TypeError at its first read.
const abortSignal = () =>
  z.custom<AbortSignal>((value) => {
    if (!(value instanceof AbortSignal)) return false;
    try {
      return typeof value.aborted === 'boolean';
    } catch {
      return false;
    }
  }, 'must be an AbortSignal');

/** Headers only the SDK sets: a caller's value would replace the bearer token or break the body. */
const RESERVED_HEADERS = new Set(['authorization', 'content-type', 'content-length', 'host']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Extra headers, names lowercased. A value of `null` (or `undefined`) takes out a default header.
 * CR, LF and NUL are refused (they would split the header), and so is a character above U+00FF,
 * which fetch cannot send. The values are never shown in an error.
 */
export const headersSchema = z.lazy(() =>
  z
    .record(z.string(), z.union([z.string(), z.null(), z.undefined()]), {
      error: 'must be an object of header values',
    })
    .superRefine((headers, ctx) => {
      for (const [name, value] of Object.entries(headers)) {
        if (!HEADER_NAME.test(name))
          ctx.addIssue({ code: 'custom', path: [name], message: 'is not a valid header name' });
        else if (RESERVED_HEADERS.has(name.toLowerCase()))
          ctx.addIssue({
            code: 'custom',
            path: [name],
            message: 'is set by the SDK and cannot be overridden',
          });
        if (typeof value === 'string' && /[\r\n\0]/.test(value))
          ctx.addIssue({ code: 'custom', path: [name], message: 'must not contain CR, LF or NUL' });
        // fetch throws on such a value at every attempt: a ConnectionError after all the retries.
        else if (typeof value === 'string' && /[\u0100-\uffff]/.test(value))
          ctx.addIssue({
            code: 'custom',
            path: [name],
            message: 'must be Latin-1 (no character above U+00FF): percent-encode other text',
          });
      }
    })
    .transform((headers) => {
      const out: Record<string, string | null> = {};
      for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value ?? null;
      return out;
    }),
);

/**
 * Fields of a fetch init the caller may add to (a `dispatcher`, `keepalive`, …), copied once here:
 * read at each attempt, a throwing proxy would fail the call after it started and a getter could
 * answer differently at each retry.
 */
export const fetchOptionsSchema = z.lazy(() =>
  z
    .custom<Record<string, unknown>>(
      (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
      'must be an object of fetch init fields',
    )
    .transform((value, ctx) => {
      try {
        return { ...value };
      } catch {
        ctx.addIssue({ code: 'custom', message: 'could not be read: reading its fields threw' });
        return z.NEVER;
      }
    }),
);

/** The options every method takes; unknown keys are left alone so that options can grow. */
export const requestOptionsSchema = z.lazy(() =>
  z.looseObject({
    signal: abortSignal().optional(),
    timeoutMs: durationMs.optional(),
    maxRetries: maxRetries.optional(),
    maxRetryTimeMs: durationMs.optional(),
    headers: headersSchema.optional(),
    fetchOptions: fetchOptionsSchema.optional(),
  }),
);

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

/**
 * A data method's body: its options checked (an `ArgumentError` rejects the promise, before any
 * request), and `sink`, to which the requests it makes report their answers for `.withResponse()`.
 *
 * @example
 * routes(options) { return apiCall(options, 'bridge.routes', (checked, sink) => this.call(ENDPOINTS.routes, undefined, checked, sink)); }
 */
export function apiCall<T, O extends object = RequestOptions>(
  options: O | undefined,
  where: string,
  run: (options: O | undefined, sink: ResponseSink) => Promise<T>,
  schema: z.ZodType = requestOptionsSchema,
): ApiPromise<T> {
  return new ApiPromise((sink) => run(parseOptions(schema, options, where), sink));
}
