import { formatIssues, type Issue } from '../schemas/issues.js';
import { PartnerError } from './base.js';
import { scrubForeign } from './redact.js';

/** One problem with the arguments of a call: where it is (e.g. `amount`) and what is wrong. */
export type ArgumentIssue = Issue;

/**
 * Bad input caught before any request was sent: nothing reached the service.
 *
 * @example
 * await client.bridge.quote({ userId: 'u1', routeId: 'r1', amount: '-1' });
 * // ArgumentError: Invalid arguments to bridge.quote: amount: must be a positive decimal …
 */
export class ArgumentError extends PartnerError {
  override name = 'ArgumentError' as const;
  readonly issues: ArgumentIssue[];

  constructor({ where, issues, cause }: { where: string; issues: ArgumentIssue[]; cause?: unknown }) {
    super(`Invalid arguments to ${where}: ${formatIssues(issues)}`, { cause });
    this.issues = issues;
  }
}

/**
 * The service could not be reached, or the connection broke before a full answer arrived. The
 * message ends with the network's reason (`Connection error on GET /bridge/routes: ECONNREFUSED:
 * connect ECONNREFUSED 127.0.0.1:4010`); `cause` is a copy of what the network layer or a custom
 * `fetch` threw (name, message, `code`, their causes), with the client's secret and tokens masked,
 * never the request or its headers.
 *
 * @example
 * catch (e) { if (e instanceof ConnectionError) log.warn(`${e.method} ${e.path} unreachable`, e.cause); }
 */
export class ConnectionError extends PartnerError {
  override name = 'ConnectionError' as const;
  readonly method: string;
  readonly path: string;

  constructor({ method, path, cause }: { method: string; path: string; cause?: unknown }) {
    super(`Connection error on ${method} ${path}`, { cause });
    this.method = method;
    this.path = path;
  }
}

/**
 * No complete answer arrived within `timeoutMs` (one attempt, body included), or `transfers.wait`
 * reached a deadline: then `transferId`, `lastStatus` and `phase` say where the transfer stood.
 *
 * @example
 * catch (e) {
 *   if (e instanceof TimeoutError && e.transferId) await queue.checkLater(e.transferId); // the transfer goes on
 * }
 */
export class TimeoutError extends PartnerError {
  override name = 'TimeoutError' as const;
  readonly method: string;
  readonly path: string;
  readonly timeoutMs: number;
  /** When `transfers.wait` gave up: the transfer it waited on. */
  readonly transferId: string | undefined;
  /** When `transfers.wait` gave up: the status its last read saw (undefined if no read answered). */
  readonly lastStatus: string | undefined;
  /**
   * When `transfers.wait` gave up: the phase the transfer was in (`sourceConfirmation`, `delivery`
   * or `refund`; undefined if no read answered). `timeoutMs` is the deadline that ran out: that
   * phase's, or `totalTimeoutMs`.
   */
  readonly phase: string | undefined;
  /**
   * When `transfers.wait` with a `router` gave up: how many deliveries the router refused
   * (`authenticate` said no) during the wait. More than none points at the check, not the transfer.
   */
  readonly refusedDeliveries: number | undefined;

  constructor({
    method,
    path,
    timeoutMs,
    transferId,
    lastStatus,
    phase,
    refusedDeliveries,
    cause,
  }: {
    method: string;
    path: string;
    timeoutMs: number;
    transferId?: string | undefined;
    lastStatus?: string | undefined;
    phase?: string | undefined;
    refusedDeliveries?: number | undefined;
    /** When `transfers.wait` gave up after answers it refused: the last refusal. */
    cause?: unknown;
  }) {
    super(
      transferId === undefined
        ? `${method} ${path} timed out after ${timeoutMs} ms`
        : `Waiting for transfer ${transferId} timed out after ${timeoutMs} ms${phase === undefined ? '' : ` in its ${phase} phase`} (last status: ${lastStatus ?? 'none read'})${
            refusedDeliveries ? refusedNote(refusedDeliveries) : ''
          }`,
      { cause },
    );
    this.method = method;
    this.path = path;
    this.timeoutMs = timeoutMs;
    this.transferId = transferId;
    this.lastStatus = lastStatus;
    this.phase = phase;
    this.refusedDeliveries = refusedDeliveries;
  }
}

function refusedNote(count: number): string {
  const deliveries = count === 1 ? '1 delivery' : `${count} deliveries`;
  return `; the callback router refused ${deliveries} during the wait: check its authenticate (its 'rejected' event shows each)`;
}

