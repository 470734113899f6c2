import { parseArgs, parseOptions, requestOptionsSchema } from '../core/args.js';
import { stringifyBody } from '../core/json.js';
import type { RequestOptions } from '../core/request-options.js';
import { IntentNotFoundError } from '../errors/api-error.js';
import { type BridgeExecuteParams, type BridgeExecuteResult, executeBridge } from '../flows/execute.js';
import { IntentMemory, outcomeUnknown, resolveSubmitOutcome } from '../flows/submit.js';
import type { Transport } from '../http/transport.js';
import {
  type BridgeConstructResult,
  type BridgeFeeEstimate,
  type BridgeQuote,
  type BridgeRoute,
  type BridgeSendResult,
  bridgeSchemas,
} from '../schemas/bridge.js';
import {
  type BridgeConstructParams,
  type BridgeFeeEstimateParams,
  type BridgeQuoteParams,
  type BridgeSendParams,
  constructArgs,
  feeEstimateArgs,
  quoteArgs,
  sendArgs,
} from './params.js';
import { Transfers } from './transfers.js';

export const BRIDGE_READ = ['bridge:read'] as const;
export const BRIDGE_WRITE = ['bridge:read', 'transactions:write'] as const;
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
export class Bridge {
  readonly #transport: Transport;
  readonly #strict: boolean;
  /** A user's transfers: list, read, wait. */
  readonly transfers: Transfers;
  readonly #intents = new IntentMemory();
  #routes: { at: number; routes: Promise<BridgeRoute[]> } | undefined;

  constructor(transport: Transport, strict: boolean) {
    this.#transport = transport;
    this.#strict = strict;
    this.transfers = new Transfers(transport, strict);
  }

  get #schemas() {
    return bridgeSchemas(this.#strict);
  }

  /**
   * Every route, one per direction, with live limits. The source of truth for what can be
   * bridged: never hard-code a route id, never assume a direction exists because its reverse does.
   *
   * @example
   * const routes = await client.bridge.routes();
   * const route = routes.find((r) => r.from.chain === 'base' && r.to.chain === 'arbitrum');
   */
  async routes(options?: RequestOptions): Promise<BridgeRoute[]> {
    options = parseOptions(requestOptionsSchema, options, 'bridge.routes');
    const { data } = await this.#transport.request(
      { method: 'GET', path: '/bridge/routes', scopes: BRIDGE_READ, schema: this.#schemas.routes },
      options,
    );
    return data;
  }

  /**
   * An indicative quote for a user's wallet. Construct returns the quote that counts.
   *
   * @example
   * const quote = await client.bridge.quote({ userId, routeId, amount: '25.5' });
   * console.log(quote.amountOut, quote.gasFee, quote.gasFeeToken);
   */
  async quote(params: BridgeQuoteParams, options?: RequestOptions): Promise<BridgeQuote> {
    options = parseOptions(requestOptionsSchema, options, 'bridge.quote');
    const args = parseArgs(quoteArgs, params, 'bridge.quote');
    const { data } = await this.#transport.request(
      {
        method: 'POST',
        path: '/bridge/quote',
        body: stringifyBody(args),
        scopes: BRIDGE_READ,
        schema: this.#schemas.quote,
      },
      options,
    );
    return data;
  }

  /**
   * The gas fee on an amount and `finalAmount`, about what a `maxAmount` construct would bridge for
   * a wallet holding `amount`. Reads no wallet and carries no provider fee.
   *
   * @example
   * const { finalAmount } = await client.bridge.feeEstimate({ routeId, amount: '100' });
   */
  async feeEstimate(params: BridgeFeeEstimateParams, options?: RequestOptions): Promise<BridgeFeeEstimate> {
    options = parseOptions(requestOptionsSchema, options, 'bridge.feeEstimate');
    const args = parseArgs(feeEstimateArgs, params, 'bridge.feeEstimate');
    const { data } = await this.#transport.request(
      {
        method: 'GET',
        path: '/bridge/fee-estimate',
        searchParams: new URLSearchParams({ routeId: args.routeId, amount: args.amount.literal }),
        scopes: BRIDGE_READ,
        schema: this.#schemas.feeEstimate,
      },
      options,
    );
    return data;
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
  async construct(params: BridgeConstructParams, options?: RequestOptions): Promise<BridgeConstructResult> {
    options = parseOptions(requestOptionsSchema, options, 'bridge.construct');
    const args = parseArgs(constructArgs, params, 'bridge.construct');
    const body = stringifyBody({
      userId: args.userId,
      routeId: args.routeId,
      ...(args.maxAmount === true ? { maxAmount: true } : { amount: args.amount }),
    });
    const { data } = await this.#transport.request(
      {
        method: 'POST',
        path: '/bridge/construct/transaction/batch',
        body,
        scopes: BRIDGE_WRITE,
        schema: this.#schemas.construct,
      },
      options,
    );
    this.#intents.remember(data.intentId, {
      userId: args.userId,
      transferId: data.transferId,
      userOpHash: data.bundle.userOpHash,
    });
    return data;
  }

  /**
   * Submits the signatures of a constructed batch. It is never sent twice: neither retried nor
   * replayed after a 401. When the answer leaves the outcome unclear (a timeout, a broken
   * connection, a 2xx that cannot be read, a 401, a 5xx other than the service's own 503, or
   * `signal` firing after the submit went out) or the intent is answered as spent, it reads the
   * transfer of an intent this client built: it returns the transfer once that has left `pending`,
   * and otherwise throws `SubmitOutcomeUnknownError` with `intentId`, `transferId` and `userOpHash`.
   * After an abort that is one read of at most 2 s.
   *
   * @example
   * const signed = await signBridgeBatch({ verified: verifyBridgeBatch({ route, construct: built, wallet }), signer });
   * const { transferId } = await client.bridge.send({ userId, intentId: built.intentId, ...signed });
   */
  async send(params: BridgeSendParams, options?: RequestOptions): Promise<BridgeSendResult> {
    options = parseOptions(requestOptionsSchema, options, 'bridge.send');
    const args = parseArgs(sendArgs, params, 'bridge.send');
    let sent = false;
    try {
      const { data } = await this.#transport.request(
        {
          method: 'POST',
          path: '/bridge/transaction/batch/send',
          body: stringifyBody(args),
          scopes: BRIDGE_WRITE,
          schema: this.#schemas.send,
          retryable: false,
          onSent: () => {
            sent = true;
          },
        },
        options,
      );
      return data;
    } catch (error) {
      // Until the submit went out nothing can have happened (a token failure, an early abort).
      if (!sent || (!outcomeUnknown(error) && !(error instanceof IntentNotFoundError))) throw error;
      const known = this.#intents.get(args.intentId);
      return resolveSubmitOutcome(
        args.intentId,
        known?.userId === args.userId ? known : undefined,
        error,
        (userId, transferId, readOptions) => this.transfers.get({ userId, transferId }, readOptions),
        options,
      );
    }
  }

  /**
   * The whole flow in one call, verified before signing: reads the route (cached up to a minute),
   * constructs, verifies the batch against that route and the signer's wallet, signs, and submits.
   * Nothing is signed when a check fails. The submit behaves as in `send`, and every error thrown
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
  execute(params: BridgeExecuteParams, options?: RequestOptions): Promise<BridgeExecuteResult> {
    return executeBridge(
      {
        route: (routeId, routeOptions) => this.#route(routeId, routeOptions),
        construct: (construct, constructOptions) =>
          this.construct(construct as BridgeConstructParams, constructOptions),
        send: (send, sendOptions) => this.send(send, sendOptions),
      },
      params,
      options,
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
