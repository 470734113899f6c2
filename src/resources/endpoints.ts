import * as z from 'zod';
import type { ResponseSink } from '../core/api-promise.js';
import type { Report } from '../core/isolate.js';
import { stringifyBody } from '../core/json.js';
import type { RequestOptions } from '../core/request-options.js';
import type { SpanRunner } from '../http/tracing.js';
import type { DataRequest, DataTransport, Parser } from '../http/types.js';
import { type Me, meSchemas } from '../schemas/auth.js';
import {
  type BridgeConstructResult,
  type BridgeFeeEstimate,
  type BridgeQuote,
  type BridgeRoute,
  type BridgeSendResult,
  type BridgeTransfer,
  bridgeSchemas,
} from '../schemas/bridge.js';
import { compiled } from '../schemas/common.js';
import type { Issue } from '../schemas/issues.js';
import { constructArgs, feeEstimateArgs, getArgs, listArgs, quoteArgs, sendArgs } from './params.js';
import { type TransferPage, transferPageSchema } from './transfer-page.js';

const BRIDGE_READ = ['bridge:read'] as const;
const BRIDGE_WRITE = ['bridge:read', 'transactions:write'] as const;

/** What a call's checked arguments become: path parameters, query and body. */
export interface RequestParts {
  params?: Record<string, string>;
  query?: URLSearchParams;
  /** A flat JSON body; `JsonNumber` values (amounts) are written digit for digit. */
  body?: Record<string, unknown>;
  /** The ids the call names, for a 404 to say which may be missing. */
  ids?: Record<string, string>;
}

/**
 * One endpoint of the interface: everything a call needs to know, from the arguments a method
 * takes to the answer it returns. `A` is the checked arguments, `R` the answer's parsed body.
 */
export interface Endpoint<A, R> {
  /** The method's name in errors (`bridge.quote`). */
  name: string;
  method: 'GET' | 'POST';
  /** Below `/api/v1/s2s`; `{name}` is filled from the parts' `params`, and events show it as is. */
  path: string;
  /** Scopes the endpoint needs, named in a 403's message. */
  scopes: readonly string[];
  /** The method's arguments, checked before any request; `undefined` for none. */
  args: z.ZodType<A> | undefined;
  /** How the checked arguments become path, query and body. */
  parts: (args: A) => RequestParts;
  /** The answer's schema, with or without the client's `strict`. */
  schema: (strict: boolean) => Parser<R>;
  /** False for a submit: never sent twice, neither by the retry layer nor after a 401. */
  retryable: boolean;
  /** The answer is `{ data }` and the method returns its `data`; false for a row read whole (a list page). */
  unwrap: boolean;
  /**
   * The answer held against the checked arguments: an issue (its path the field) for each field that
   * names something other than what was asked. Every field the service sends may be wrong, and a
   * partner credits users from what a read returns.
   */
  check?: (answer: R, args: A) => Issue[];
}

type Row<A, R> = Omit<Endpoint<A, R>, 'retryable' | 'unwrap' | 'args' | 'parts'> & {
  retryable?: false;
  unwrap?: false;
  args?: z.ZodType<A>;
  parts?: (args: A) => RequestParts;
};

/**
 * A row's answer schema for each mode, made once, and compiled by zod where it is a zod schema
 * (`compiled`): a call looks its parser up, it builds and compiles nothing.
 */
function answerSchema<R>(schema: (strict: boolean) => Parser<R>): (strict: boolean) => Parser<R> {
  const made = new Map<boolean, Parser<R>>();
  return (strict) => {
    let parser = made.get(strict);
    if (!parser) {
      const written = schema(strict);
      parser = written instanceof z.ZodType ? compiled(written) : written;
      made.set(strict, parser);
    }
    return parser;
  };
}

const endpoint = <A, R>(row: Row<A, R>): Endpoint<A, R> => ({
  retryable: true,
  unwrap: true,
  args: undefined,
  parts: () => ({}),
  ...row,
  schema: answerSchema(row.schema),
});

type Args<S extends z.ZodType> = z.output<S>;

