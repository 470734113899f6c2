// What verifyBridgeBatch returns once every check passed: the frozen summary of what the batch
// does, bound to the bundle it was read from so that signBridgeBatch signs only that.
import { fromRawAmount } from '../core/amounts.js';
import type { BridgeConstructResult, BridgeRoute, TokenSide } from '../schemas/bridge.js';
import type { Address } from '../schemas/common.js';
import type { KnownToken } from './tables.js';
import type { EntryPointVersion } from './user-operation.js';
import { readDigest, registerVerified } from './verified.js';
import type { DepositFacts } from './verify-calls.js';
import type { SummarySide, VerifiedBridgeBatch } from './verify-types.js';

/** The facts the checks established, from which the verified batch is built. */
export interface VerifiedFacts {
  wallet: Address;
  route: BridgeRoute;
  quote: BridgeConstructResult['quote'];
  bundle: BridgeConstructResult['bundle'];
  sourceToken: KnownToken | undefined;
  destinationToken: KnownToken | undefined;
  amountInRaw: bigint;
  amountOutRaw: bigint;
  providerFeeRaw: bigint;
  gasFeeRaw: bigint;
  feeBps: number;
  deposit: DepositFacts;
  expiresAt: number;
  version: EntryPointVersion;
  paymaster: Address | null;
  /** The bundle's text as verified (see `bundleText`). */
  text: string;
  /** The caller's own bundle object, checked again at signing. */
  original: unknown;
}

/** The frozen summary of a batch that passed, registered so that only it can be signed. */
export function verifiedBatch(facts: VerifiedFacts): VerifiedBridgeBatch {
  const {
    wallet,
    route,
    quote,
    bundle,
    sourceToken,
    destinationToken,
    amountInRaw,
    amountOutRaw,
    providerFeeRaw,
    gasFeeRaw,
    feeBps,
    deposit,
    expiresAt,
    version,
    paymaster,
    text,
    original,
  } = facts;
  const { targets } = route;
  const side = (
    from: TokenSide,
    known: KnownToken | undefined,
    amount: string,
    amountRaw: bigint,
  ): SummarySide =>
    Object.freeze({
      chain: from.chain,
      chainId: from.chainId,
      symbol: known?.symbol ?? from.symbol,
      known: known !== undefined,
      token: from.contractAddress,
      decimals: from.decimals,
      amount,
      amountRaw,
    });
  const totalDebitRaw = amountInRaw + gasFeeRaw;
  const authorization = bundle.authorization ? Object.freeze({ ...bundle.authorization }) : null;
  const summary = {
    wallet,
    routeId: route.routeId,
    provider: route.provider,
    source: side(route.from, sourceToken, quote.amountIn, amountInRaw),
    destination: side(route.to, destinationToken, quote.amountOut, amountOutRaw),
    providerFee: Object.freeze({ amount: quote.providerFee, amountRaw: providerFeeRaw }),
    gasFee: Object.freeze({
      amount: quote.gasFee,
      amountRaw: gasFeeRaw,
      symbol: sourceToken?.symbol ?? quote.gasFeeToken,
      treasury: targets.treasury,
    }),
    totalDebit: Object.freeze({
      amount: fromRawAmount(totalDebitRaw, route.from.decimals),
      amountRaw: totalDebitRaw,
    }),
    feeBps,
    bridge: targets.bridge,
    depositFunction: deposit.fn,
    integratorSuffix: deposit.suffix,
    exclusiveRelayer: deposit.exclusiveRelayer,
    quoteTimestamp: new Date(Number(deposit.quoteTimestamp) * 1000),
    fillDeadline: new Date(Number(deposit.fillDeadline) * 1000),
    quoteExpiresAt: new Date(expiresAt),
    entryPoint: bundle.entryPoint,
    entryPointVersion: version,
    delegate: bundle.delegate,
    needsAuthorization: authorization !== null,
    paymaster,
    userOpHash: bundle.userOpHash,
  };
  // The text is taken now; its hash only when asked for (most callers sign and never read it), by
  // the getter all batches share (see `readDigest`). `authorization` stays last, after it.
  Object.defineProperty(summary, 'digest', { get: readDigest, enumerable: true, configurable: true });
  const verified = Object.freeze(Object.assign(summary, { authorization })) as VerifiedBridgeBatch;
  registerVerified(verified, {
    text,
    wallet,
    userOpHash: bundle.userOpHash,
    authorization,
    original,
  });
  return verified;
}
