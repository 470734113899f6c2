/**
 * Options every method takes as its last argument.
 *
 * @example
 * await client.bridge.routes({ signal: AbortSignal.timeout(5_000), maxRetries: 0 });
 */
export interface RequestOptions {
  /** Cancels the call, its retries and its waits (a wait for a token included). */
  signal?: AbortSignal;
  /**
   * Time allowed for one attempt: the wait for a token, when none is cached, plus the request from
   * sending to the last byte of the answer.
   */
  timeoutMs?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
}
