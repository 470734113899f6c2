/**
 * The promise every data method returns: awaited, it is the parsed `data`; `.withResponse()` also
 * gives the HTTP answer it came from (openai-node's shape). The transport reports each answer to
 * the sink the call's request carries (beside its options, never inside them), so flows made of
 * several requests report the last one, and nothing is kept once the call settles.
 */

import { ArgumentError } from '../errors/client-errors.js';

/** Where a call's answers are reported: the request's description carries it to the transport. */
export type ResponseSink = (response: Response, requestId: string | undefined) => void;

/** What `.withResponse()` resolves to. */
export interface WithResponse<T> {
  /** What awaiting the promise gives. */
  data: T;
  /**
   * The HTTP answer of the call's last request, its body already read. For a flow of several
   * requests (`execute`, `wait`), the one its result came from.
   */
  response: Response;
  /** The answer's `x-request-id`, to quote to the service's support. */
  requestId: string | undefined;
}

/** What the base promise resolves with at once: one function for every call, not one each. */
const resolveAtOnce = (resolve: (value: never) => void) => resolve(undefined as never);

/**
 * What every data method returns: a `Promise` of the parsed data, plus `.withResponse()` for the
 * HTTP answer and its request id. The SDK makes them; there is no need to construct one.
 *
 * @example
 * const { data: routes, requestId, response } = await client.bridge.routes().withResponse();
 * console.log(response.status, requestId);
 */
export class ApiPromise<T> extends Promise<T> {
  /**
   * The call itself; every way to read this promise goes through it. Its answers are reported to
   * the two fields below before it settles: no further object or promise per call in flight.
   */
  readonly #started: Promise<T>;
  #response: Response | undefined;
  #requestId: string | undefined;

  /**
   * Starts `run` at once. `run` gets the sink to put in the options of the requests it makes;
   * `parent` is the sink of the call this one runs inside of, which is told of the answers too.
   */
  constructor(run: (sink: ResponseSink) => Promise<T>, parent?: ResponseSink) {
    // The base promise is never observed: every way to read this one goes through `#started`.
    super(resolveAtOnce);
    if (typeof run !== 'function' || (parent !== undefined && typeof parent !== 'function')) {
      throw new ArgumentError({
        where: 'ApiPromise',
        issues: [{ path: typeof run !== 'function' ? 'run' : 'parent', message: 'must be a function' }],
      });
    }
    let started: Promise<T>;
    try {
      started = run((response, requestId) => {
        this.#response = response;
        this.#requestId = requestId;
        parent?.(response, requestId);
      });
    } catch (error) {
      started = Promise.reject(error);
    }
    this.#started = started;
  }

  // `then` of a Promise subclass builds results through `this.constructor`: plain promises here.
  static override get [Symbol.species]() {
    return Promise;
  }

  // `ApiPromise.resolve(x)`, `ApiPromise.all([...])` and the other statics would construct an
  // ApiPromise around their own executor, which is no `run`, and throw a TypeError. They give plain
  // promises, as their declared types say, so that a test double can be made with them.
  static {
    for (const name of ['resolve', 'reject', 'all', 'allSettled', 'any', 'race', 'withResolvers', 'try']) {
      const method = (Promise as unknown as Record<string, unknown>)[name];
      if (typeof method === 'function')
        Object.defineProperty(ApiPromise, name, {
          value: method.bind(Promise),
          writable: true,
          configurable: true,
        });
    }
  }

  /**
   * The data together with the HTTP answer and its request id.
   *
   * @example
   * const { data, response, requestId } = await client.bridge.transfers.get({ userId, transferId }).withResponse();
   */
  withResponse(): Promise<WithResponse<T>> {
    return this.#started.then((data) => ({
      data,
      response: this.#response as Response,
      requestId: this.#requestId,
    }));
  }

  // biome-ignore lint/suspicious/noThenProperty: an ApiPromise is a promise.
  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#started.then(onfulfilled, onrejected);
  }

  override catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#started.catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#started.finally(onfinally);
  }
}
