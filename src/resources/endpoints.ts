import type { Report } from '../core/isolate.js';
import type { RequestOptions } from '../core/request-options.js';
import type { SpanRunner } from '../http/tracing.js';
import type { DataTransport, Parser } from '../http/transport.js';
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
import { type TransferPage, transferPageSchema } from './transfer-page.js';

const BRIDGE_READ = ['bridge:read'] as const;
const BRIDGE_WRITE = ['bridge:read', 'transactions:write'] as const;

/** One endpoint of the interface: all a call needs to know besides its arguments. */
export interface Endpoint<T> {
  method: 'GET' | 'POST';
  /** Below `/api/v1/s2s`; `{name}` is filled from the call's `params`, and events show it as is. */
  path: string;
  /** Scopes the endpoint needs, named in a 403's message. */
  scopes: readonly string[];
  /** The answer's schema, with or without the client's `strict`. */
  schema: (strict: boolean) => Parser<T>;
  /** False for a submit: never sent twice, neither by the retry layer nor after a 401. */
  retryable: boolean;
}

const endpoint = <T>(spec: Omit<Endpoint<T>, 'retryable'> & { retryable?: false }): Endpoint<T> => ({
  retryable: true,
  ...spec,
});

/** Every endpoint the client calls. */
export const ENDPOINTS = {
  me: endpoint<{ data: Me }>({ method: 'GET', path: '/me', scopes: [], schema: meSchemas }),
  routes: endpoint<{ data: BridgeRoute[] }>({
    method: 'GET',
    path: '/bridge/routes',
    scopes: BRIDGE_READ,
    schema: (strict) => bridgeSchemas(strict).routes,
  }),
  quote: endpoint<{ data: BridgeQuote }>({
    method: 'POST',
    path: '/bridge/quote',
    scopes: BRIDGE_READ,
    schema: (strict) => bridgeSchemas(strict).quote,
  }),
  feeEstimate: endpoint<{ data: BridgeFeeEstimate }>({
    method: 'GET',
    path: '/bridge/fee-estimate',
    scopes: BRIDGE_READ,
    schema: (strict) => bridgeSchemas(strict).feeEstimate,
  }),
  construct: endpoint<{ data: BridgeConstructResult }>({
    method: 'POST',
    path: '/bridge/construct/transaction/batch',
    scopes: BRIDGE_WRITE,
    schema: (strict) => bridgeSchemas(strict).construct,
  }),
  send: endpoint<{ data: BridgeSendResult }>({
    method: 'POST',
    path: '/bridge/transaction/batch/send',
    scopes: BRIDGE_WRITE,
    schema: (strict) => bridgeSchemas(strict).send,
    retryable: false,
  }),
  transfers: endpoint<TransferPage>({
    method: 'GET',
    path: '/bridge/transfers',
    scopes: BRIDGE_READ,
    schema: transferPageSchema,
  }),
  transfer: endpoint<{ data: BridgeTransfer }>({
    method: 'GET',
    path: '/bridge/transfers/{transferId}',
    scopes: BRIDGE_READ,
    schema: (strict) => bridgeSchemas(strict).transferRead,
  }),
} as const;

/** What one call sends besides the endpoint's own: path parameters, query and body. */
export interface CallInput {
  params?: Record<string, string>;
  query?: URLSearchParams;
  /** An already serialised JSON body. */
  body?: string;
  /** Called as each attempt is handed to fetch. */
  onSent?: () => void;
  /** The ids the call names, for a 404 to say which may be missing. */
  ids?: Record<string, string>;
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

/** The one call every resource method makes: an endpoint of the table, its input, the caller's options. */
export function callEndpoint<T>(
  api: Api,
  { method, path, scopes, schema, retryable }: Endpoint<T>,
  input: CallInput,
  options: RequestOptions | undefined,
): Promise<T> {
  const { params } = input;
  return api.transport.request(
    {
      method,
      path: params
        ? path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!))
        : path,
      label: path,
      ...(input.query ? { searchParams: input.query } : {}),
      ...(input.body === undefined ? {} : { body: input.body }),
      scopes,
      schema: schema(api.strict),
      ...(retryable ? {} : { retryable }),
      ...(input.onSent ? { onSent: input.onSent } : {}),
      ...(input.ids ? { ids: input.ids } : {}),
    },
    options,
  );
}
