import { readArgs } from '../core/args.js';
import { type BodyErrors, type BodyLimits, readRequestText } from '../core/body.js';
import {
  CallbackBusyError,
  CallbackListenerError,
  CallbackParseError,
  CallbackTimeoutError,
} from '../errors/callback-errors.js';
import type { CallbackRequest, Dispatch, DispatchOutcome, RejectedDelivery } from './outcomes.js';

/**
 * The callback endpoint, written once on web `Request`/`Response` semantics: `fetchHandler` is it
 * as it is, and node.ts adapts node:http to it (as Hono's `getRequestListener` does), so the two
 * handlers cannot answer differently.
 */

/**
 * One delivery as the handler reads it. An adapter reads the request's fields up front (inside
 * `readArgs`, so a request whose reads throw is an ArgumentError) and leaves the costly parts
 * lazy: the body until the method and length passed, the `Headers` until an `authenticate` hook
 * asks for them.
 */
export interface Delivery {
  method: string;
  /** The declared content-length; NaN when there is none. */
  declaredBytes: number;
  /** The body within `limits`, or `undefined` past `limits.maxBytes`. */
  read(limits: BodyLimits, errors: BodyErrors): Promise<string | undefined>;
  /** What `authenticate` is shown. */
  describe(body: string): CallbackRequest;
}

/** The handler's answer, which each adapter writes its own way: a `Response` in all but name. */
export interface DeliveryAnswer {
  status: number;
  /** The JSON body, serialized once: every answer but a parse error's is one of a few constants. */
  body: string;
  /** Its headers, shared by every answer with that status. */
  headers: Readonly<Record<string, string>>;
  /** Status and headers as a `Response` takes them, built once with the answer. */
  init: ResponseInit;
}

/**
 * What the handler is given: the router's bounds, its check, where to report, and the router's
 * `Dispatch` of accepted bodies (this file knows nothing more of it).
 */
export interface HandlerContext {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  authenticate: ((request: CallbackRequest) => boolean | Promise<boolean>) | undefined;
  /** Runs the `authenticate` check within `listenerTimeoutMs`. */
  bounded: <T>(work: () => T | Promise<T>) => Promise<T>;
  dispatch: Dispatch;
  reportError: (error: unknown) => void;
  /** Tells the router's `rejected` listeners about a delivery `authenticate` refused. */
  reportRejected: (rejected: RejectedDelivery) => void;
}

/** Answers a delivery, giving the answer to `respond` (the adapter's writer) and settling with what it returned. */
export type DeliveryHandler = <R>(delivery: Delivery, respond: (answer: DeliveryAnswer) => R) => Promise<R>;

class BodyTimedOut extends Error {}

const BODY_ERRORS: BodyErrors = {
  timedOut: () => new BodyTimedOut(),
  aborted: () => new BodyTimedOut(),
  broken: (cause) => cause,
};

const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json' });
const answer = (status: number, body: unknown): DeliveryAnswer => {
  const headers = status === 405 ? Object.freeze({ ...JSON_HEADERS, allow: 'POST' }) : JSON_HEADERS;
  return { status, body: JSON.stringify(body), headers, init: Object.freeze({ status, headers }) };
};

const methodNotAllowed = answer(405, { error: 'method_not_allowed' });
const tooLarge = answer(413, { error: 'payload_too_large' });
const requestTimeout = answer(408, { error: 'request_timeout' });
const unreadable = answer(400, { error: 'unreadable_body' });
const unauthenticated = answer(401, { error: 'unauthenticated' });
const unavailable = answer(503, { error: 'callback_timeout' });
const busy = answer(503, { error: 'callback_busy' });
const received: Record<DispatchOutcome['outcome'], DeliveryAnswer> = {
  dispatched: answer(200, { received: true, outcome: 'dispatched' }),
  ignored: answer(200, { received: true, outcome: 'ignored' }),
  unknown: answer(200, { received: true, outcome: 'unknown' }),
};
/** What a node handler answers when the handler itself failed. */
export const internalError = answer(500, { error: 'internal_error' });

/**
 * The one callback endpoint: method, size, body time, `authenticate`, then dispatch. A delivery
 * whose state was not recorded is answered 5xx, so the service delivers it again. Each adapter
 * hands its `respond`, which the answer is given to in the handler's own turn: an adapter that
 * awaited the answer first would cost every delivery one turn more.
 *
 * @example
 * const handle = createDeliveryHandler({ maxBodyBytes, bodyTimeoutMs, authenticate, bounded, dispatch: (body) => router.dispatch(body), reportError, reportRejected });
 * const response = await handle(delivery, (answer) => new Response(answer.body, answer.init));
 */
