import { parseArgs } from '../internal/args.js';
import {
  type BridgeConstructResult,
  type BridgeFeeEstimate,
  type BridgeQuote,
  type BridgeRoute,
  type BridgeSendResult,
  bridgeSchemas,
} from '../schemas/bridge.js';
import { stringifyBody } from '../transport/json.js';
import type { RequestOptions, Transport } from '../transport/transport.js';
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

/** The cross-chain bridge: routes, quotes, building, submitting and following transfers. */
export class Bridge {
  readonly #transport: Transport;
  readonly #strict: boolean;
  /** A user's transfers: list, read, wait. */
  readonly transfers: Transfers;

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
   * Needs `bridge:read` and `transactions:write`.
   *
   * @example
   * const built = await client.bridge.construct({ userId, routeId, amount: '25.5' });
   * const all = await client.bridge.construct({ userId, routeId, maxAmount: true });
   */
  async construct(params: BridgeConstructParams, options?: RequestOptions): Promise<BridgeConstructResult> {
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
    return data;
  }

  /**
   * Submits the signatures of a constructed batch. It is never re-sent by the retry layer: a
   * repeated submit is rejected as spent.
   *
   * @example
   * const signed = await signBridgeBatch({ bundle: built.bundle, signer });
   * const { transferId } = await client.bridge.send({ userId, intentId: built.intentId, ...signed });
   */
  async send(params: BridgeSendParams, options?: RequestOptions): Promise<BridgeSendResult> {
    const args = parseArgs(sendArgs, params, 'bridge.send');
    const { data } = await this.#transport.request(
      {
        method: 'POST',
        path: '/bridge/transaction/batch/send',
        body: stringifyBody(args),
        scopes: BRIDGE_WRITE,
        schema: this.#schemas.send,
        retryable: false,
      },
      options,
    );
    return data;
  }
}
