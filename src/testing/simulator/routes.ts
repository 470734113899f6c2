import { fromRawAmount, toRawAmount } from '../../core/amounts.js';
import { ACROSS_SPOKE_POOLS, WELL_KNOWN_TOKENS } from '../../onchain/tables.js';
import type { BridgeQuote, BridgeRoute } from '../../schemas/bridge.js';
import type { SimClock } from './common.js';
import { HttpFailure, validation } from './envelope.js';

/* Routes as tests configure them (paused, unreachable, fees), their limits, and the quotes priced on them. */

export interface RouteState {
  route: BridgeRoute;
  paused: boolean;
  reachable: boolean;
  gasFeeRaw: bigint;
  /** Provider fee in basis points of the amount. */
  providerFeeBps: bigint;
  /** Above this provider fee (bps) construct answers 503. */
  feeCeilingBps: bigint;
  /** The route's limits in source base units, when a test set them (else 1 to 50,000 tokens). */
  minAmountRaw?: bigint | undefined;
  maxAmountRaw?: bigint | undefined;
  /**
   * Seconds a signer is given: while a quote lives less than this, construct answers 503 "quote
   * expires too soon to sign". 0 (the default) is off.
   */
  signWindowSec: number;
  /**
   * The SpokePool function the batch deposits through: `deposit` (bytes32 arguments, what Across's
   * own tooling builds) or `depositV3` (address arguments, kept by the SpokePool for compatibility).
   */
  depositFunction: 'deposit' | 'depositV3';
}

/**
 * The tokens of the default routes: USDC on Base (6 decimals) and on BNB Chain (18 decimals), as
 * the verifier's well-known table lists them, so that the simulator's batches pass it unchanged.
 */
export const DEFAULT_ROUTE_TOKENS = Object.freeze({
  base: usdcOn('base', 8453),
  bsc: usdcOn('bsc', 56),
});

function usdcOn(chain: string, chainId: number) {
  const token = WELL_KNOWN_TOKENS.find((known) => known.chainId === chainId && known.symbol === 'USDC');
  if (!token) throw new Error(`the well-known table lists no USDC on chain ${chainId}`);
  return Object.freeze({
    symbol: 'USDC',
    chain,
    chainId,
    contractAddress: token.address,
    decimals: token.decimals,
  });
}

/** The default routes: USDC between Base and BNB Chain, one id per direction, through Across. */
function defaultRoutes(): RouteState[] {
  const { base, bsc } = DEFAULT_ROUTE_TOKENS;
  const make = (from: typeof base, to: typeof base, gasFeeRaw: bigint): RouteState => ({
    route: {
      routeId: `${from.chain}-${from.symbol.toLowerCase()}-to-${to.chain}-${to.symbol.toLowerCase()}`,
      provider: 'across',
      from: { ...from },
      to: { ...to },
      limits: null,
      targets: {
        bridge: ACROSS_SPOKE_POOLS[from.chainId]!,
        token: from.contractAddress,
        treasury: '0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf',
      },
    },
    paused: false,
    reachable: true,
    gasFeeRaw,
    providerFeeBps: 10n,
    feeCeilingBps: 100n,
    signWindowSec: 0,
    depositFunction: 'deposit',
  });
  return [make(base, bsc, 120_000n), make(bsc, base, 150_000_000_000_000_000n)];
}

export class SimRoutes {
  readonly routes = new Map<string, RouteState>();

  constructor(
    private readonly clock: SimClock,
    /** Lifetime of quotes and intents. */
    readonly quoteTtlSec = 120,
  ) {
    for (const state of defaultRoutes()) this.routes.set(state.route.routeId, state);
  }

