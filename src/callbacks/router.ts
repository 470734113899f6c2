import type { IncomingMessage, ServerResponse } from 'node:http';
import { EventEmitter } from 'eventemitter3';
import { z } from 'zod';
import { stateRank } from '../bridge/wait.js';
import { CallbackParseError } from '../errors/bridge-errors.js';
import { byteCount, parseArgs, withMethods } from '../internal/args.js';
import { type BridgeTransfer, FINAL_STATES } from '../schemas/bridge.js';
import { type BridgeCallbackKind, type ParsedCallback, parseBridgeCallback } from './parse.js';
import { type CallbackStore, MemoryCallbackStore } from './store.js';

/** What `authenticate` is shown of a delivery: enough for a shared header, an IP allowlist or an HMAC. */
export interface CallbackRequest {
  method: string;
  url: string;
  headers: Headers;
  /** The raw body as text. */
  body: string;
  /** The peer address, when the handler knows it (node:http). */
  remoteAddress: string | undefined;
  /** The original request object (`Request` or `IncomingMessage`), for mTLS details and the like. */
  raw: unknown;
}

/** Why a callback was not dispatched. */
export type IgnoredReason = 'duplicate' | 'stale' | 'unexpected_state';

/** A bridge callback the router did not dispatch, as its `ignored` event reports it. */
export interface IgnoredCallback {
  reason: IgnoredReason;
  transfer: BridgeTransfer;
  /** The state already dispatched for this transfer, for `duplicate` and `stale`. */
  previous: string | undefined;
}

type KindListeners = { [K in BridgeCallbackKind]: (transfer: BridgeTransfer) => void | Promise<void> };

/** The router's events: one per callback kind, plus `transfer`, `unknown`, `ignored` and `error`. */
export interface CallbackRouterEvents extends KindListeners {
  /** Every dispatched bridge callback, whatever its kind. */
  transfer: (transfer: BridgeTransfer, kind: BridgeCallbackKind) => void | Promise<void>;
  /** A body that is not a bridge transfer (portfolio callbacks share the endpoint). */
  unknown: (body: unknown) => void | Promise<void>;
  /** A duplicate, a state older than one already dispatched, or a state with no callback kind. */
  ignored: (ignored: IgnoredCallback) => void | Promise<void>;
  /** A listener threw or rejected; the other listeners still ran. */
  error: (error: unknown) => void;
}

/** Options of `createCallbackRouter`. */
export interface CallbackRouterOptions {
  /**
   * Remembers the last dispatched state per transfer, to drop duplicates and late states.
   * @default a MemoryCallbackStore of 50,000 transfers
   */
  store?: CallbackStore;
  /**
   * Decides whether a delivery is genuine. The specification defines no delivery authentication, so
   * the SDK invents none: check a shared header, the peer address or mTLS details here. A rejected
   * delivery never reaches a listener and is answered 401.
   *
   * @example
   * authenticate: (req) => req.headers.get('x-callback-token') === process.env.CALLBACK_TOKEN
   */
  authenticate?: (request: CallbackRequest) => boolean | Promise<boolean>;
  /**
   * Largest body accepted, in bytes; larger deliveries are answered 413.
   * @default 1048576 (1 MiB)
   */
  maxBodyBytes?: number;
  /** Reject bridge callbacks with fields or states the SDK does not know. @default false */
  strict?: boolean;
}

/** What one delivery led to. */
export type DispatchOutcome =
  | { outcome: 'dispatched'; kind: BridgeCallbackKind; transfer: BridgeTransfer }
  | { outcome: 'ignored'; reason: IgnoredReason; transfer: BridgeTransfer }
  | { outcome: 'unknown'; body: unknown };

const MIB = 1024 * 1024;

class BodyTooLarge extends Error {}

const routerOptionsSchema = z.looseObject({
  store: withMethods<CallbackStore>(['get', 'set'], 'must have get and set methods').optional(),
  authenticate: z
    .custom<NonNullable<CallbackRouterOptions['authenticate']>>(
      (value) => typeof value === 'function',
      'must be a function',
    )
    .optional(),
  maxBodyBytes: byteCount.optional(),
  strict: z.boolean({ error: 'must be true or false' }).optional(),
});

