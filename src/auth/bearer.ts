import type { RequestOptions } from '../core/request-options.js';
import type { Deadline } from '../core/time.js';
import { AuthenticationError } from '../errors/api-error.js';
import { Call, type Send } from '../http/call.js';
import { retry } from '../http/retry.js';
import type { Transport } from '../http/transport.js';
import type { DataRequest, DataTransport, RawResponse } from '../http/types.js';
import type { TokenCall, TokenProvider } from './token-provider.js';
import type { StoredToken } from './token-store.js';

/** What a wait for a token alone (`getScopes`) is named in events and errors. */
const TOKEN_WAIT: DataRequest<never> = { method: 'POST', path: '/auth/token', scopes: [] };

/**
 * One data call's dealings with its token, from its start to its end: its lease with the
 * provider (`TokenCall`), and its one replay after a 401.
 */
interface Lease extends TokenCall {
  replayed: boolean;
  /** The token this call's own 401 rejected: a 401 with a later one means the credential is stopped. */
  rejected: string | undefined;
}

/**
 * Waits for a token within `deadline`. A token fetch shared with other calls goes on for them when
 * this caller gives up.
 */
function lease(
  tokens: TokenProvider,
  call: TokenCall,
  deadline: Deadline,
): StoredToken | Promise<StoredToken> {
  return tokens.peek() ?? deadline.race(tokens.get(call));
}

/** A lease that is an attempt of its own: its deadline ends with it. */
async function leaseWithin(tokens: TokenProvider, call: TokenCall, deadline: Deadline): Promise<StoredToken> {
  try {
    return await lease(tokens, call, deadline);
  } finally {
    deadline.clear();
  }
}

/**
 * The bearer token on every data call: a hook around sending, in the shape of Octokit's auth hook
 * (`hook(call, send)`). Each attempt leases a token within its deadline (the token goes on the
 * call, the transport makes the header), replays once after a 401 with a newer token, and
 * concludes that the credential is stopped when that newer token is refused too.
 */
export class BearerAuth implements DataTransport {
  readonly #transport: Transport;
  readonly #tokens: TokenProvider;

  constructor(transport: Transport, tokens: TokenProvider) {
    this.#transport = transport;
    this.#tokens = tokens;
  }

  /** A data call with the bearer token: the call holds its lease from its start to its end. */
  async request<T>(spec: DataRequest<T>, options?: RequestOptions): Promise<T> {
    const held: Lease = { seenFailure: 0, probe: false, replayed: false, rejected: undefined };
    this.#tokens.begin(held);
    try {
      return await new Call(this.#transport, spec, options).run((call, send) =>
        this.#attempt(held, call, send),
      );
    } finally {
      this.#tokens.end(held);
    }
  }

  /** A token for the caller, under its own retries, timeout and signal (`getScopes`). */
  async token(options?: RequestOptions): Promise<StoredToken> {
    const held = this.#tokens.begin();
    const wait = new Call(this.#transport, TOKEN_WAIT, options);
    try {
      return await retry(wait, () => leaseWithin(this.#tokens, held, wait.begin()));
    } finally {
      this.#tokens.end(held);
    }
  }

  /** One attempt of `call` with the bearer token. */
  async #attempt<T>(held: Lease, call: Call<T>, send: Send): Promise<T> {
    const tokens = this.#tokens;
    // False for a submit: never replayed, and its token is leased under the retry policy.
    const retryable = call.spec.retryable ?? true;
    let token: StoredToken;
    let response: RawResponse;
    for (;;) {
      // A request that is never repeated leases its token first, retried: asking twice acts once.
      const leased = retryable ? undefined : await retry(call, () => leaseWithin(tokens, held, call.begin()));
      // The attempt's time covers the wait for a token and the request.
      const deadline = call.begin();
      try {
        token = leased ?? (await lease(tokens, held, deadline));
        call.token = token.accessToken;
        response = await send(call);
      } finally {
        deadline.clear();
      }
      // A first 401 may be one revoked token shared by many calls, not a stopped credential:
      // replay once with a newer token. The probe of a stopped credential fetched its own. A
      // request that may act twice (a submit) is never replayed: its caller finds out what happened.
      if (response.status !== 401 || held.replayed || held.probe || !retryable) break;
      held.replayed = true;
      held.rejected = token.accessToken;
      await tokens.invalidate(token);
    }
    // A 5xx may come from a gateway in front of the service: only a 2xx-4xx proves the token works.
    if (response.status < 500 && response.status !== 401) tokens.accepted(token);
    const credentialStopped =
      response.status === 401 && (held.probe || (held.replayed && token.accessToken !== held.rejected));
    try {
      return await call.settle(response, { grantedScopes: token.scopes, credentialStopped });
    } catch (error) {
      if (error instanceof AuthenticationError) {
        await tokens.invalidate(token);
        if (credentialStopped) throw tokens.stopped(held, error, 'stopped');
      }
      throw error;
    }
  }
}
