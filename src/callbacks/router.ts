import type { IncomingMessage, ServerResponse } from 'node:http';
import { EventEmitter } from 'eventemitter3';
import { z } from 'zod';
import { byteCount, durationMs, parseArgs, readArgs, withMethods } from '../core/args.js';
import { CallbackParseError } from '../errors/bridge-errors.js';
import { CallbackTimeoutError, type CallbackTimeoutStage } from '../errors/callback-errors.js';
import { readText } from '../http/abort.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import { FINAL_STATES, stateRank } from '../schemas/states.js';
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
  /**
   * A listener threw or rejected (the other listeners still ran), a delivery did not settle within
   * `listenerTimeoutMs` (a `CallbackTimeoutError`), or the store failed.
   */
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
   * Decides whether a delivery is genuine; required. The specification defines no delivery
   * authentication, so the SDK invents none: check a shared secret header (in constant time), an
   * HMAC of `body`, or mTLS details here. A rejected delivery never reaches a listener and is
   * answered 401; a check that does not settle within `listenerTimeoutMs` is answered 503.
   *
   * `'none'` accepts every delivery. Only for tests, or when something in front of the handler
   * already authenticated the request: anyone who can reach the endpoint can then forge callbacks.
   *
   * @example
   * const expected = Buffer.from(process.env.CALLBACK_TOKEN!);
   * authenticate: (req) => {
   *   const given = Buffer.from(req.headers.get('x-callback-token') ?? '');
   *   return given.length === expected.length && crypto.timingSafeEqual(given, expected);
   * }
   */
  authenticate: ((request: CallbackRequest) => boolean | Promise<boolean>) | 'none';
  /**
   * How long the listeners of one delivery, the `authenticate` check and each store call may take.
   * Past it the delivery is answered 503 and its state is not recorded (the service's redelivery
   * dispatches it again), the `error` event gets a `CallbackTimeoutError`, the transfer's later
   * deliveries go ahead, and whatever the late work does afterwards is ignored.
   *
   * @default 10000
   * @example
   * createCallbackRouter({ authenticate, listenerTimeoutMs: 30_000 }); // a slow ledger write
   */
  listenerTimeoutMs?: number;
  /**
   * How long reading one request body may take; a slower body is answered 408 and the connection
   * closed, whatever the server's own `requestTimeout` (even 0).
   *
   * @default 10000
   * @example
   * createCallbackRouter({ authenticate, bodyTimeoutMs: 5_000 });
   */
  bodyTimeoutMs?: number;
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
const DEFAULT_TIMEOUT_MS = 10_000;

class BodyTooLarge extends Error {}
class BodyTimedOut extends Error {}

const routerOptionsSchema = z.looseObject({
  store: withMethods<CallbackStore>(['get', 'set'], 'must have get and set methods').optional(),
  authenticate: z.custom<CallbackRouterOptions['authenticate']>(
    (value) => typeof value === 'function' || value === 'none',
    "is required: a function that checks each delivery, or 'none' to accept every delivery (anyone who can reach the endpoint can then forge callbacks)",
  ),
  maxBodyBytes: byteCount.optional(),
  strict: z.boolean({ error: 'must be true or false' }).optional(),
  listenerTimeoutMs: durationMs.optional(),
  bodyTimeoutMs: durationMs.optional(),
});

/** Whether the work of one bounded step may still have effects; cleared once it timed out. */
interface Run {
  live: boolean;
}

/**
 * Routes bridge callbacks to typed listeners, once each and never backwards for one transfer.
 * Mount `fetchHandler` (Hono, Bun, Deno, workers) or `nodeHandler` (node:http, Express).
 *
 * @example
 * const router = createCallbackRouter({ authenticate: (r) => sameSecret(r.headers.get('x-token'), TOKEN) });
 * router.on('bridge_transfer_delivered', (transfer) => credit(transfer.userId, transfer.destination.amount));
 * router.on('bridge_transfer_refunded', (transfer) => notifyRefund(transfer));
 * http.createServer(router.nodeHandler).listen(8080);
 */
