import type { RequestOptions } from '../core/request-options.js';
import type { Deadline } from '../core/time.js';
import { AuthenticationError } from '../errors/api-error.js';
import type { Transport } from '../http/transport.js';
import type {
  CallContext,
  CallHook,
  DataRequest,
  DataTransport,
  Exchange,
  RawResponse,
  RequestHook,
} from '../http/types.js';
import type { TokenCall, TokenProvider } from './token-provider.js';
import type { StoredToken } from './token-store.js';

const TOKEN_LABEL = '/auth/token';

/**
 * Waits for a token within the attempt's `deadline`. A token fetch shared with other calls goes
 * on for them when this caller gives up.
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
 * The bearer token on every data call, as a hook around the transport (Octokit's auth hook): the
 * lease of a token within the attempt's deadline (the token goes on the request, the transport
 * makes the header), one replay after a 401 with a newer token, and the conclusion that the
 * credential is stopped when that newer token is refused too.
 */
export class BearerAuth implements RequestHook, DataTransport {
  readonly #transport: Transport;
  readonly #tokens: TokenProvider;

  constructor(transport: Transport, tokens: TokenProvider) {
    this.#transport = transport;
    this.#tokens = tokens;
  }

  /** A data call with the bearer token. */
  request<T>(spec: DataRequest<T>, options?: RequestOptions): Promise<T> {
    return this.#transport.request(spec, options, this);
  }

  /** A token for the caller, under its own retries, timeout and signal (`getScopes`). */
  async token(options?: RequestOptions): Promise<StoredToken> {
    const call = this.#tokens.begin();
    try {
      return await this.#transport.retrying('POST', TOKEN_LABEL, true, options, () =>
        leaseWithin(this.#tokens, call, this.#transport.deadline('POST', TOKEN_LABEL, options)),
      );
    } finally {
      this.#tokens.end(call);
    }
  }

  open(spec: DataRequest<unknown>, options: RequestOptions | undefined): CallHook {
    return new BearerCall(this.#transport, this.#tokens, spec.retryable ?? true, options);
  }
}

/**
 * One data call's dealings with the bearer token: an object, so that a call in flight holds no
 * closure. It is the call's token lease too (`TokenCall`), not an object more.
 */
class BearerCall implements CallHook, TokenCall {
  seenFailure = 0;
  probe = false;
  readonly #transport: Transport;
  readonly #tokens: TokenProvider;
  /** False for a submit: never replayed, and its token is leased under the retry policy. */
  readonly #retryable: boolean;
  readonly #options: RequestOptions | undefined;
  #replayed = false;
  /** The token this call's own 401 rejected: a 401 with a later one means the credential is stopped. */
  #rejectedFirst: string | undefined;

  constructor(
    transport: Transport,
    tokens: TokenProvider,
    retryable: boolean,
    options: RequestOptions | undefined,
  ) {
    this.#transport = transport;
    this.#tokens = tokens;
    this.#retryable = retryable;
    this.#options = options;
    tokens.begin(this);
  }

  /**
   * A token for a request that is never repeated (a submit), under the retry policy: asking twice
   * acts once.
   */
  #leaseRetried(call: CallContext<unknown>): Promise<StoredToken> {
    const { method, path } = call.spec;
    return this.#transport.retrying(method, path, true, this.#options, () =>
      leaseWithin(this.#tokens, this, call.deadline()),
    );
  }

  async attempt<T>(call: CallContext<T>, request: Exchange): Promise<T> {
    const tokens = this.#tokens;
    let token: StoredToken;
    let response: RawResponse;
    for (;;) {
      const leased = this.#retryable ? undefined : await this.#leaseRetried(call);
      // The attempt's time covers the wait for a token and the request.
      const deadline = call.deadline();
      try {
        token = leased ?? (await lease(tokens, this, deadline));
        request.token = token.accessToken;
        response = await call.send(request, deadline);
      } finally {
        deadline.clear();
      }
      // A first 401 may be one revoked token shared by many calls, not a stopped credential:
      // replay once with a newer token. The probe of a stopped credential fetched its own. A
      // request that may act twice (a submit) is never replayed: its caller finds out what happened.
      if (response.status !== 401 || this.#replayed || this.probe || !this.#retryable) break;
      this.#replayed = true;
      this.#rejectedFirst = token.accessToken;
      await tokens.invalidate(token);
    }
    // A 5xx may come from a gateway in front of the service: only a 2xx-4xx proves the token works.
    if (response.status < 500 && response.status !== 401) tokens.accepted(token);
    const credentialStopped =
      response.status === 401 &&
      (this.probe || (this.#replayed && token.accessToken !== this.#rejectedFirst));
    try {
      return await call.settle({ request, response, grantedScopes: token.scopes, credentialStopped });
    } catch (error) {
      if (error instanceof AuthenticationError) {
        await tokens.invalidate(token);
        if (credentialStopped) throw tokens.stopped(this, error, 'stopped');
      }
      throw error;
    }
  }

  end(): void {
    this.#tokens.end(this);
  }
}
