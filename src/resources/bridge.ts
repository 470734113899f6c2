import type { ApiPromise, ResponseSink } from '../core/api-promise.js';
import { apiCall, parseOptions } from '../core/args.js';
import type { RequestOptions } from '../core/request-options.js';
import { IntentNotFoundError } from '../errors/api-error.js';
import {
  type ChainRpc,
  type ConfirmOnChainParams,
  type ConfirmOptions,
  confirmationOfBundle,
  confirmChecked,
  confirmOptionsSchema,
  latestBlock,
} from '../flows/confirm.js';
import {
  type BridgeExecuteParams,
  type BridgeExecuteResult,
  executeBridge,
} from '../flows/execute/execute.js';
import { SigningTimes } from '../flows/execute/signing.js';
import {
  type IntentMemory,
  type KnownIntent,
  outcomeUnknown,
  refuseOtherSubmit,
  resolveSubmitOutcome,
  type SubmitResult,
  settleOnChain,
  type TakenSubmit,
} from '../flows/submit.js';
import { untraced } from '../http/tracing.js';
import { refuseNonCanonical } from '../onchain/canonical.js';
import { quantity } from '../onchain/hex.js';
import type {
  BridgeConstructResult,
  BridgeFeeEstimate,
  BridgeQuote,
  BridgeRoute,
  BridgeTransfer,
} from '../schemas/bridge.js';
import type { UserOperationConfirmation } from '../schemas/chain.js';
import type { Api } from './endpoints.js';
import { ENDPOINTS, send } from './endpoints.js';
import type {
  BridgeConstructParams,
  BridgeFeeEstimateParams,
  BridgeQuoteParams,
  BridgeSendParams,
  ConstructArgs,
} from './params.js';
import { call, checkArgs, Resource } from './resource.js';
import { Transfers } from './transfers.js';

export { Transfers };

/** Routes carry live limits cached by the service up to a minute; the SDK keeps them no longer. */
const ROUTES_TTL_MS = 60_000;

/**
 * The cross-chain bridge: routes, quotes, building, submitting and following transfers. Reached
 * as `client.bridge`.
 *
 * @example
 * const routes = await client.bridge.routes();
 * const quote = await client.bridge.quote({ userId, routeId: routes[0].routeId, amount: '10' });
 */
export class Bridge extends Resource {
  /** A user's transfers. */
  readonly transfers: Transfers;
  /** The batches this client built, so that an unclear submit can be looked up. */
  readonly #intents: IntentMemory;
  /** Past signing times by signer address: the learned budget of `execute`. */
  readonly #signingTimes: SigningTimes;
  /** The client's `chains`: an RPC per source chain id, to confirm operations on chain. */
  readonly #chains: Readonly<Record<number, ChainRpc>> | undefined;
  #routes: { at: number; routes: Promise<BridgeRoute[]> } | undefined;

  /** `intents` and `signingTimes` are shared with every client derived from this one (`withOptions`). */
  constructor(
    api: Api,
    intents: IntentMemory,
    signingTimes: SigningTimes = new SigningTimes(),
    chains?: Readonly<Record<number, ChainRpc>>,
  ) {
    super(api);
    this.transfers = new Transfers(api);
    this.#intents = intents;
    this.#signingTimes = signingTimes;
    this.#chains = chains;
  }

  /**
   * Every route, one per direction, with live limits. The source of truth for what can be
   * bridged: never hard-code a route id, never assume a direction exists because its reverse does.
   *
   * @example
   * const routes = await client.bridge.routes();
   * const route = routes.find((r) => r.from.chain === 'base' && r.to.chain === 'arbitrum');
   */
  routes(options?: RequestOptions): ApiPromise<BridgeRoute[]> {
    return call(this.api, ENDPOINTS.routes, undefined, options);
  }

