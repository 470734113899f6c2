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
  /**
   * Overrides the client's `retry.maxRetryTimeMs` for this call: the time its retries may take
   * after the first attempt failed, waits included. A `Retry-After` past what is left of it ends
   * the call at once with the service's error (which carries `retryAfterMs`).
   *
   * @example
   * // At most about 3 × 2 s + 2 s, whatever the client's settings and the service's Retry-After.
   * await client.bridge.transfers.get({ userId, transferId }, { timeoutMs: 2_000, maxRetries: 2, maxRetryTimeMs: 2_000 });
   */
  maxRetryTimeMs?: number;
  /**
   * Headers for this call, over the client's `defaultHeaders`; `null` leaves a default header out.
   * Names are case-insensitive. `authorization`, `content-type`, `content-length` and `host` are
   * the SDK's own and are refused. A credential header's value is masked in what a server sends
   * back, as `defaultHeaders` says.
   *
   * @example
   * await client.bridge.routes({ headers: { 'x-correlation-id': jobId } });
   */
  headers?: Record<string, string | null | undefined>;
  /**
   * Merged into the init the SDK hands to `fetch` for this call, over the client's `fetchOptions`
   * (a `dispatcher`, say). The SDK's own `method`, `headers`, `body`, `signal` and `redirect` win.
   *
   * @example
   * await client.bridge.routes({ fetchOptions: { dispatcher: new ProxyAgent(proxyUrl) } });
   */
  fetchOptions?: Record<string, unknown>;
}