/**
 * Routes bridge callbacks to typed listeners, once each and never backwards for one transfer.
 * Mount `fetchHandler` (Hono, Bun, Deno, workers) or `nodeHandler` (node:http, Express).
 *
 * @example
 * const router = createCallbackRouter({ authenticate: (r) => r.headers.get('x-token') === TOKEN });
 * router.on('bridge_transfer_delivered', (transfer) => credit(transfer.userId, transfer.destination.amount));
 * router.on('bridge_transfer_refunded', (transfer) => notifyRefund(transfer));
 * http.createServer(router.nodeHandler).listen(8080);
 */
export class CallbackRouter extends EventEmitter<CallbackRouterEvents> {
  readonly #store: CallbackStore;
  readonly #authenticate: CallbackRouterOptions['authenticate'];
  readonly #maxBodyBytes: number;
  readonly #strict: boolean;
  /** Deliveries for one transfer are handled one after another, so the order check sees each. */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(options: CallbackRouterOptions = {}) {
    super();
    const checked = parseArgs(routerOptionsSchema, options, 'createCallbackRouter');
    this.#store = checked.store ?? new MemoryCallbackStore();
    this.#authenticate = checked.authenticate;
    this.#maxBodyBytes = checked.maxBodyBytes ?? MIB;
    this.#strict = checked.strict ?? false;
  }