/**
 * The caller's `AbortSignal` fired. Its reason is kept in `cause`. The name matches the DOM's so
 * that existing `e.name === 'AbortError'` checks keep working.
 *
 * @example
 * const routes = await client.bridge.routes({ signal: AbortSignal.timeout(5_000) }).catch((e) => {
 *   if (e instanceof AbortError) return []; // given up on purpose
 *   throw e;
 * });
 */
export class AbortError extends PartnerError {
  override name = 'AbortError' as const;

  constructor(options?: { cause?: unknown }) {
    super('The operation was aborted', options);
  }
}

/** One place where a server answer did not fit the shape the SDK knows. */
export type ResponseIssue = Issue;

/**
 * The server answered with a status that means success, but with a body the SDK does not know
 * (broken JSON, missing or mistyped fields, or, with `strict: true`, unknown fields or values), or
 * one that is not an answer to what was asked: a transfer read naming another transfer or user, a
 * list holding another user's transfers, a submit naming another transfer or hash. Those fields are
 * in `mismatched`; their values are never in the error (they may be another user's).
 * The body itself is not kept: it may hold a token.
 *
 * @example
 * catch (e) { if (e instanceof ResponseValidationError) log.error(`unexpected answer to ${e.path}`, e.issues); }
 */
export class ResponseValidationError extends PartnerError {
  override name = 'ResponseValidationError' as const;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly issues: ResponseIssue[];
  /**
   * The answer's fields that are well formed but not what was asked for (`transferId`, `userId`,
   * `userOpHash`, a list item's `userId` or `status`); empty when the shape itself was wrong.
   */
  readonly mismatched: string[];

  constructor({
    method,
    path,
    status,
    issues,
    mismatched = [],
  }: {
    method: string;
    path: string;
    status: number;
    issues: ResponseIssue[];
    mismatched?: string[];
  }) {
    super(`Unexpected response to ${method} ${path} (${status}): ${formatIssues(issues, 5)}`);
    this.method = method;
    this.path = path;
    this.status = status;
    this.issues = issues;
    this.mismatched = mismatched;
  }

  /**
   * An answer whose `issues` are fields naming something other than what was asked: `mismatched`
   * is their last path segments (`data.3.userId` → `userId`).
   */
  static mismatch(init: { method: string; path: string; status: number; issues: readonly ResponseIssue[] }) {
    const issues = [...init.issues];
    const mismatched = [...new Set(issues.map((issue) => issue.path.slice(issue.path.lastIndexOf('.') + 1)))];
    return new ResponseValidationError({ ...init, issues, mismatched });
  }
}

/**
 * A chain's JSON-RPC node (a `chains` entry, the `rpc` of `confirmUserOperation`) answered a read
 * with an error: an HTTP status other than 200, a JSON-RPC `error` object, or an EIP-1193 provider
 * that threw. `retryable` says whether the SDK tried it again (429, 5xx, and the node codes of a
 * passing overload: -32005 limit exceeded, -32603 internal error, -32000 server error). The RPC's
 * URL is never in it: an RPC URL often holds an API key; `endpoint` is its origin only.
 *
 * @example
 * catch (e) { if (e instanceof ChainRpcError) log.warn(`${e.method} on ${e.endpoint} failed`, e.code ?? e.status); }
 */
export class ChainRpcError extends PartnerError {
  override name = 'ChainRpcError' as const;
  /** The JSON-RPC method, e.g. `eth_getLogs`. */
  readonly method: string;
  /** The RPC URL's origin (`https://base-mainnet.example.com`), or `provider` for an EIP-1193 provider. */
  readonly endpoint: string;
  /** The HTTP status, when the node answered one other than 200. */
  readonly status: number | undefined;
  /** The JSON-RPC error code, when the node (or provider) gave one. */
  readonly code: number | undefined;
  readonly retryable: boolean;

  constructor(init: {
    method: string;
    endpoint: string;
    status?: number | undefined;
    code?: number | undefined;
    /** What the node said: scrubbed and cut short, it may echo what was asked. */
    reason?: string | undefined;
    retryable: boolean;
    cause?: unknown;
  }) {
    const said = [
      init.status === undefined ? '' : `HTTP ${init.status}`,
      init.code === undefined ? '' : `code ${init.code}`,
      init.reason ? scrubForeign(init.reason) : '',
    ].filter(Boolean);
    super(`${init.method} on ${init.endpoint} failed${said.length ? `: ${said.join(', ')}` : ''}`, {
      cause: init.cause,
    });
    this.method = init.method;
    this.endpoint = init.endpoint;
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.retryable;
  }
}