  /** Every route, as `GET /bridge/routes` shows it. */
  list(): BridgeRoute[] {
    return [...this.routes.values()].map((state) => this.#publicRoute(state));
  }

  known(routeId: string): RouteState {
    const state = this.routes.get(routeId);
    if (!state) throw new HttpFailure(404, 'NOT_FOUND', 'no such route');
    return state;
  }

  /** A route a quote or a batch may use now: known, not paused, reachable. */
  usable(routeId: string): RouteState {
    const state = this.known(routeId);
    if (state.paused) throw new HttpFailure(400, 'BAD_REQUEST', 'the route is paused');
    if (!state.reachable)
      throw new HttpFailure(503, 'SERVICE_UNAVAILABLE', 'the bridge cannot be reached; retry shortly');
    return state;
  }

  /** A decimal amount literal in the source token's base units, within the route's limits unless told. */
  amountRaw(state: RouteState, literal: string, checkBounds = true): bigint {
    let raw: bigint;
    try {
      raw = toRawAmount(literal, state.route.from.decimals);
    } catch {
      throw validation([`amount has more than ${state.route.from.decimals} decimals`]);
    }
    if (checkBounds) this.#checkBounds(state, raw);
    return raw;
  }

  #checkBounds(state: RouteState, raw: bigint): void {
    const limits = this.limits(state);
    if (raw < BigInt(limits.minAmountRaw))
      throw new HttpFailure(400, 'BAD_REQUEST', `amount is below the minimum of ${limits.minAmount}`);
    if (raw > BigInt(limits.maxAmountRaw))
      throw new HttpFailure(400, 'BAD_REQUEST', `amount is above the maximum of ${limits.maxAmount}`);
  }

  limits(state: RouteState) {
    const { decimals } = state.route.from;
    const unit = 10n ** BigInt(decimals);
    const minRaw = state.minAmountRaw ?? unit;
    const maxRaw = state.maxAmountRaw ?? 50_000n * unit;
    return {
      minAmount: fromRawAmount(minRaw, decimals),
      maxAmount: fromRawAmount(maxRaw, decimals),
      minAmountRaw: String(minRaw),
      maxAmountRaw: String(maxRaw),
      fetchedAt: new Date(Math.floor(this.clock.now() / 60_000) * 60_000).toISOString(),
    };
  }

  #publicRoute(state: RouteState): BridgeRoute {
    return { ...structuredClone(state.route), limits: state.reachable ? this.limits(state) : null };
  }

  quote(state: RouteState, amountInRaw: bigint): BridgeQuote {
    const { from, to } = state.route;
    const providerFeeRaw = (amountInRaw * state.providerFeeBps) / 10_000n;
    const netRaw = amountInRaw - providerFeeRaw;
    const scale = to.decimals - from.decimals;
    const amountOutRaw = scale >= 0 ? netRaw * 10n ** BigInt(scale) : netRaw / 10n ** BigInt(-scale);
    return {
      routeId: state.route.routeId,
      amountIn: fromRawAmount(amountInRaw, from.decimals),
      amountInRaw: String(amountInRaw),
      amountOut: fromRawAmount(amountOutRaw, to.decimals),
      amountOutRaw: String(amountOutRaw),
      providerFee: fromRawAmount(providerFeeRaw, from.decimals),
      providerFeeRaw: String(providerFeeRaw),
      gasFee: fromRawAmount(state.gasFeeRaw, from.decimals),
      gasFeeRaw: String(state.gasFeeRaw),
      gasFeeToken: from.symbol,
      etaSec: 4,
      expiresAt: new Date(this.clock.now() + this.quoteTtlSec * 1000).toISOString(),
      limits: this.limits(state),
    };
  }

  /** `GET /bridge/fee-estimate`'s data: the gas fee taken from an amount, no limits applied. */
  feeEstimate(state: RouteState, amount: string) {
    const raw = this.amountRaw(state, amount, false);
    const finalRaw = raw > state.gasFeeRaw ? raw - state.gasFeeRaw : 0n;
    const decimals = state.route.from.decimals;
    return {
      gasFee: fromRawAmount(state.gasFeeRaw, decimals),
      gasFeeRaw: String(state.gasFeeRaw),
      gasFeeToken: state.route.from.symbol,
      finalAmount: fromRawAmount(finalRaw, decimals),
      finalAmountRaw: String(finalRaw),
      feePercent: 0,
      systemFeeUsd: 0,
    };
  }
}
