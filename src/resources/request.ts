import * as z from 'zod';
import type { ResponseSink } from '../core/api-promise.js';
import { parseArgs } from '../core/args.js';
import { API_PREFIX } from '../core/defaults.js';
import {
  isStandardSchema,
  type ParseResult,
  type StandardSchemaV1,
  standardParse,
} from '../core/standard-schema.js';
import { ArgumentError } from '../errors/client-errors.js';
import { type DataRequest, fillPath, type Method, type Parser } from '../http/types.js';
import type { IssueList } from '../schemas/issues.js';
import { paramProblem, segmentProblem } from './params.js';

/** Query values: each `undefined` is left out, an array repeats the name. */
export type QueryValue = string | number | boolean | undefined | readonly (string | number | boolean)[];

/**
 * A request to any endpoint of the interface, for the areas the SDK has no method for yet
 * (staking pools, stocks, users, portfolio, the transaction index).
 *
 * @example
 * const pools = await client.request({
 *   method: 'GET',
 *   path: '/staking/pools',
 *   scopes: ['staking:read'],
 *   schema: z.array(z.object({ poolId: z.string() })),
 * });
 */
export interface ApiRequest<T = unknown> {
  /**
   * @default 'GET'
   * @example { method: 'POST', path: '/users', body: { email } }
   */
  method?: Method;
  /**
   * Below `/api/v1/s2s`, such as `/users/{userId}/portfolio`; `{name}` is filled from `params`
   * (encoded), and events, logs and spans show the template. An absolute URL, a `..` or `.`
   * segment (also percent-encoded, once or more, or followed by `;`), a query or fragment, or
   * anything that would leave the prefix is an `ArgumentError`, so that the bearer token goes
   * nowhere else.
   * @example { path: '/users/{userId}/portfolio', params: { userId } }
   */
  path: string;
  /**
   * Values for the `{name}` placeholders of `path`, each an own property. A value that is `.` or
   * `..` or holds a slash, also once percent-decoded, is an `ArgumentError`.
   * @example { path: '/users/{userId}', params: { userId: 'usr_123' } }
   */
  params?: Record<string, string>;
  /**
   * The query string, as an object (an array repeats the name, `undefined` is left out) or
   * `URLSearchParams` (its entries are copied when the call starts).
   * @example { path: '/bridge/transfers', query: { userId, status: 'delivered', limit: 50 } }
   */
  query?: Record<string, QueryValue> | URLSearchParams;
  /**
   * A JSON body (POST, PUT, PATCH). Amounts go as decimal strings: a `bigint` or a number that is
   * not finite is an `ArgumentError`, never a silent rounding.
   * @example { method: 'POST', path: '/users', body: { email: 'a@example.com' } }
   */
  body?: unknown;
  /**
   * The scopes the endpoint needs, named in a 403's message.
   * @example { path: '/stocks', scopes: ['stocks:read'] }
   */
  scopes?: readonly string[];
  /**
   * Any Standard Schema (a zod 4 schema, valibot, arktype, …): it types and checks the answer's
   * `data`. Without it the answer is `unknown`. An object with zod's `safeParse` is still taken.
   * @example { path: '/me', schema: z.object({ scopes: z.array(z.string()) }) }
   */
  schema?: StandardSchemaV1<unknown, T>;
  /**
   * Take `data` out of the `{ data }` envelope, as every method of the SDK does. `false` gives the
   * whole body (a list's pagination fields, say).
   * @default true
   * @example { path: '/bridge/transfers', query: { userId }, unwrap: false } // { data, pagination }
   */
  unwrap?: boolean;
  /**
   * Whether sending the request twice acts only once. A GET is; a POST, PUT, PATCH or DELETE is
   * not assumed to be, and is then retried only after a 429 or a connection that never reached the
   * service, never after a timeout or a 5xx, where the service may have acted. Set `true` for a
   * write the service deduplicates, to retry it like a read. Either way a first 401 is sent once
   * more with a new token: the service refuses a token before acting on the request.
   * @default true for GET, false otherwise
   * @example { method: 'POST', path: '/users/{userId}/wallet/link', params: { userId }, idempotent: true }
   */
  idempotent?: boolean;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const PLACEHOLDER = /\{(\w+)\}/g;

/** Why `path` (the template, before placeholders are filled) is refused, if it is. */
function pathProblem(path: string): string | undefined {
  if (path.length === 0) return 'must not be empty';
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('//'))
    return `must be a path below ${API_PREFIX}, not a URL: the bearer token goes only to the service`;
  if (/[\s\\]/.test(path) || [...path].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    return 'must not contain spaces, backslashes or control characters';
  if (path.includes('?') || path.includes('#')) return 'must not hold a query or fragment: pass `query`';
  return segmentsProblem(path);
}

function segmentsProblem(path: string): string | undefined {
  for (const segment of path.split('/')) {
    const problem = segmentProblem(segment);
    if (problem) return problem;
  }
  return undefined;
}

// Built on the first `client.request`, not at import, like the SDK's other schemas.
const querySchema = z.lazy(() =>
  z.union([
    // A copy read through the class's own method: a subclass's `toString` or iterator could say
    // anything, and differently at each retry.
    z.instanceof(URLSearchParams).transform((query, ctx) => {
      try {
        return new URLSearchParams(URLSearchParams.prototype.toString.call(query));
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a real URLSearchParams or an object of values' });
        return z.NEVER;
      }
    }),
    z.record(
      z.string(),
      z.union([
        z.string(),
        z.number().finite(),
        z.boolean(),
        z.undefined(),
        z.array(z.union([z.string(), z.number().finite(), z.boolean()])),
      ]),
    ),
  ]),
);

const requestSchema = z.lazy(() =>
  z
    .strictObject({
      method: z.enum(METHODS, { error: `must be one of ${METHODS.join(', ')}` }).optional(),
      path: z.string({ error: 'must be a string' }),
      params: z.record(z.string(), z.string({ error: 'must be a string' })).optional(),
      query: querySchema.optional(),
      body: z.unknown().optional(),
      scopes: z.array(z.string()).optional(),
      schema: z
        .custom<Parser<unknown>>(
          (value) => isStandardSchema(value) || hasSafeParse(value),
          'must be a Standard Schema (a zod schema, say)',
        )
        .transform((value): Parser<unknown> => toParser(value))
        .optional(),
      unwrap: z.boolean().optional(),
      idempotent: z.boolean().optional(),
    })
    .superRefine((value, ctx) => {
      const problem = pathProblem(value.path);
      if (problem) {
        ctx.addIssue({ code: 'custom', path: ['path'], message: problem });
        return;
      }
      const names = [...value.path.matchAll(PLACEHOLDER)].map((match) => match[1] as string);
      const params = value.params ?? {};
      let fillable = true;
      for (const name of names) {
        // Own values only: `{constructor}` must not be filled from Object.prototype.
        const given = Object.hasOwn(params, name) ? params[name] : undefined;
        let message: string | undefined;
        if (given === undefined) message = 'is named in path but not given';
        else if (given.length === 0) message = 'must not be empty';
        else if (paramProblem(given))
          message =
            'must not be `.` or `..` or hold a slash, also once percent-decoded: it would leave its segment';
        if (message) {
          fillable = false;
          ctx.addIssue({ code: 'custom', path: ['params', name], message });
        }
      }
      // Values that pass alone may still make a way out together (`%2` and `e%2e` in `{a}{b}`).
      const joined = fillable && names.length > 0 ? segmentsProblem(fillPath(value.path, params)) : undefined;
      if (joined)
        ctx.addIssue({ code: 'custom', path: ['params'], message: `once filled into path, ${joined}` });
      if (value.body !== undefined && (value.method ?? 'GET') === 'GET')
        ctx.addIssue({ code: 'custom', path: ['body'], message: 'a GET has no body: use `query`' });
    }),
);

/** JSON of a caller's body; a bigint or a non-finite number is refused rather than rounded or nulled. */
function serialiseBody(body: unknown, where: string): string {
  let problem: string | undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(body, (_, value: unknown) => {
      if (typeof value === 'bigint') problem ??= 'holds a bigint: send amounts as decimal strings';
      if (typeof value === 'number' && !Number.isFinite(value))
        problem ??= 'holds a number that is not finite';
      return typeof value === 'bigint' ? undefined : value;
    });
  } catch (error) {
    throw new ArgumentError({
      where,
      issues: [{ path: 'body', message: 'could not be serialised as JSON (a cycle?)' }],
      cause: error,
    });
  }
  if (problem) throw new ArgumentError({ where, issues: [{ path: 'body', message: problem }] });
  if (text === undefined)
    throw new ArgumentError({ where, issues: [{ path: 'body', message: 'is not JSON' }] });
  return text;
}

