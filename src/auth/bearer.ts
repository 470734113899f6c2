import type { RequestOptions } from '../core/request-options.js';
import { AuthenticationError } from '../errors/api-error.js';
import type { Deadline } from '../http/abort.js';
import type { Transport } from '../http/transport.js';
import type {
  CallHook,
  DataRequest,
  DataTransport,
  Exchange,
  RequestHook,
  Send,
  Settle,
  StartDeadline,
} from '../http/types.js';
import type { TokenCall, TokenProvider } from './token-provider.js';
import type { StoredToken } from './token-store.js';

const TOKEN_LABEL = '/auth/token';

/**
 * The bearer token on every data call, as a hook around the transport (Octokit's auth hook): the
 * lease of a token within the attempt's deadline (the token goes on the request, ky's hook makes
 * the header), one replay after a 401 with a newer token, and the
 * conclusion that the credential is stopped when that newer token is refused too.
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
        this.#leaseWithin(call, this.#transport.deadline('POST', TOKEN_LABEL, options)),
      );
    } finally {
      this.#tokens.end(call);
    }
  }

  /**
   * Waits for a token within the attempt's `deadline`. A token fetch shared with other calls goes
   * on for them when this caller gives up.
   */
  #lease(call: TokenCall, deadline: Deadline): StoredToken | Promise<StoredToken> {
    return this.#tokens.peek() ?? deadline.race(this.#tokens.get(call));
  }

  /** A lease that is an attempt of its own: its deadline ends with it. */
  async #leaseWithin(call: TokenCall, deadline: Deadline): Promise<StoredToken> {
    try {
      return await this.#lease(call, deadline);
    } finally {
      deadline.clear();
    }
  }

  open(
    spec: DataRequest<unknown>,
    options: RequestOptions | undefined,
    attemptDeadline: StartDeadline,
  ): CallHook {
    const { method, path: label } = spec;
    const retryable = spec.retryable ?? true;
    const tokens = this.#tokens;
    const call = tokens.begin();
    let replayed = false;
    /** The token this call's own 401 rejected: a 401 with a later one means the credential is stopped. */
    let rejectedFirst: string | undefined;

    // The attempt's time covers the wait for a token and the request. A request that is never
    // repeated (a submit) still gets its token under the retry policy: asking twice acts once.
    const leaseAndSend = async (request: Exchange, send: Send) => {
      const leased = retryable
        ? undefined
        : await this.#transport.retrying(method, label, true, options, () =>
            this.#leaseWithin(call, attemptDeadline()),
          );
      const deadline = attemptDeadline();
      try {
        const token = leased ?? (await this.#lease(call, deadline));
        const sent: Exchange = { ...request, token: token.accessToken };
        return { token, sent, response: await send(sent, deadline) };
      } finally {
        deadline.clear();
      }
    };

    return {
      attempt: async <T>(request: Exchange, send: Send, settle: Settle<T>): Promise<T> => {
        let { token, sent, response } = await leaseAndSend(request, send);
        // A first 401 may be one revoked token shared by many calls, not a stopped credential:
        // replay once with a newer token. The probe of a stopped credential fetched its own. A
        // request that may act twice (a submit) is never replayed: its caller finds out what happened.
        if (response.status === 401 && !replayed && !call.probe && retryable) {
          replayed = true;
          rejectedFirst = token.accessToken;
          await tokens.invalidate(token);
          ({ token, sent, response } = await leaseAndSend(request, send));
        }
        // A 5xx may come from a gateway in front of the service: only a 2xx-4xx proves the token works.
        if (response.status < 500 && response.status !== 401) tokens.accepted(token);
        const credentialStopped =
          response.status === 401 && (call.probe || (replayed && token.accessToken !== rejectedFirst));
        try {
          return await settle({ request: sent, response, grantedScopes: token.scopes, credentialStopped });
        } catch (error) {
          if (error instanceof AuthenticationError) {
            await tokens.invalidate(token);
            if (credentialStopped) throw tokens.stopped(call, error, 'stopped');
          }
          throw error;
        }
      },
      end: () => tokens.end(call),
    };
  }
}
