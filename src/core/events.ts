/** Emitted before each attempt of a request. */
export interface RequestEvent {
  method: string;
  /** Path below `/api/v1/s2s`, without the query string. */
  path: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/** Emitted when an attempt ends, with an answer or without one (`status` undefined). */
export interface ResponseEvent extends RequestEvent {
  status: number | undefined;
  /** Whole milliseconds from handing the request to fetch to the last byte of the answer. */
  elapsedMs: number;
  /** The answer's `x-request-id`, to quote to the service's support. */
  requestId: string | undefined;
  /** The error's class name when the attempt failed. */
  error: string | undefined;
}

/**
 * Emitted when the SDK waits and tries again. `attempt` is the attempt that just failed, so it is
 * also how many attempts were made so far; the next one is `attempt + 1`.
 */
export interface RetryEvent extends RequestEvent {
  /** What the next attempt waits for, Retry-After included. */
  delayMs: number;
  /** Class name of the error that caused the retry. */
  reason: string;
  status: number | undefined;
}

/** Emitted when a token was fetched (never carries the token itself). */
export interface TokenEvent {
  /** `fetched`: a caller waited for it; `refreshed`: fetched ahead of expiry in the background; `failed`. */
  action: 'fetched' | 'refreshed' | 'failed';
  /** Granted scopes, when fetched. */
  scopes: string[] | undefined;
  expiresInSec: number | undefined;
  elapsedMs: number;
  /** Class name of the error, when failed. */
  error: string | undefined;
  /**
   * When failed because the credential is stopped or refused (`AuthenticationError` with
   * `credentialStopped`, `InvalidClientError`): how long every call fails at once without asking.
   */
  retryAfterMs: number | undefined;
}

/** The client's events. Subscribe with `client.on(name, listener)`. */
export interface ClientEvents {
  request: (event: RequestEvent) => void;
  response: (event: ResponseEvent) => void;
  retry: (event: RetryEvent) => void;
  token: (event: TokenEvent) => void;
}

/** The names of the client's events, to refuse a typo that would otherwise never fire. */
export const CLIENT_EVENTS: readonly (keyof ClientEvents)[] = ['request', 'response', 'retry', 'token'];
