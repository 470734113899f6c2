import { type ApiPromise, type ResponseSink, sinkOf, withSink } from '../core/api-promise.js';
import { apiCall, parseArgs } from '../core/args.js';
import { stringifyBody } from '../core/json.js';
import { PREFIX } from '../core/logger.js';
import type { RequestOptions } from '../core/request-options.js';
import { IntentNotFoundError } from '../errors/api-error.js';
import { untraced } from '../http/tracing.js';
import { refuseNonCanonical } from '../onchain/canonical.js';
import { BridgeResource } from '../resources/bridge.js';
import { type Api, callEndpoint, ENDPOINTS } from '../resources/endpoints.js';
import {
  type BridgeConstructParams,
  type BridgeSendParams,
  sendArgs,
  waitArgs,
  waitOptionsSchema,
} from '../resources/params.js';
import { TransfersResource } from '../resources/transfers.js';
import type { BridgeRoute, BridgeSendResult, BridgeTransfer } from '../schemas/bridge.js';
import { type BridgeExecuteParams, type BridgeExecuteResult, executeBridge } from './execute.js';
import { type IntentMemory, outcomeUnknown, resolveSubmitOutcome, type TakenSubmit } from './submit.js';
import { pollTransfer, type WaitOptions, type WaitParams } from './wait.js';

/** Routes carry live limits cached by the service up to a minute; the SDK keeps them no longer. */
const ROUTES_TTL_MS = 60_000;

/**
 * A user's bridge transfers: list, read, and wait for a state. Reached as `client.bridge.transfers`.
 *
 * @example
 * const transfer = await client.bridge.transfers.get({ userId, transferId });
 */
export class Transfers extends TransfersResource {
  readonly #warn: ((line: string) => void) | undefined;
  /** Set once this client said that `timeoutMs` of `wait` is deprecated: once is enough. */
  #warnedTimeoutMs = false;

  constructor(api: Api) {
    super(api);
    this.#warn = api.warn;
  }

  /**
   * Waits until a transfer reaches a final state (`delivered`, `refunded`, `failed`, `expired`), or
   * the state named by `until` (or one after it), reading it with growing intervals. Its deadline
   * follows the phase the transfer is in (`phaseTimeoutsMs`: minutes to source confirmation and to
   * delivery, hours in a refund); past one it throws a `TimeoutError` naming the `phase`.
   *
   * @example
   * const done = await client.bridge.transfers.wait({ userId, transferId });
   * const capped = await client.bridge.transfers.wait({ userId, transferId }, { totalTimeoutMs: 300_000 });
   * const viaCallbacks = await client.bridge.transfers.wait({ userId, transferId }, { router });
   * if (done.status !== 'delivered') console.warn(done.status, done.failureReason);
   */
  wait(params: WaitParams, options?: WaitOptions): ApiPromise<BridgeTransfer> {
    return apiCall(
      options,
      'bridge.transfers.wait',
      (checked) => {
        const args = parseArgs(waitArgs, params, 'bridge.transfers.wait');
        if (checked.timeoutMs !== undefined && !this.#warnedTimeoutMs && this.#warn) {
          this.#warnedTimeoutMs = true;
          this.#warn(
            `${PREFIX} bridge.transfers.wait: timeoutMs is deprecated, give totalTimeoutMs instead (in the next release timeoutMs will bound each read, not the whole wait)`,
          );
        }
        // Each read carries the wait's headers and fetch options, and reports its answer to the wait.
        const { headers, fetchOptions } = checked;
        // `apiCall` gave `checked` the wait's sink.
        const passOn = withSink<RequestOptions>(
          { ...(headers ? { headers } : {}), ...(fetchOptions ? { fetchOptions } : {}) },
          sinkOf(checked) as ResponseSink,
        );
        return pollTransfer(
          (readOptions) =>
            this.get({ userId: args.userId, transferId: args.transferId }, { ...passOn, ...readOptions }),
          args,
          checked,
        );
      },
      waitOptionsSchema,
    );
  }
}

/**
 * The cross-chain bridge: routes, quotes, building, submitting and following transfers. Reached
 * as `client.bridge`.
 *
 * @example
 * const routes = await client.bridge.routes();
 * const quote = await client.bridge.quote({ userId, routeId: routes[0].routeId, amount: '10' });
 */
export class Bridge extends BridgeResource<Transfers> {
  readonly #api: Api;
  /** The batches this client built, so that an unclear submit can be looked up. */
  readonly #intents: IntentMemory;
  #routes: { at: number; routes: Promise<BridgeRoute[]> } | undefined;

  /** `intents` is shared with every client derived from this one (`withOptions`). */
  constructor(api: Api, intents: IntentMemory) {
    super(api, new Transfers(api), (userId, built) =>
      intents.remember(built.intentId, {
        userId,
        transferId: built.transferId,
        userOpHash: built.bundle.userOpHash,
      }),
    );
    this.#api = api;
    this.#intents = intents;
  }

