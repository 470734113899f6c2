import type { ApiPromise } from '../core/api-promise.js';
import { apiCall, parseArgs } from '../core/args.js';
import { stringifyBody } from '../core/json.js';
import type { RequestOptions } from '../core/request-options.js';
import type {
  BridgeConstructResult,
  BridgeFeeEstimate,
  BridgeQuote,
  BridgeRoute,
  BridgeSendResult,
} from '../schemas/bridge.js';
import { type Api, callEndpoint, ENDPOINTS } from './endpoints.js';
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
import type { TransfersResource } from './transfers.js';

/**
 * The bridge endpoints: routes, quote, fee estimate, construct, send, and the transfers.
 * `client.bridge` adds the flows on top (flows/): the submit's outcome, `execute`, the wait.
 *
 * @example
 * const routes = await client.bridge.routes();
 * const quote = await client.bridge.quote({ userId, routeId: routes[0].routeId, amount: '10' });
 */
export class BridgeResource<T extends TransfersResource = TransfersResource> {
  /** A user's transfers. */
  readonly transfers: T;
  readonly #api: Api;
  readonly #constructed: ((userId: string, built: BridgeConstructResult) => void) | undefined;

  /** `constructed` is told of each batch built, with the user it was built for. */
  constructor(api: Api, transfers: T, constructed?: (userId: string, built: BridgeConstructResult) => void) {
    this.#api = api;
    this.transfers = transfers;
    this.#constructed = constructed;
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
    return apiCall(options, 'bridge.routes', async (checked) => {
      return (await callEndpoint(this.#api, ENDPOINTS.routes, {}, checked)).data;
    });
  }

  /**
   * An indicative quote for a user's wallet. Construct returns the quote that counts.
   *
   * @example
   * const quote = await client.bridge.quote({ userId, routeId, amount: '25.5' });
   * console.log(quote.amountOut, quote.gasFee, quote.gasFeeToken);
   */
  quote(params: BridgeQuoteParams, options?: RequestOptions): ApiPromise<BridgeQuote> {
    return apiCall(options, 'bridge.quote', async (checked) => {
      const args = parseArgs(quoteArgs, params, 'bridge.quote');
      const { data } = await callEndpoint(
        this.#api,
        ENDPOINTS.quote,
        { body: stringifyBody(args), ids: { userId: args.userId, routeId: args.routeId } },
        checked,
      );
      return data;
    });
  }

  /**
   * The gas fee on an amount and `finalAmount`, about what a `maxAmount` construct would bridge for
   * a wallet holding `amount`. Reads no wallet and carries no provider fee.
   *
   * @example
   * const { finalAmount } = await client.bridge.feeEstimate({ routeId, amount: '100' });
   */
  feeEstimate(params: BridgeFeeEstimateParams, options?: RequestOptions): ApiPromise<BridgeFeeEstimate> {
    return apiCall(options, 'bridge.feeEstimate', async (checked) => {
      const args = parseArgs(feeEstimateArgs, params, 'bridge.feeEstimate');
      const query = new URLSearchParams({ routeId: args.routeId, amount: args.amount.literal });
      const { data } = await callEndpoint(
        this.#api,
        ENDPOINTS.feeEstimate,
        { query, ids: { routeId: args.routeId } },
        checked,
      );
      return data;
    });
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
    return apiCall(options, 'bridge.construct', async (checked) => {
      const args = parseArgs(constructArgs, params, 'bridge.construct');
      const body = stringifyBody({
        userId: args.userId,
        routeId: args.routeId,
        ...(args.maxAmount === true ? { maxAmount: true } : { amount: args.amount }),
      });
      const { data } = await callEndpoint(
        this.#api,
        ENDPOINTS.construct,
        { body, ids: { userId: args.userId, routeId: args.routeId } },
        checked,
      );
      this.#constructed?.(args.userId, data);
      return data;
    });
  }

  /**
   * Submits the signatures of a constructed batch, once: never retried nor replayed after a 401.
   *
   * @example
   * const { transferId } = await client.bridge.send({ userId, intentId: built.intentId, ...signed });
   */
  send(params: BridgeSendParams, options?: RequestOptions): ApiPromise<BridgeSendResult> {
    return apiCall(options, 'bridge.send', async (checked) => {
      const args = parseArgs(sendArgs, params, 'bridge.send');
      const { data } = await callEndpoint(
        this.#api,
        ENDPOINTS.send,
        { body: stringifyBody(args), ids: { userId: args.userId, intentId: args.intentId } },
        checked,
      );
      return data;
    });
  }
}