  /**
   * Parses one callback body and dispatches it. Use it directly when the framework already read
   * the body; the handlers call it for you.
   *
   * @throws CallbackParseError for a broken body.
   */
  async dispatch(body: unknown): Promise<DispatchOutcome> {
    const parsed: ParsedCallback = parseBridgeCallback(body, { strict: this.#strict });
    if (parsed.kind === 'unknown') {
      await this.#emitSafely('unknown', parsed.body);
      return { outcome: 'unknown', body: parsed.body };
    }
    const { transfer } = parsed;
    if (parsed.kind === 'unexpected_state') return this.#ignore('unexpected_state', transfer, undefined);
    const kind = parsed.kind;
    const id = transfer.transferId;
    const previous = this.#queues.get(id) ?? Promise.resolve();
    const run = previous.then(async (): Promise<DispatchOutcome> => {
      const last = await this.#store.get(id);
      if (last === transfer.status) return this.#ignore('duplicate', transfer, last);
      if (
        last !== undefined &&
        (FINAL_STATES.has(last) || (stateRank(transfer.status) ?? 0) < (stateRank(last) ?? 0))
      ) {
        return this.#ignore('stale', transfer, last);
      }
      await this.#store.set(id, transfer.status);
      await this.#emitSafely(kind, transfer);
      await this.#emitSafely('transfer', transfer, kind);
      return { outcome: 'dispatched', kind, transfer };
    });
    const settled = run.catch(() => undefined);
    this.#queues.set(id, settled);
    void settled.then(() => {
      if (this.#queues.get(id) === settled) this.#queues.delete(id);
    });
    return run;
  }

  async #ignore(
    reason: IgnoredReason,
    transfer: BridgeTransfer,
    previous: string | undefined,
  ): Promise<DispatchOutcome> {
    await this.#emitSafely('ignored', { reason, transfer, previous });
    return { outcome: 'ignored', reason, transfer };
  }

  /** Calls every listener, awaiting async ones; one that fails is reported and does not stop the rest. */
  async #emitSafely<E extends keyof CallbackRouterEvents>(
    event: E,
    ...args: Parameters<CallbackRouterEvents[E]>
  ): Promise<void> {
    for (const listener of this.listeners(event) as ((...a: unknown[]) => unknown)[]) {
      try {
        await listener(...args);
      } catch (error) {
        for (const onError of this.listeners('error')) {
          try {
            onError(error);
          } catch {
            // An error listener that throws has nobody left to tell.
          }
        }
      }
    }
  }

  async #handle(
    request: Omit<CallbackRequest, 'body'>,
    readBody: () => Promise<string>,
  ): Promise<{ status: number; body: unknown }> {
    if (request.method !== 'POST') return { status: 405, body: { error: 'method_not_allowed' } };
    const length = Number(request.headers.get('content-length') ?? Number.NaN);
    if (length > this.#maxBodyBytes) return { status: 413, body: { error: 'payload_too_large' } };
    let body: string;
    try {
      body = await readBody();
    } catch (error) {
      if (error instanceof BodyTooLarge) return { status: 413, body: { error: 'payload_too_large' } };
      return { status: 400, body: { error: 'unreadable_body' } };
    }
    if (this.#authenticate) {
      let allowed = false;
      try {
        allowed = await this.#authenticate({ ...request, body });
      } catch {
        allowed = false;
      }
      if (!allowed) return { status: 401, body: { error: 'unauthenticated' } };
    }
    try {
      const outcome = await this.dispatch(body);
      return { status: 200, body: { received: true, outcome: outcome.outcome } };
    } catch (error) {
      if (error instanceof CallbackParseError)
        return { status: 400, body: { error: 'invalid_body', message: error.message } };
      throw error;
    }
  }

  /**
   * A web `Request` → `Response` handler: works as it is in Hono, Bun, Deno and workers.
   *
   * @example
   * app.post('/callbacks', (c) => router.fetchHandler(c.req.raw));   // Hono
   * Bun.serve({ fetch: router.fetchHandler });
   */
  readonly fetchHandler = async (request: Request): Promise<Response> => {
    const result = await this.#handle(
      {
        method: request.method,
        url: request.url,
        headers: request.headers,
        remoteAddress: undefined,
        raw: request,
      },
      () => readWebBody(request, this.#maxBodyBytes),
    );
    return new Response(JSON.stringify(result.body), {
      status: result.status,
      headers: { 'content-type': 'application/json', ...(result.status === 405 ? { allow: 'POST' } : {}) },
    });
  };

  /**
   * A node:http / Express handler. With Express, a body already read by `express.raw()`,
   * `express.text()` or `express.json()` is used as it is.
   *
   * @example
   * http.createServer(router.nodeHandler).listen(8080);
   * app.post('/callbacks', express.raw({ type: '*\/*' }), router.nodeHandler);
   */
  readonly nodeHandler = (req: IncomingMessage & { body?: unknown }, res: ServerResponse): void => {
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(key, value);
      else if (Array.isArray(value)) headers.set(key, value.join(', '));
    }
    const send = (status: number, body: unknown) => {
      if (res.headersSent) return;
      res.writeHead(status, {
        'content-type': 'application/json',
        ...(status === 405 ? { allow: 'POST' } : {}),
      });
      res.end(JSON.stringify(body));
    };
    this.#handle(
      {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers,
        remoteAddress: req.socket?.remoteAddress,
        raw: req,
      },
      () => readNodeBody(req, this.#maxBodyBytes),
    ).then(
      (result) => {
        send(result.status, result.body);
        // The rest of an oversized body is not read: close rather than leave it half consumed.
        if (result.status === 413 && !req.readableEnded) req.destroy();
      },
      () => send(500, { error: 'internal_error' }),
    );
  };
}

async function readWebBody(request: Request, max: number): Promise<string> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLarge();
    }
    chunks.push(value);
  }
  return concatText(chunks, size);
}

function readNodeBody(req: IncomingMessage & { body?: unknown }, max: number): Promise<string> {
  const given = req.body;
  if (
    given !== undefined &&
    given !== null &&
    !(typeof given === 'object' && Object.keys(given).length === 0 && !(given instanceof Uint8Array))
  ) {
    const text =
      typeof given === 'string'
        ? given
        : given instanceof Uint8Array
          ? new TextDecoder().decode(given)
          : JSON.stringify(given);
    if (new TextEncoder().encode(text).byteLength > max) return Promise.reject(new BodyTooLarge());
    return Promise.resolve(text);
  }
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > max) {
        done = true;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(concatText(chunks, size));
    });
    req.on('error', (error) => {
      if (!done) reject(error);
    });
  });
}

function concatText(chunks: Uint8Array[], size: number): string {
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}

/**
 * Creates a callback router.
 *
 * @example
 * const router = createCallbackRouter();
 * router.on('bridge_transfer_delivered', (transfer) => { … });
 */
export function createCallbackRouter(options?: CallbackRouterOptions): CallbackRouter {
  return new CallbackRouter(options);
}