  /**
   * An indicative quote for a user's wallet. Construct returns the quote that counts.
   *
   * @example
   * const quote = await client.bridge.quote({ userId, routeId, amount: '25.5' });
   * console.log(quote.amountOut, quote.gasFee, quote.gasFeeToken);
   */
  quote(params: BridgeQuoteParams, options?: RequestOptions): ApiPromise<BridgeQuote> {
    return call(this.api, ENDPOINTS.quote, params, options);
  }

  /**
   * The gas fee on an amount and `finalAmount`, about what a `maxAmount` construct would bridge for
   * a wallet holding `amount`. Reads no wallet and carries no provider fee.
   *
   * @example
   * const { finalAmount } = await client.bridge.feeEstimate({ routeId, amount: '100' });
   */
  feeEstimate(params: BridgeFeeEstimateParams, options?: RequestOptions): ApiPromise<BridgeFeeEstimate> {
    return call(this.api, ENDPOINTS.feeEstimate, params, options);
  }

  /**
   * Builds the unsigned batch for a bridge. Verify it with `verifyBridgeBatch` before signing.
   * Needs `bridge:read` and `transactions:write`. Retried like a read (connection errors, timeouts,
   * 429, any 5xx): an attempt whose answer was lost may leave an unsigned intent behind, which
   * nothing signs and which simply expires.
   *
   * @example
   * const built = await client.bridge.construct({ userId, routeId, amount: '25.5' });
   * const all = await client.bridge.construct({ userId, routeId, maxAmount: true });
   */
  construct(params: BridgeConstructParams, options?: RequestOptions): ApiPromise<BridgeConstructResult> {
    return apiCall(options, ENDPOINTS.construct.name, (checked, sink) =>
      this.#construct(checkArgs(ENDPOINTS.construct, params), checked, sink),
    );
  }

