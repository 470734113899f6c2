// What verifyBridgeBatch returns once every check passed: the frozen summary of what the batch
// does, bound to the bundle it was read from so that signBridgeBatch signs only that.
import { type AmountInput, fromRawAmount } from '../../core/amounts.js';
import type { BridgeConstructResult, BridgeRoute, TokenSide } from '../../schemas/bridge.js';
import type { Address } from '../../schemas/common.js';
import type { KnownToken } from '../tables.js';
import type { EntryPointVersion } from '../user-operation.js';
import { readDigest, registerVerified } from '../verified.js';
import type { DepositFacts } from './calls.js';
import type { ReadOptions } from './options.js';
import type { SummarySide, VerifiedBridgeBatch } from './types.js';

/**
 * What `verifyBridgeBatch` knows once the input is read: the caller's arguments, checked, and the
 * route and construct result parsed. Each section of the verifier takes the facts established so
 * far, whole, and hands them on with what it established added.
 */
export interface InputFacts {
  wallet: Address;
  nowMs: number;
  /** The amount asked for, a valid decimal; undefined for a `maxAmount: true` construct. */
  amount: AmountInput | undefined;
  options: ReadOptions;
  route: BridgeRoute;
  quote: BridgeConstructResult['quote'];
  bundle: BridgeConstructResult['bundle'];
  /** The caller's own bundle object, checked again at signing. */
  original: unknown;
}

/** After the route: its tokens as the well-known table knows them. */
export interface RouteFacts extends InputFacts {
  sourceToken: KnownToken | undefined;
  destinationToken: KnownToken | undefined;
}

/** After the quote: its figures in base units. */
export interface QuoteFacts extends RouteFacts {
  amountInRaw: bigint;
  amountOutRaw: bigint;
  providerFeeRaw: bigint;
  gasFeeRaw: bigint;
  feeBps: number;
  expiresAt: number;
}

/** After the account: the EntryPoint's version, undefined for one the verifier does not know. */
export interface AccountFacts extends QuoteFacts {
  version: EntryPointVersion | undefined;
}

/** After the user operation: its calls as read, its paymaster and its call data's hash. */
export interface OperationFacts extends AccountFacts {
  calls: { target: string; value: bigint; data: string }[];
  paymaster: Address | null;
  /** Undefined when the operation's fields could not be packed. */
  callDataHash: string | undefined;
}

/** After the calls: the deposit, read word for word. */
export interface CallFacts extends OperationFacts {
  deposit: DepositFacts | undefined;
}

/** Every fact of a batch that passed, from which the verified batch is built. */
export interface VerifiedFacts extends CallFacts {
  deposit: DepositFacts;
  version: EntryPointVersion;
  /** The bundle's text as verified (see `bundleText`). */
  text: string;
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
