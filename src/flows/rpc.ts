// Reads from a chain's JSON-RPC node, for `confirmUserOperation`: an RPC URL (JSON-RPC over HTTP
// POST, through the runtime's fetch) or an EIP-1193 provider (a viem client is one). Each read is
// bounded like an attempt of the SDK's own calls (one `Deadline`: `timeoutMs` and the signal) and
// retried by the one retry function, on the same failures.
import * as z from 'zod';
import { readText } from '../core/body.js';
import { DEFAULTS } from '../core/defaults.js';
import { Deadline } from '../core/time.js';
import { isPartnerError } from '../errors/base.js';
import {
  AbortError,
  ChainRpcError,
  ConnectionError,
  ResponseValidationError,
  TimeoutError,
} from '../errors/client-errors.js';
import { redactor, safeCause } from '../errors/redact.js';
import { retry } from '../http/retry.js';

/**
 * An EIP-1193 provider: anything with `request({ method, params })`. A viem public client is one,
 * and so are ethers' `BrowserProvider` sources and most wallet SDKs' providers.
 */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown }): Promise<unknown>;
}

/** Where a chain is read: an http(s) JSON-RPC URL, or an EIP-1193 provider. */
export type ChainRpc = string | Eip1193Provider;

/** The bounds of the reads of one chain call: those of every method of the SDK. */
export interface ChainReadOptions {
  signal?: AbortSignal | undefined;
  /** Time for one read (one JSON-RPC request and its whole answer). @default DEFAULTS.timeoutMs (30000) */
  timeoutMs?: number | undefined;
  /** Retries of one read after a connection error, a timeout, 429, a 5xx or a node's overload. @default DEFAULTS.maxRetries (2) */
  maxRetries?: number | undefined;
  /** Time the retries of one read may take, waits included. @default DEFAULTS.retry.maxRetryTimeMs (60000) */
  maxRetryTimeMs?: number | undefined;
}

/** JSON-RPC codes of a node that is passing through trouble: limit exceeded, internal, server error. */
const TRANSIENT_CODES = new Set([-32005, -32603, -32000, 429]);
/** A JSON-RPC answer of these reads is a few KB; a node answering megabytes is not answering them. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** The RPC URL a caller gave, refused unless http(s): the message never quotes it (it may hold a key). */
export function rpcUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an http(s) URL or an EIP-1193 provider';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return 'must be an http(s) URL (for WebSocket, pass a provider with request())';
  return undefined;
}

/** The `rpc` of a chain: an http(s) URL string, or an object with a `request` method. */
export const chainRpcSchema = z.lazy(() =>
  z.custom<ChainRpc>(
    (value) =>
      typeof value === 'string'
        ? rpcUrlProblem(value) === undefined
        : typeof value === 'object' &&
          value !== null &&
          typeof (value as { request?: unknown }).request === 'function',
    'must be an http(s) URL or an EIP-1193 provider (an object with request())',
  ),
);

/** One chain's node as the reads of one call see it: bounded, retried, every failure typed. */
export class ChainReader {
  /** The URL's origin, or `provider`: what errors name (never the URL's path or query). */
  readonly endpoint: string;
  readonly #rpc: ChainRpc;
  readonly #options: ChainReadOptions;
  #id = 0;

  constructor(rpc: ChainRpc, options: ChainReadOptions = {}) {
    this.#rpc = rpc;
    this.#options = options;
    this.endpoint = typeof rpc === 'string' ? new URL(rpc).origin : 'provider';
  }