export class CallbackRouter extends EventEmitter<CallbackRouterEvents> {
  readonly #store: CallbackStore;
  readonly #authenticate: Exclude<CallbackRouterOptions['authenticate'], 'none'> | undefined;
  readonly #maxBodyBytes: number;
  readonly #strict: boolean;
  readonly #timeoutMs: number;
  readonly #bodyTimeoutMs: number;
  /** Deliveries for one transfer are handled one after another, so the order check sees each. */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(options: CallbackRouterOptions) {
    super();
    const checked = parseArgs(routerOptionsSchema, options ?? {}, 'createCallbackRouter');
    this.#store = checked.store ?? new MemoryCallbackStore();
    this.#authenticate = checked.authenticate === 'none' ? undefined : checked.authenticate;
    this.#maxBodyBytes = checked.maxBodyBytes ?? MIB;
    this.#strict = checked.strict ?? false;
    this.#timeoutMs = checked.listenerTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#bodyTimeoutMs = checked.bodyTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /**
   * Parses one callback body and dispatches it. Use it directly when the framework already read
   * (and authenticated) the body; the handlers call it for you. The state is recorded after the
   * listeners settled, so a delivery that timed out is dispatched again when it comes again.
   *
   * @throws CallbackParseError for a broken body; CallbackTimeoutError when listeners or the store
   *   did not settle within `listenerTimeoutMs`; whatever the store threw.
   * @example
   * app.post('/callbacks', async (c) => c.json(await router.dispatch(await c.req.json())));
   */
  async dispatch(body: unknown): Promise<DispatchOutcome> {
    const parsed: ParsedCallback = parseBridgeCallback(body, { strict: this.#strict });
    if (parsed.kind === 'unknown') {
      await this.#bounded('listeners', undefined, 'unknown', (run) =>
        this.#emitSafely(run, 'unknown', parsed.body),
      );
      return { outcome: 'unknown', body: parsed.body };
    }
    const { transfer } = parsed;
    if (parsed.kind === 'unexpected_state') return this.#ignore('unexpected_state', transfer, undefined);
    const kind = parsed.kind;
    const id = transfer.transferId;
    const previous = this.#queues.get(id) ?? Promise.resolve();
    const run = previous.then(async (): Promise<DispatchOutcome> => {
      const last = await this.#bounded('store', id, kind, () => this.#store.get(id));
      if (last === transfer.status) return this.#ignore('duplicate', transfer, last);
      if (
        last !== undefined &&
        (FINAL_STATES.has(last) || (stateRank(transfer.status) ?? 0) < (stateRank(last) ?? 0))
      ) {
        return this.#ignore('stale', transfer, last);
      }
      // Listeners first, then the record: a delivery whose listeners hung is not marked as seen.
      // (A listener that throws is reported and still recorded, as before; issue 12's at-least-once
      // for throws turns #emitSafely's failures into a refusal here.)
      await this.#bounded('listeners', id, kind, async (live) => {
        await this.#emitSafely(live, kind, transfer);
        await this.#emitSafely(live, 'transfer', transfer, kind);
      });
      await this.#bounded('store', id, kind, () => this.#store.set(id, transfer.status));
      return { outcome: 'dispatched', kind, transfer };
    });
    // A timed-out step rejects `run` on time, so the transfer's next delivery does not wait on it.
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
    await this.#bounded('listeners', transfer.transferId, 'ignored', (run) =>
      this.#emitSafely(run, 'ignored', { reason, transfer, previous }),
    );
    return { outcome: 'ignored', reason, transfer };
  }

  /**
   * Runs partner code (listeners, the check, the store) within `listenerTimeoutMs`. On timeout the
   * step rejects with a `CallbackTimeoutError`, reported on `error`; the work is left to finish on
   * its own and nothing it does later is reported.
   */
  #bounded<T>(
    stage: CallbackTimeoutStage,
    transferId: string | undefined,
    kind: string | undefined,
    work: (run: Run) => T | Promise<T>,
  ): Promise<T> {
    const run: Run = { live: true };
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        run.live = false;
        const error = new CallbackTimeoutError({ stage, timeoutMs: this.#timeoutMs, transferId, kind });
        this.#reportError(error);
        reject(error);
      }, this.#timeoutMs);
      Promise.resolve()
        .then(() => work(run))
        .then(
          (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(error);
          },
        );
    });
  }

  /** Calls every listener, awaiting async ones; one that fails is reported and does not stop the rest. */
  async #emitSafely<E extends keyof CallbackRouterEvents>(
    run: Run,
    event: E,
    ...args: Parameters<CallbackRouterEvents[E]>
  ): Promise<void> {
    for (const listener of this.listeners(event) as ((...a: unknown[]) => unknown)[]) {
      if (!run.live) return;
      try {
        await listener(...args);
      } catch (error) {
        if (run.live) this.#reportError(error);
      }
    }
  }

  #reportError(error: unknown): void {
    for (const onError of this.listeners('error')) {
      try {
        onError(error);
      } catch {
        // An error listener that throws has nobody left to tell.
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
      if (error instanceof BodyTimedOut) return { status: 408, body: { error: 'request_timeout' } };
      return { status: 400, body: { error: 'unreadable_body' } };
    }
    const authenticate = this.#authenticate;
    if (authenticate) {
      let allowed = false;
      try {
        allowed = await this.#bounded('authenticate', undefined, undefined, () =>
          authenticate({ ...request, body }),
        );
      } catch (error) {
        if (error instanceof CallbackTimeoutError) return unavailable;
        allowed = false;
      }
      if (allowed !== true) return { status: 401, body: { error: 'unauthenticated' } };
    }
    try {
      const outcome = await this.dispatch(body);
      return { status: 200, body: { received: true, outcome: outcome.outcome } };
    } catch (error) {
      if (error instanceof CallbackParseError)
        return { status: 400, body: { error: 'invalid_body', message: error.message } };
      // Already reported when it happened.
      if (error instanceof CallbackTimeoutError) return unavailable;
      // The store failed: nothing was recorded, so a 5xx makes the service deliver it again.
      this.#reportError(error);
      return { status: 500, body: { error: 'internal_error' } };
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
    const described = readArgs('CallbackRouter.fetchHandler', () => ({
      method: request.method,
      url: request.url,
      headers: new Headers(request.headers),
      remoteAddress: undefined,
      raw: request,
    }));
    const result = await this.#handle(described, () => this.#readWebBody(request));
    return new Response(JSON.stringify(result.body), {
      status: result.status,
      headers: { 'content-type': 'application/json', ...(result.status === 405 ? { allow: 'POST' } : {}) },
    });
  };

  async #readWebBody(request: Request): Promise<string> {
    const text = await readText(request, this.#bodyTimeoutMs, this.#maxBodyBytes, undefined, {
      timedOut: () => new BodyTimedOut(),
      aborted: () => new BodyTimedOut(),
      broken: (cause) => cause,
    });
    if (text === undefined) throw new BodyTooLarge();
    return text;
  }

  /**
   * A node:http / Express handler. With Express, a body already read by `express.raw()`,
   * `express.text()` or `express.json()` is used as it is.
   *
   * @example
   * http.createServer(router.nodeHandler).listen(8080);
   * app.post('/callbacks', express.raw({ type: '*\/*' }), router.nodeHandler);
   */
  readonly nodeHandler = (req: IncomingMessage & { body?: unknown }, res: ServerResponse): void => {
    const request = readArgs('CallbackRouter.nodeHandler', () => {
      const headers = new Headers();
      for (const [key, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers.set(key, value);
        else if (Array.isArray(value)) headers.set(key, value.join(', '));
      }
      return {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers,
        remoteAddress: req.socket?.remoteAddress,
        raw: req,
      };
    });
    const send = (status: number, body: unknown) => {
      try {
        answer(status, body);
      } catch (error) {
        // A response object that cannot be written has nobody to answer; the partner still hears of it.
        this.#reportError(error);
      }
    };
    const answer = (status: number, body: unknown) => {
      if (res.headersSent) return;
      // The rest of an oversized or stalled body is not read: close rather than leave it half consumed.
      const cut = (status === 413 || status === 408) && !req.readableEnded;
      if (cut) res.once('finish', () => req.destroy());
      res.writeHead(status, {
        'content-type': 'application/json',
        ...(status === 405 ? { allow: 'POST' } : {}),
        ...(cut ? { connection: 'close' } : {}),
      });
      res.end(JSON.stringify(body));
    };
    this.#handle(request, () => readNodeBody(req, this.#maxBodyBytes, this.#bodyTimeoutMs)).then(
      (result) => send(result.status, result.body),
      () => send(500, { error: 'internal_error' }),
    );
  };
}

function readNodeBody(req: IncomingMessage & { body?: unknown }, max: number, ms: number): Promise<string> {
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
    // The server's own requestTimeout may be 0 (none): a body dripping a byte at a time is cut here.
    const timer = setTimeout(() => finish(() => reject(new BodyTimedOut())), ms);
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      settle();
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > max) {
        finish(() => reject(new BodyTooLarge()));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => finish(() => resolve(concatText(chunks, size))));
    req.on('error', (error) => finish(() => reject(error)));
    req.on('close', () => finish(() => reject(new Error('the request closed before its body ended'))));
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

const unavailable = { status: 503, body: { error: 'callback_timeout' } } as const;

/**
 * Creates a callback router. `authenticate` is required: a check of each delivery, or `'none'`.
 *
 * @example
 * const router = createCallbackRouter({ authenticate: (req) => checkSecret(req.headers) });
 * router.on('bridge_transfer_delivered', (transfer) => { … });
 */
export function createCallbackRouter(options: CallbackRouterOptions): CallbackRouter {
  return new CallbackRouter(options);
}
