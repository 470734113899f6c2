import { API_ERROR_BRAND, PartnerError } from './base.js';

/** The codes the specification names. Others arrive as plain strings and are kept. */
export type KnownErrorCode =
  | 'VALIDATION_FAILED'
  | 'USER_NOT_FOUND'
  | 'WALLET_NOT_LINKED'
  | 'INTENT_NOT_FOUND'
  | 'INSUFFICIENT_BALANCE';
/** An error code: a known one, or any string a newer service sends. */
export type ErrorCode = KnownErrorCode | (string & {});

/** The parsed `WWW-Authenticate` challenge of a 401. */
export interface AuthChallenge {
  scheme: string;
  /** `invalid_token` when a token was presented and rejected; absent when none was sent. */
  error?: string;
  errorDescription?: string;
}

/** What an `ApiError` is built from; useful to build one in a test double. */
export interface ApiErrorInit {
  status: number;
  method: string;
  path: string;
  code?: string | undefined;
  message: string;
  /** HTTP status text as the envelope's `error` field gives it. */
  statusText?: string | undefined;
  /** Fields of the error body beyond `statusCode`, `error`, `code` and `message`. */
  details?: Record<string, unknown>;
  requestId?: string | undefined;
  challenge?: AuthChallenge | undefined;
  retryAfterMs?: number | undefined;
  /** On a 404: the ids the request named. */
  ids?: Readonly<Record<string, string>> | undefined;
}

/**
 * An error answer from a data endpoint (the `{statusCode, error, code, message}` envelope, or any
 * non-success status). Branch on `code` (stable) or on the subclass, never on `message`.
 *
 * @example
 * if (isApiError(e, 'INTENT_NOT_FOUND')) rebuildIntent();
 */
export class ApiError extends PartnerError {
  override name: string = 'ApiError';
  readonly [API_ERROR_BRAND] = true;
  readonly status: number;
  readonly code: ErrorCode | undefined;
  readonly method: string;
  readonly path: string;
  readonly statusText: string | undefined;
  readonly details: Record<string, unknown>;
  readonly requestId: string | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.method = init.method;
    this.path = init.path;
    this.statusText = init.statusText;
    this.details = init.details ?? {};
    this.requestId = init.requestId;
  }
}

/**
 * 400: fix the request; retrying the same request does not help. A paused route, or an amount
 * outside the route's limits, arrives as this class with the service's own `code` and message.
 *
 * @example
 * catch (e) { if (e instanceof BadRequestError) return { refused: e.code ?? 'BAD_REQUEST', reason: e.message }; }
 */
export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
}

/**
 * 401: the access token was missing, malformed, expired or revoked. The SDK already fetched a new
 * token and replayed the request once; when `credentialStopped` is true a freshly issued token was
 * rejected too, which means the credential or its organisation is stopped (revoked, suspended).
 *
 * @example
 * catch (e) {
 *   if (e instanceof AuthenticationError && e.credentialStopped) alerts.page(`credential stopped; calls fail for ${e.retryAfterMs} ms`);
 * }
 */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
  readonly challenge: AuthChallenge | undefined;
  /**
   * True when a token fetched after this call's own 401 was rejected too: the credential or its
   * organisation is stopped.
   */
  readonly credentialStopped: boolean;
  /**
   * With `credentialStopped`: how long from now every call fails at once with this error and sends
   * nothing (the backoff starts at 1 s and doubles to 60 s while the credential stays stopped).
   */
  readonly retryAfterMs: number | undefined;

  constructor(init: ApiErrorInit & { credentialStopped?: boolean }) {
    super(init);
    this.challenge = init.challenge;
    this.credentialStopped = init.credentialStopped ?? false;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** True when the service named the presented token invalid (`error="invalid_token"`). */
  get invalidToken(): boolean {
    return this.challenge?.error === 'invalid_token';
  }
}

/**
 * 403: the token lacks a scope the endpoint needs. The message names both.
 *
 * @example
 * catch (e) { if (e instanceof PermissionDeniedError) log.error(`add ${e.requiredScopes.join(' ')} to the credential`); }
 */
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
  readonly requiredScopes: readonly string[];
  readonly grantedScopes: readonly string[] | undefined;

  constructor(
    init: ApiErrorInit & {
      requiredScopes?: readonly string[];
      grantedScopes?: readonly string[] | undefined;
    },
  ) {
    super(init);
    this.requiredScopes = init.requiredScopes ?? [];
    this.grantedScopes = init.grantedScopes;
  }
}