  /** One JSON-RPC read: its `result`, or the typed error of its last attempt. */
  read(method: string, params: unknown[]): Promise<unknown> {
    const { signal, maxRetries, maxRetryTimeMs } = this.#options;
    const policy = {
      ...DEFAULTS.retry,
      retries: maxRetries ?? DEFAULTS.maxRetries,
      maxRetryTimeMs: maxRetryTimeMs ?? DEFAULTS.retry.maxRetryTimeMs,
    };
    return retry({ policy, signal, retrying: () => {} }, () => this.#attempt(method, params));
  }

  async #attempt(method: string, params: unknown[]): Promise<unknown> {
    const timeoutMs = this.#options.timeoutMs ?? DEFAULTS.timeoutMs;
    const signal = this.#options.signal;
    const deadline = new Deadline(timeoutMs, signal, {
      timedOut: () => new TimeoutError({ method, path: this.endpoint, timeoutMs }),
      aborted: () => new AbortError({ cause: signal?.reason }),
    });
    try {
      const rpc = this.#rpc;
      if (typeof rpc !== 'string') return await this.#provider(rpc, method, params, deadline);
      return await this.#http(rpc, method, params, deadline);
    } finally {
      deadline.clear();
    }
  }

  async #provider(provider: Eip1193Provider, method: string, params: unknown[], deadline: Deadline) {
    try {
      // A provider takes no signal: the deadline stops waiting for it, its late answer is dropped.
      return await deadline.race(Promise.resolve().then(() => provider.request({ method, params })));
    } catch (error) {
      if (deadline.over || isPartnerError(error)) throw error;
      const { code, status, shortMessage, message } = (error ?? {}) as Record<string, unknown>;
      const numeric = typeof code === 'number' ? code : undefined;
      const http = typeof status === 'number' ? status : undefined;
      throw new ChainRpcError({
        method,
        endpoint: this.endpoint,
        code: numeric,
        status: http,
        reason:
          typeof shortMessage === 'string' ? shortMessage : typeof message === 'string' ? message : undefined,
        retryable: transient(numeric, http),
        cause: error,
      });
    }
  }

  async #http(url: string, method: string, params: unknown[], deadline: Deadline): Promise<unknown> {
    this.#id += 1;
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.#id, method, params });
    const parsed = new URL(url);
    // What the network says may quote the URL; its path and query often hold an API key.
    const redact = redactor([url, `${parsed.pathname}${parsed.search}`].filter((part) => part.length > 1));
    const broken = (cause: unknown) =>
      new ConnectionError({ method, path: this.endpoint, cause: safeCause(cause, redact) });
    let response: Response;
    try {
      const init: RequestInit = {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
        signal: deadline.signal,
        redirect: 'error',
      };
      response = await deadline.race(Promise.resolve().then(() => globalThis.fetch(url, init)));
    } catch (error) {
      throw deadline.over ? deadline.reason : broken(error);
    }
    const text = await readText(response, deadline, MAX_ANSWER_BYTES, {
      timedOut: () => deadline.reason,
      aborted: () => deadline.reason,
      broken,
    });
    return this.#answer(method, response.status, text);
  }

  /** The `result` of a JSON-RPC answer over HTTP, or its error typed. */
  #answer(method: string, status: number, text: string | undefined): unknown {
    let json: unknown;
    try {
      json = text === undefined ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    const error = (json as { error?: unknown } | undefined)?.error;
    if (status !== 200 || (typeof error === 'object' && error !== null)) {
      const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
      const numeric = typeof code === 'number' ? code : undefined;
      throw new ChainRpcError({
        method,
        endpoint: this.endpoint,
        ...(status === 200 ? {} : { status }),
        code: numeric,
        reason: typeof message === 'string' ? message : undefined,
        retryable: transient(numeric, status === 200 ? undefined : status),
      });
    }
    if (typeof json !== 'object' || json === null || !('result' in json)) {
      throw new ResponseValidationError({
        method,
        path: this.endpoint,
        status,
        issues: [
          {
            path: '',
            message: text === undefined ? 'is over 4 MiB' : 'is not a JSON-RPC answer with a result',
          },
        ],
      });
    }
    return (json as { result: unknown }).result;
  }
}

function transient(code: number | undefined, status: number | undefined): boolean {
  if (status !== undefined && (status === 429 || (status >= 500 && status <= 599))) return true;
  return code !== undefined && TRANSIENT_CODES.has(code);
}