function toSearchParams(query: Record<string, QueryValue> | URLSearchParams | undefined) {
  if (query === undefined || query instanceof URLSearchParams) return query;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) params.append(name, String(item));
    else params.append(name, String(value));
  }
  return params;
}

const envelopeIssue: IssueList = {
  issues: [
    { path: ['data'], message: 'the answer has no `data` envelope (pass unwrap: false for the whole body)' },
  ],
};

function hasSafeParse(value: unknown): value is Parser<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { safeParse?: unknown }).safeParse === 'function'
  );
}

/** A caller's schema as the transport reads it: through the Standard Schema interface when it has one. */
function toParser(schema: StandardSchemaV1 | Parser<unknown>): Parser<unknown> {
  if (!isStandardSchema(schema)) return schema;
  return { safeParse: (value) => standardParse(schema, value) };
}

/** Issue paths say where in the body: under `data`. */
function underData<T>(result: ParseResult<T>): ParseResult<{ data: T }> {
  if (result.success) return { success: true, data: { data: result.data } };
  return {
    success: false,
    error: { issues: result.error.issues.map((issue) => ({ ...issue, path: ['data', ...issue.path] })) },
  };
}

/** Reads a `{ data }` answer whose `data` the caller's schema (if any) checks; the call takes `data` off. */
function inEnvelope(schema: Parser<unknown> | undefined): Parser<{ data: unknown }> {
  return {
    safeParse(value: unknown) {
      if (typeof value !== 'object' || value === null || !('data' in value))
        return { success: false, error: envelopeIssue };
      const data = (value as { data: unknown }).data;
      if (!schema) return { success: true, data: { data } };
      const result = schema.safeParse(data);
      return result instanceof Promise ? result.then(underData) : underData(result);
    },
  };
}