/** Every endpoint the client calls. */
export const ENDPOINTS = {
  me: endpoint<undefined, { data: Me }>({
    name: 'me',
    method: 'GET',
    path: '/me',
    scopes: [],
    schema: meSchemas,
  }),
  routes: endpoint<undefined, { data: BridgeRoute[] }>({
    name: 'bridge.routes',
    method: 'GET',
    path: '/bridge/routes',
    scopes: BRIDGE_READ,
    schema: (strict) => bridgeSchemas(strict).routes,
  }),
  quote: endpoint<Args<typeof quoteArgs>, { data: BridgeQuote }>({
    name: 'bridge.quote',
    method: 'POST',
    path: '/bridge/quote',
    scopes: BRIDGE_READ,
    args: quoteArgs,
    parts: (args) => ({ body: args, ids: { userId: args.userId, routeId: args.routeId } }),
    schema: (strict) => bridgeSchemas(strict).quote,
  }),
  feeEstimate: endpoint<Args<typeof feeEstimateArgs>, { data: BridgeFeeEstimate }>({
    name: 'bridge.feeEstimate',
    method: 'GET',
    path: '/bridge/fee-estimate',
    scopes: BRIDGE_READ,
    args: feeEstimateArgs,
    parts: (args) => ({
      query: new URLSearchParams({ routeId: args.routeId, amount: args.amount.literal }),
      ids: { routeId: args.routeId },
    }),
    schema: (strict) => bridgeSchemas(strict).feeEstimate,
  }),
  construct: endpoint<Args<typeof constructArgs>, { data: BridgeConstructResult }>({
    name: 'bridge.construct',
    method: 'POST',
    path: '/bridge/construct/transaction/batch',
    scopes: BRIDGE_WRITE,
    args: constructArgs,
    parts: (args) => ({
      body: {
        userId: args.userId,
        routeId: args.routeId,
        ...(args.maxAmount === true ? { maxAmount: true } : { amount: args.amount }),
      },
      ids: { userId: args.userId, routeId: args.routeId },
    }),
    schema: (strict) => bridgeSchemas(strict).construct,
  }),
  send: endpoint<Args<typeof sendArgs>, { data: BridgeSendResult }>({
    name: 'bridge.send',
    method: 'POST',
    path: '/bridge/transaction/batch/send',
    scopes: BRIDGE_WRITE,
    args: sendArgs,
    parts: (args) => ({ body: args, ids: { userId: args.userId, intentId: args.intentId } }),
    schema: (strict) => bridgeSchemas(strict).send,
    retryable: false,
  }),
  transfers: endpoint<Args<typeof listArgs>, TransferPage>({
    name: 'bridge.transfers.list',
    method: 'GET',
    path: '/bridge/transfers',
    scopes: BRIDGE_READ,
    args: listArgs,
    parts: (args) => {
      const query = new URLSearchParams({ userId: args.userId });
      if (args.status) query.set('status', args.status);
      if (args.limit !== undefined) query.set('limit', String(args.limit));
      if (args.cursor !== undefined) query.set('cursor', args.cursor);
      return { query, ids: { userId: args.userId } };
    },
    schema: transferPageSchema,
    unwrap: false,
    check: ({ items }, args) => {
      const issues: Issue[] = [];
      items.forEach((item, index) => {
        if (item.userId !== args.userId)
          issues.push({ path: `data.${index}.userId`, message: 'is not the user asked for' });
        if (args.status !== undefined && item.status !== args.status)
          issues.push({ path: `data.${index}.status`, message: 'is not the status asked for' });
      });
      return issues;
    },
  }),
  transfer: endpoint<Args<typeof getArgs>, { data: BridgeTransfer }>({
    name: 'bridge.transfers.get',
    method: 'GET',
    path: '/bridge/transfers/{transferId}',
    scopes: BRIDGE_READ,
    args: getArgs,
    parts: (args) => ({
      params: { transferId: args.transferId },
      query: new URLSearchParams({ userId: args.userId }),
      ids: { userId: args.userId, transferId: args.transferId },
    }),
    schema: (strict) => bridgeSchemas(strict).transferRead,
    check: ({ data }, args) => sameTransfer(data, args),
  }),
} as const;

/**
 * Issues for a transfer that is not the one asked for: another transfer, or another user's. Paths
 * only: the values may be another user's data.
 */
export function sameTransfer(
  transfer: { transferId: string; userId: string },
  asked: { transferId: string; userId: string },
  at = 'data',
): Issue[] {
  const issues: Issue[] = [];
  if (transfer.transferId !== asked.transferId)
    issues.push({ path: `${at}.transferId`, message: 'is not the transfer asked for' });
  if (transfer.userId !== asked.userId)
    issues.push({ path: `${at}.userId`, message: 'is not the user asked for' });
  return issues;
}

/** What a resource calls through: the transport wrapped by auth, and the client's `strict`. */
export interface Api {
  transport: DataTransport;
  strict: boolean;
  /** The client's spans around a flow's steps (`bridge.execute`); absent, steps just run. */
  span?: SpanRunner;
  /** Where a flow reports what a partner's callback (`onProgress`) threw; absent, it is dropped. */
  report?: Report;
  /** Writes a line to the client's logger at `warn`; absent when its log level holds warnings back. */
  warn?: (line: string) => void;
}

/** What a call of a row resolves with: the answer's `data`, or the whole answer of a row read whole. */
export type Data<R> = R extends { data: infer T } ? T : R;

/** How one call of a row runs besides its arguments: the caller's options, where answers go, who learns it was sent. */
export interface CallWith {
  options?: RequestOptions | undefined;
  sink?: ResponseSink | undefined;
  /** Called as each attempt is handed to fetch. */
  onSent?: () => void;
}

/** The one function that turns a row and its checked arguments into the transport's request. */
export function describe<A, R>(
  { method, path, scopes, schema, retryable, unwrap, parts, check }: Endpoint<A, R>,
  args: A,
  strict: boolean,
  { sink, onSent }: CallWith = {},
): DataRequest<Data<R>> {
  const { params, query, body, ids } = parts(args);
  return {
    method,
    path,
    ...(params ? { params } : {}),
    ...(query ? { searchParams: query } : {}),
    ...(body === undefined ? {} : { body: stringifyBody(body) }),
    scopes,
    schema: schema(strict) as Parser<Data<R>>,
    ...(unwrap ? { unwrap } : {}),
    ...(check ? { check: (answer: unknown) => check(answer as R, args) } : {}),
    ...(retryable ? {} : { retryable }),
    ...(onSent ? { onSent } : {}),
    ...(ids ? { ids } : {}),
    ...(sink ? { sink } : {}),
  };
}

/**
 * A call of `endpoint` with checked `args`, sent with the client's token: what every endpoint
 * method and flow step runs. An argument is checked once, by the method that took it.
 *
 * @example
 * const routes = await send(api, ENDPOINTS.routes, undefined, { options, sink });
 */
export function send<A, R>(
  api: Api,
  endpoint: Endpoint<A, R>,
  args: A,
  call: CallWith = {},
): Promise<Data<R>> {
  return api.transport.request(describe(endpoint, args, api.strict, call), call.options);
}