/**
 * 404: no such resource, or it belongs to another partner (the service does not say which).
 *
 * @example
 * catch (e) { if (e instanceof NotFoundError) log.warn('not found (or not ours)', e.ids); }
 */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
  /**
   * The ids the request named (`userId`, `routeId`, `transferId`, `intentId`): the service does not
   * say which one it did not find, and any of them may belong to another partner.
   */
  readonly ids: Readonly<Record<string, string>>;

  constructor(init: ApiErrorInit) {
    super(init);
    this.ids = init.ids ?? {};
  }
}

/**
 * 409: the email or wallet address already belongs to another user.
 *
 * @example
 * catch (e) { if (e instanceof ConflictError) return { error: 'this wallet is linked to another account' }; }
 */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}

/**
 * 429: slow down; `retryAfterMs` is the server's `Retry-After`, when it sent one. The SDK already
 * retried within its bounds before throwing it.
 *
 * @example
 * catch (e) { if (e instanceof RateLimitError) await queue.retryIn(e.retryAfterMs ?? 60_000); }
 */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  readonly retryAfterMs: number | undefined;

  constructor(init: ApiErrorInit) {
    super(init);
    this.retryAfterMs = init.retryAfterMs;
  }
}

/**
 * 503: the bridge is unreachable, its fee is above the route's ceiling, or the quote expires too soon.
 *
 * @example
 * catch (e) { if (e instanceof ServiceUnavailableError) await queue.retryIn(e.retryAfterMs ?? 30_000); }
 */
export class ServiceUnavailableError extends ApiError {
  override name = 'ServiceUnavailableError';
  readonly retryAfterMs: number | undefined;

  constructor(init: ApiErrorInit) {
    super(init);
    this.retryAfterMs = init.retryAfterMs;
  }
}

/**
 * Any other 5xx, once the retries the call allows were spent (a submit is never retried).
 *
 * @example
 * catch (e) { if (e instanceof InternalServerError) log.error(`service failed: ${e.status}`, e.requestId); }
 */
export class InternalServerError extends ApiError {
  override name = 'InternalServerError';
}

/**
 * 400 `VALIDATION_FAILED`: `errors` lists each failure.
 *
 * @example
 * catch (e) { if (isApiError(e, 'VALIDATION_FAILED')) for (const message of e.errors) log.warn(message); }
 */
export class ValidationFailedError extends BadRequestError {
  override name = 'ValidationFailedError';
  readonly errors: string[];

  constructor(init: ApiErrorInit & { errors: string[] }) {
    super(init);
    this.errors = init.errors;
  }
}

/** The token a wallet is short of, as `INSUFFICIENT_BALANCE` names it. */
export interface ShortToken {
  address: string;
  symbol: string;
  decimals: number;
}

/**
 * 400 `INSUFFICIENT_BALANCE`: the wallet cannot afford `amount + gasFee`. Figures are base units.
 * With `maxAmount: true` it means the wallet cannot afford even the smallest amount.
 *
 * @example
 * catch (e) {
 *   if (isApiError(e, 'INSUFFICIENT_BALANCE')) notify(`short by ${fromRawAmount(e.shortfall, e.token)} ${e.token.symbol}`);
 * }
 */
export class InsufficientBalanceError extends BadRequestError {
  override name = 'InsufficientBalanceError';
  readonly token: ShortToken;
  readonly required: bigint;
  readonly available: bigint;
  readonly shortfall: bigint;

  constructor(
    init: ApiErrorInit & { token: ShortToken; required: bigint; available: bigint; shortfall: bigint },
  ) {
    super(init);
    this.token = init.token;
    this.required = init.required;
    this.available = init.available;
    this.shortfall = init.shortfall;
  }
}

/**
 * 400 `WALLET_NOT_LINKED`: the user has no linked wallet.
 *
 * @example
 * catch (e) { if (isApiError(e, 'WALLET_NOT_LINKED')) return redirect('/wallet/link'); }
 */
export class WalletNotLinkedError extends BadRequestError {
  override name = 'WalletNotLinkedError';
}

/**
 * 400 `INTENT_NOT_FOUND`: the intent was spent or expired; build a new one instead of retrying.
 *
 * @example
 * catch (e) { if (isApiError(e, 'INTENT_NOT_FOUND')) built = await client.bridge.construct({ userId, routeId, amount }); }
 */
export class IntentNotFoundError extends BadRequestError {
  override name = 'IntentNotFoundError';
}

/**
 * `USER_NOT_FOUND`: no such user for this partner.
 *
 * @example
 * catch (e) { if (isApiError(e, 'USER_NOT_FOUND')) log.warn(`user ${e.ids.userId} is not ours`); }
 */
export class UserNotFoundError extends NotFoundError {
  override name = 'UserNotFoundError';
}