/**
 * The request `input` describes, checked before anything is sent: it goes out with the same token,
 * retries, timeouts and typed errors as the SDK's own methods.
 */
export function requestOf<T>(input: ApiRequest<T>, where: string, sink?: ResponseSink): DataRequest<T> {
  const spec = parseArgs(requestSchema, input, where);
  const method = spec.method ?? 'GET';
  const params = spec.params;
  const body = spec.body === undefined ? undefined : serialiseBody(spec.body, where);
  const searchParams = toSearchParams(spec.query);
  const unwrap = spec.unwrap ?? true;
  return {
    method,
    path: spec.path.startsWith('/') ? spec.path : `/${spec.path}`,
    ...(params ? { params } : {}),
    ...(sink ? { sink } : {}),
    ...(searchParams ? { searchParams } : {}),
    ...(body === undefined ? {} : { body }),
    scopes: spec.scopes ?? [],
    ...(unwrap
      ? { schema: inEnvelope(spec.schema) as Parser<{ data: T }>, unwrap }
      : spec.schema
        ? { schema: spec.schema as Parser<T> }
        : {}),
    idempotent: spec.idempotent ?? method === 'GET',
    ...(params ? { ids: params } : {}),
  };
}

/** What `get` and `post` take besides the path. */
export type ApiRequestInit<T> = Omit<ApiRequest<T>, 'method' | 'path'>;