  /** Builds a batch from checked arguments and remembers it, so that an unclear submit of it can be looked up. */
  async #construct(
    args: ConstructArgs,
    options: RequestOptions | undefined,
    sink: ResponseSink | undefined,
  ): Promise<BridgeConstructResult> {
    const data = await send(this.api, ENDPOINTS.construct, args, { options, sink });
    const { chainId, entryPoint, userOp } = data.bundle;
    const nonce = quantity(userOp.nonce);
    this.#intents.remember(data.intentId, {
      userId: args.userId,
      transferId: data.transferId,
      userOpHash: data.bundle.userOpHash,
      ...(nonce === undefined ? {} : { operation: { chainId, entryPoint, sender: userOp.sender, nonce } }),
    });
    return data;
  }

  /**
   * Submits the signatures of a constructed batch. It is never sent twice: neither retried nor
   * replayed after a 401. When the answer leaves the outcome unclear (a timeout, a broken
   * connection, a 2xx that cannot be read, a 401, a 5xx other than the service's own 503, or
   * `signal` firing after the submit went out) or the intent is answered as spent, it reads the
   * transfer of an intent this client built: it returns the transfer once that has left `pending`.
   * When the reads do not tell and the client has an RPC for the source chain (`chains`), it asks
   * the chain (searching from the latest block read before the submit): `included` returns the ids
   * with `onChain` (the `UserOperationEvent`; `onChain.success` false when its calls reverted),
   * `superseded` throws `OperationSupersededError` (safe to rebuild). Otherwise it throws
   * `SubmitOutcomeUnknownError` with `intentId`, `transferId`, `userOpHash` (and `onChain`).
   * After an abort that is one read of at most 2 s. A signature the chain would refuse (s above
   * n/2, v other than 27 or 28, in the user operation or the authorization) is a `SigningError`
   * before anything is sent: `signBridgeBatch` returns them in the form the chain takes.
   *
   * @example
   * const signed = await signBridgeBatch({ verified: verifyBridgeBatch({ route, construct: built, wallet }), signer });
   * const { transferId } = await client.bridge.send({ userId, intentId: built.intentId, ...signed });
   */
  send(params: BridgeSendParams, options?: RequestOptions): ApiPromise<SubmitResult> {
    return apiCall(options, ENDPOINTS.send.name, (checked, sink) => this.#send(params, checked, sink));
  }

  /**
   * What the chain says of a constructed batch's user operation, through the RPC the client's
   * `chains` names for the bundle's chain: `included` (with `success`, the transaction, block, gas
   * cost and a reverted call's `revertReason`), `superseded` (it can never execute: safe to
   * rebuild), `pending` or `unknown` (see `confirmUserOperation`). Takes a construct result, or
   * anything with its `bundle`, and optionally `fromBlock` (a block before the submit). Without an
   * RPC for that chain: an `ArgumentError` before any request.
   *
   * @example
   * const client = new PartnerClient({ ...credentials, chains: { 8453: process.env.BASE_RPC_URL! } });
   * const onChain = await client.bridge.confirmOnChain(built);
   * if (onChain.status === 'included') console.log(onChain.success, onChain.transactionHash);
   */
  async confirmOnChain(
    construct: ConfirmOnChainParams,
    options?: ConfirmOptions,
  ): Promise<UserOperationConfirmation> {
    const where = 'bridge.confirmOnChain';
    const checked = confirmationOfBundle(construct, this.#chains, where);
    return confirmChecked(checked, parseOptions(confirmOptionsSchema, options, where));
  }

  async #send(
    params: unknown,
    options: RequestOptions | undefined,
    parent: ResponseSink | undefined,
  ): Promise<SubmitResult> {
    const args = checkArgs(ENDPOINTS.send, params);
    refuseNonCanonical(args);
    const mine = () => {
      const known = this.#intents.get(args.intentId);
      return known?.userId === args.userId ? known : undefined;
    };
    const taken = mine()?.taken;
    if (taken) {
      // Taken already, through this client or one sharing its memory: a second submit could only
      // be refused as spent, and the first one's result is the answer.
      if (taken.response) parent?.(taken.response, taken.requestId);
      return { ...taken.result };
    }
    const chain = this.#chainOf(mine());
    // Where the chain is searched from if the outcome is unclear: no inclusion can be older.
    const fromBlock =
      chain === undefined ? undefined : await latestBlock(chain, options?.signal).catch(() => undefined);
    let answer: Pick<TakenSubmit, 'response' | 'requestId'> = { response: undefined, requestId: undefined };
    const sink: ResponseSink = (response, requestId) => {
      answer = { response, requestId };
      parent?.(response, requestId);
    };
    let sent = false;
    let result: SubmitResult;
    try {
      const onSent = () => {
        sent = true;
      };
      result = await send(this.api, ENDPOINTS.send, args, { options, sink, onSent });
      // An answer naming another transfer or hash than the batch sent says nothing of this one.
      const known = mine();
      if (known) refuseOtherSubmit(result, known, answer.response?.status ?? 200);
    } catch (error) {
      // Until the submit went out nothing can have happened (a token failure, an early abort).
      if (!sent || (!outcomeUnknown(error) && !(error instanceof IntentNotFoundError))) throw error;
      const read = (userId: string, transferId: string, readOptions: RequestOptions) =>
        this.#transfer({ userId, transferId }, readOptions, sink);
      result = await resolveSubmitOutcome(args.intentId, mine(), error, read, options).catch((failure) => {
        const known = mine();
        if (!chain || !known) throw failure;
        return settleOnChain(args.intentId, known, failure, () =>
          this.#confirmKnown(chain, known, fromBlock, options),
        );
      });
    }
    this.#intents.taken(args.intentId, args.userId, { result, ...answer });
    return result;
  }

  /** The RPC of an intent's source chain, when the client has one and the intent's operation is known. */
  #chainOf(known: KnownIntent | undefined): ChainRpc | undefined {
    const chainId = known?.operation?.chainId;
    return chainId === undefined ? undefined : this.#chains?.[chainId];
  }

  /**
   * The chain's word on a submitted intent's operation, within the submit's signal and time; after
   * an abort, one attempt of at most 2 s per read, as the transfer read then.
   */
  #confirmKnown(
    rpc: ChainRpc,
    known: KnownIntent,
    fromBlock: bigint | undefined,
    options: RequestOptions | undefined,
  ): Promise<UserOperationConfirmation> {
    const { entryPoint, sender, nonce } = known.operation!;
    const aborted = options?.signal?.aborted === true;
    const bounds: ConfirmOptions = aborted
      ? { signal: AbortSignal.timeout(2_000), timeoutMs: 2_000, maxRetries: 0 }
      : { signal: options?.signal, timeoutMs: options?.timeoutMs, maxRetries: options?.maxRetries };
    return confirmChecked(
      { rpc, entryPoint, sender, nonce, userOpHash: known.userOpHash, fromBlock },
      bounds,
    );
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
   * The signer is given `{ signal, summary }`: `signal` fires at the quote's expiry less
   * `signing.submitMarginMs`, and a signature after it is never sent. A signer known (or told by
   * `signing.budgetMs`) to need more than the time left is not called. With `requote`, such a quote
   * (or one the service answered 503, or an intent found expired at submit) is built again, verified
   * again and compared to the baseline; without it, that is a `SigningTooSlowError`.
   *
   * @example
   * const account = privateKeyToAccount(userKey);
   * const { transferId, summary } = await client.bridge.execute({
   *   userId, routeId, amount: '25.5', signer: account,
   *   onProgress: (p) => console.log(p.step),
   * });
   * const final = await client.bridge.transfers.wait({ userId, transferId });
   * // A slow approver: rebuild up to twice, within 0.5 % of the first quote.
   * await client.bridge.execute({ userId, routeId, amount: '25.5', signer: approver, requote: { maxAttempts: 2 } });
   */
  execute(params: BridgeExecuteParams, options?: RequestOptions): ApiPromise<BridgeExecuteResult> {
    const span = this.api.span ?? untraced;
    return apiCall(options, 'bridge.execute', (checked, sink) =>
      span('bridge.execute', () =>
        executeBridge(
          {
            route: (routeId, routeOptions) => this.#route(routeId, routeOptions, sink),
            construct: (args, constructOptions) => this.#construct(args, constructOptions, sink),
            send: (signed, sendOptions) => this.#send(signed, sendOptions, sink),
            transfer: (userId, transferId, readOptions) =>
              this.#transfer({ userId, transferId }, readOptions, sink),
            signingTimes: this.#signingTimes,
            span,
            ...(this.api.report ? { report: this.api.report } : {}),
          },
          params,
          checked,
        ),
      ),
    );
  }

  /**
   * A transfer read with ids the service gave (a construct's answer): checked as a method's
   * arguments would be, before they go into a path. Async, so that a refusal rejects.
   */
  async #transfer(
    ids: { userId: string; transferId: string },
    options: RequestOptions | undefined,
    sink: ResponseSink,
  ): Promise<BridgeTransfer> {
    return send(this.api, ENDPOINTS.transfer, checkArgs(ENDPOINTS.transfer, ids), { options, sink });
  }

  /** A route by id from a routes read at most a minute old; read again once if it is not there. */
  async #route(
    routeId: string,
    options: RequestOptions | undefined,
    sink: ResponseSink,
  ): Promise<BridgeRoute | undefined> {
    const cached = this.#routes;
    const fresh = cached && Date.now() - cached.at < ROUTES_TTL_MS;
    if (fresh) {
      const found = (await cached.routes.catch(() => [])).find((route) => route.routeId === routeId);
      if (found) return found;
    }
    const routes = send(this.api, ENDPOINTS.routes, undefined, { options, sink });
    this.#routes = { at: Date.now(), routes };
    routes.catch(() => {
      if (this.#routes?.routes === routes) this.#routes = undefined;
    });
    return (await routes).find((route) => route.routeId === routeId);
  }
}