export function createDeliveryHandler(context: HandlerContext): DeliveryHandler {
  const limits: BodyLimits = { maxBytes: context.maxBodyBytes, timeoutMs: context.bodyTimeoutMs };
  const { authenticate } = context;
  return async <R>(delivery: Delivery, respond: (answer: DeliveryAnswer) => R): Promise<R> => {
    if (delivery.method !== 'POST') return respond(methodNotAllowed);
    if (delivery.declaredBytes > limits.maxBytes) return respond(tooLarge);
    let body: string | undefined;
    try {
      body = await delivery.read(limits, BODY_ERRORS);
    } catch (error) {
      return respond(error instanceof BodyTimedOut ? requestTimeout : unreadable);
    }
    if (body === undefined) return respond(tooLarge);
    const answering = authenticate
      ? authenticated(context, authenticate, delivery.describe(body), body)
      : dispatched(context, body);
    return respond(answering instanceof Promise ? await answering : answering);
  };
}

/** The `authenticate` check within its bound, then dispatch. */
async function authenticated(
  context: HandlerContext,
  authenticate: NonNullable<HandlerContext['authenticate']>,
  request: CallbackRequest,
  body: string,
): Promise<DeliveryAnswer> {
  let allowed = false;
  let thrown: unknown;
  try {
    allowed = await context.bounded(() => authenticate(request));
  } catch (error) {
    if (error instanceof CallbackTimeoutError) return unavailable;
    thrown = error;
  }
  if (allowed !== true) {
    // Silent refusals look like callbacks that never come: say so, so a bad secret shows.
    context.reportRejected({ request, error: thrown });
    return unauthenticated;
  }
  return dispatched(context, body);
}

/** The answer to an accepted body: at once when its dispatch settled at once. */
function dispatched(context: HandlerContext, body: string): DeliveryAnswer | Promise<DeliveryAnswer> {
  let dispatching: DispatchOutcome | Promise<DispatchOutcome>;
  try {
    dispatching = context.dispatch(body);
  } catch (error) {
    return refused(context, error);
  }
  if (!(dispatching instanceof Promise)) return received[dispatching.outcome];
  return dispatching.then(
    (outcome) => received[outcome.outcome],
    (error: unknown) => refused(context, error),
  );
}

/** The answer to a body whose dispatch failed. */
function refused(context: HandlerContext, error: unknown): DeliveryAnswer {
  if (error instanceof CallbackParseError)
    return answer(400, { error: 'invalid_body', message: error.message });
  // Already reported when it happened. Busy: another process holds the transfer, so later.
  if (error instanceof CallbackTimeoutError) return unavailable;
  if (error instanceof CallbackBusyError) return busy;
  // A listener failed: not recorded, so a 500 makes the service deliver it again.
  if (error instanceof CallbackListenerError) return internalError;
  // The store failed: nothing was recorded, so a 5xx makes the service deliver it again.
  context.reportError(error);
  return internalError;
}

const toResponse = ({ body, init }: DeliveryAnswer): Response => new Response(body, init);

/**
 * The web adapter: a `Request` → `Response` handler. `new Headers` copies the request's headers only
 * for an `authenticate` hook, which is shown a copy it may change.
 *
 * @example
 * const fetchHandler = webHandler(handle, true);
 * Bun.serve({ fetch: fetchHandler });
 */
export function webHandler(
  handle: DeliveryHandler,
  withHeaders: boolean,
): (request: Request) => Promise<Response> {
  return (request) => {
    let delivery: Delivery;
    try {
      delivery = readArgs('CallbackRouter.fetchHandler', () => webDelivery(request, withHeaders));
    } catch (error) {
      return Promise.reject(error);
    }
    return handle(delivery, toResponse);
  };
}

function webDelivery(request: Request, withHeaders: boolean): Delivery {
  const method = request.method;
  const url = request.url;
  const headers = withHeaders ? new Headers(request.headers) : request.headers;
  const length = headers.get('content-length');
  return {
    method,
    declaredBytes: Number(length ?? Number.NaN),
    read: (limits, errors) => readRequestText(request, limits, errors, length),
    describe: (body) => ({ method, url, headers, body, remoteAddress: undefined, raw: request }),
  };
}