  /**
   * Submits the signatures of a constructed batch. It is never sent twice: neither retried nor
   * replayed after a 401. When the answer leaves the outcome unclear (a timeout, a broken
   * connection, a 2xx that cannot be read, a 401, a 5xx other than the service's own 503, or
   * `signal` firing after the submit went out) or the intent is answered as spent, it reads the
   * transfer of an intent this client built: it returns the transfer once that has left `pending`,
   * and otherwise throws `SubmitOutcomeUnknownError` with `intentId`, `transferId` and `userOpHash`.
   * After an abort that is one read of at most 2 s. A signature the chain would refuse (s above
   * n/2, v other than 27 or 28, in the user operation or the authorization) is a `SigningError`
   * before anything is sent: `signBridgeBatch` returns them in the form the chain takes.
   *
   * @example
   * const signed = await signBridgeBatch({ verified: verifyBridgeBatch({ route, construct: built, wallet }), signer });
   * const { transferId } = await client.bridge.send({ userId, intentId: built.intentId, ...signed });
   */
  override send(params: BridgeSendParams, options?: RequestOptions): ApiPromise<BridgeSendResult> {
    return apiCall(options, 'bridge.send', (checked) => this.#send(params, checked));
  }

  async #send(params: BridgeSendParams, given: RequestOptions): Promise<BridgeSendResult> {
    const args = parseArgs(sendArgs, params, 'bridge.send');
    refuseNonCanonical(args);
    const mine = () => {
      const known = this.#intents.get(args.intentId);
      return known?.userId === args.userId ? known : undefined;
    };
    const parent = sinkOf(given);
    const taken = mine()?.taken;
    if (taken) {
      // Taken already, through this client or one sharing its memory: a second submit could only
      // be refused as spent, and the first one's result is the answer.
      if (taken.response) parent?.(taken.response, taken.requestId);
      return { ...taken.result };
    }
    let answer: Pick<TakenSubmit, 'response' | 'requestId'> = { response: undefined, requestId: undefined };
    const options = withSink(given, (response, requestId) => {
      answer = { response, requestId };
      parent?.(response, requestId);
    });
    let sent = false;
    let result: BridgeSendResult;
    try {
      const onSent = () => {
        sent = true;
      };
      const body = stringifyBody(args);
      const ids = { userId: args.userId, intentId: args.intentId };
      result = (await callEndpoint(this.#api, ENDPOINTS.send, { body, onSent, ids }, options)).data;
    } catch (error) {
      // Until the submit went out nothing can have happened (a token failure, an early abort).
      if (!sent || (!outcomeUnknown(error) && !(error instanceof IntentNotFoundError))) throw error;
      result = await resolveSubmitOutcome(
        args.intentId,
        mine(),
        error,
        (userId, transferId, readOptions) => this.transfers.get({ userId, transferId }, readOptions),
        options,
      );
    }
    this.#intents.taken(args.intentId, args.userId, { result, ...answer });
    return result;
  }

  /**
   * The whole flow in one call, verified before signing: reads the route (cached up to a minute),
   * constructs, verifies the batch against that route and the signer's wallet, signs, and submits.
   * Nothing is signed when a check fails. The signer runs within the call's `signal` and its
   * `timeoutMs` (when the call gives one): a signer that does not answer in time ends the call with
   * `AbortError` or `TimeoutError`, nothing is submitted, and what it answers later is dropped.
   * The submit behaves as in `send`, and every error thrown
   * from the submit on carries `intentId`, `transferId` and `userOpHash`, so that the transfer can
   * be looked up before anything is built again.
   *
   * @example
   * const account = privateKeyToAccount(userKey);
   * const { transferId, summary } = await client.bridge.execute({
   *   userId, routeId, amount: '25.5', signer: account,
   *   onProgress: (p) => console.log(p.step),
   * });
   * const final = await client.bridge.transfers.wait({ userId, transferId });
   */
  execute(params: BridgeExecuteParams, options?: RequestOptions): ApiPromise<BridgeExecuteResult> {
    const span = this.#api.span ?? untraced;
    return apiCall(options, 'bridge.execute', (checked) =>
      span('bridge.execute', () =>
        executeBridge(
          {
            route: (routeId, routeOptions) => this.#route(routeId, routeOptions),
            construct: (construct, constructOptions) =>
              this.construct(construct as BridgeConstructParams, constructOptions),
            send: (send, sendOptions) => this.send(send, sendOptions),
            span,
            ...(this.#api.report ? { report: this.#api.report } : {}),
          },
          params,
          checked,
        ),
      ),
    );
  }

  /** A route by id from a routes read at most a minute old; read again once if it is not there. */
  async #route(routeId: string, options: RequestOptions | undefined): Promise<BridgeRoute | undefined> {
    const cached = this.#routes;
    const fresh = cached && Date.now() - cached.at < ROUTES_TTL_MS;
    if (fresh) {
      const found = (await cached.routes.catch(() => [])).find((route) => route.routeId === routeId);
      if (found) return found;
    }
    const routes = this.routes(options);
    this.#routes = { at: Date.now(), routes };
    routes.catch(() => {
      if (this.#routes?.routes === routes) this.#routes = undefined;
    });
    return (await routes).find((route) => route.routeId === routeId);
  }
}
