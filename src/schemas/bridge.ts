import * as z from 'zod';
import {
  type Address,
  atoms,
  compiled,
  type DecimalString,
  type Hex,
  openEnum,
  type RawAmountString,
  record,
} from './common.js';
import { TRANSFER_STATES, type TransferStatus } from './states.js';

export { FINAL_STATES, type KnownTransferStatus, TRANSFER_STATES, type TransferStatus } from './states.js';

/** One side of a route. Decimals may differ between the two sides. */
export interface TokenSide {
  symbol: string;
  /** Chain name, e.g. `base`. */
  chain: string;
  chainId: number;
  contractAddress: Address;
  decimals: number;
}

/** Live bounds of a route, in source-token units. */
export interface RouteLimits {
  minAmount: DecimalString;
  /** The largest amount that fills at the quoted speed. */
  maxAmount: DecimalString;
  minAmountRaw: RawAmountString;
  maxAmountRaw: RawAmountString;
  /** ISO 8601 time the limits were read from the bridge (cached up to a minute). */
  fetchedAt: string;
}

/** Contracts the batch calls on the source chain; a verifier allowlists exactly these. */
export interface RouteTargets {
  /** The bridge deposit contract. */
  bridge: Address;
  /** The source token. */
  token: Address;
  /** Receives the gas fee. */
  treasury: Address;
}

/**
 * One direction between two chains. The reverse direction is a separate route with its own id.
 *
 * @example
 * const routes = await client.bridge.routes();
 * const route = routes.find((r) => r.from.chain === 'base' && r.to.chain === 'bsc' && r.limits !== null);
 * if (route) console.log(`${route.from.symbol} ${route.limits!.minAmount}–${route.limits!.maxAmount}`);
 */
export interface BridgeRoute {
  routeId: string;
  provider: string;
  from: TokenSide;
  to: TokenSide;
  /** `null` when the bridge cannot be reached: quote and construct then answer 503. */
  limits: RouteLimits | null;
  targets: RouteTargets;
}

/**
 * The fees a quote and a transfer both carry.
 *
 * @example
 * const fees = ({ providerFee, gasFee, gasFeeToken }: FeeFields) => `${providerFee} + ${gasFee} ${gasFeeToken}`;
 */
export interface FeeFields {
  /** Kept by the bridge, taken out of the amount, in the source token. */
  providerFee: DecimalString;
  providerFeeRaw: RawAmountString;
  /** Sponsored gas, charged on top of the amount, in `gasFeeToken` on the source chain. */
  gasFee: DecimalString;
  gasFeeRaw: RawAmountString;
  gasFeeToken: string;
}

/**
 * An indicative price for bridging `amountIn`: decimal figures in each side's own units, each with
 * its base-unit twin (`…Raw`).
 *
 * @example
 * const quote = await client.bridge.quote({ userId, routeId: route.routeId, amount: '25.5' });
 * console.log(`${quote.amountIn} ${route.from.symbol} → ${quote.amountOut} ${route.to.symbol}, gas ${quote.gasFee} ${quote.gasFeeToken}`);
 */
export interface BridgeQuote extends FeeFields {
  routeId: string;
  /** Deposited, source units. */
  amountIn: DecimalString;
  amountInRaw: RawAmountString;
  /** Delivered, destination units. */
  amountOut: DecimalString;
  amountOutRaw: RawAmountString;
  etaSec: number;
  expiresAt: string;
  limits: RouteLimits | null;
}

/** The gas fee on an amount and what a `maxAmount` construct would about bridge. */
export interface BridgeFeeEstimate {
  /** Amount minus the gas fee. */
  finalAmount: DecimalString;
  /** Always 0 on a bridge. */
  feePercent?: number | string;
  /** Always 0 on a bridge. */
  systemFeeUsd?: number | string;
  [field: string]: unknown;
}

/** One call of a batch on the source chain. */
export interface BundleCall {
  target: Address;
  value: Hex;
  data: Hex;
}

/** The EIP-7702 authorization to sign, when the wallet is not yet delegated on the source chain. */
export interface BundleAuthorization {
  chainId: number;
  address: Address;
  nonce: number;
}

/** The EIP-7702 authorization signature, as the service takes it. */
export interface AuthorizationSignature {
  r: Hex;
  s: Hex;
  yParity: 0 | 1;
}

/** The unsigned user operation. Only `sender` is specified; every other field is kept as sent. */
export interface UserOperationJson {
  sender: Address;
  [field: string]: unknown;
}

/** An unsigned batch on the source chain. Verify it before signing it. */
export interface BridgeBundle {
  chainId: number;
  entryPoint: Address;
  delegate: Address;
  calls: BundleCall[];
  userOp: UserOperationJson;
  /** The 32-byte hash the wallet signs. */
  userOpHash: Hex;
  authorization: BundleAuthorization | null;
}

/** What construct returns. The numbers of `quote` are the ones that count. */
export interface BridgeConstructResult {
  transferId: string;
  intentId: string;
  bundle: BridgeBundle;
  quote: BridgeQuote;
}

/** What a submit returns. */
export interface BridgeSendResult {
  userOpHash: Hex;
  transferId: string;
}

/** One side of a transfer: chain, token and amount in that token's decimals. */
export interface TransferSide {
  chain: string;
  chainId: number;
  token: string;
  tokenAddress: Address;
  decimals: number;
  amount: DecimalString;
  amountRaw: RawAmountString;
}

/**
 * A bridge transfer: the single-transfer read, and exactly what every bridge callback carries.
 *
 * @example
 * const transfer = await client.bridge.transfers.get({ userId, transferId });
 * if (transfer.status === 'delivered') credit(transfer.userId, transfer.destination.amount, transfer.destination.token);
 */
export interface BridgeTransfer extends FeeFields {
  transferId: string;
  userId: string;
  routeId: string;
  status: TransferStatus;
  provider: string;
  providerRef: string;
  source: TransferSide;
  destination: TransferSide;
  srcTxHash: string;
  dstTxHash: string | null;
  refundTxHash: string | null;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * The longest id the SDK accepts in a transfer: generous for UUIDs (36), ULIDs (26), prefixed and
 * namespaced ids, yet small enough that a hostile body cannot make the callback store hold
 * megabytes per entry.
 */
export const ID_MAX_LENGTH = 128;
/** The characters of an id in a transfer: letters, digits and `_ : . -`, 1 to 128 of them. */
export const ID_PATTERN = /^[A-Za-z0-9_:.-]{1,128}$/;

/** A transfer as reads, lists and callbacks carry it: its own builder, the longest schema of all. */
/** The shape of `FeeFields`, spread into the quote's and the transfer's. */
function feeFields({ decimalString, rawAmountString }: ReturnType<typeof atoms>) {
  return {
    providerFee: decimalString,
    providerFeeRaw: rawAmountString,
    gasFee: decimalString,
    gasFeeRaw: rawAmountString,
    gasFeeToken: z.string(),
  };
}

function transferSchema(strict: boolean, a: ReturnType<typeof atoms>, id: z.ZodString) {
  const { decimalString, address, nonNegativeInt, rawAmountString, timestamp } = a;
  const side = record(strict, {
    chain: z.string(),
    chainId: nonNegativeInt,
    token: z.string(),
    tokenAddress: address,
    decimals: nonNegativeInt,
    amount: decimalString,
    amountRaw: rawAmountString,
  });
  return record(strict, {
    transferId: id,
    userId: id,
    routeId: id,
    status: openEnum(strict, TRANSFER_STATES),
    provider: z.string(),
    providerRef: z.string(),
    source: side,
    destination: side,
    ...feeFields(a),
    srcTxHash: z.string(),
    dstTxHash: z.string().nullable(),
    refundTxHash: z.string().nullable(),
    failureReason: z.string().nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  });
}

function build(strict: boolean) {
  const { address, decimalString, hash32, hex, nonNegativeInt, rawAmountString, timestamp } = atoms();
  const id = z
    .string()
    .regex(ID_PATTERN, `expected an id of 1 to ${ID_MAX_LENGTH} characters A-Z a-z 0-9 _ : . -`);
  const tokenSide = record(strict, {
    symbol: z.string(),
    chain: z.string(),
    chainId: nonNegativeInt,
    contractAddress: address,
    decimals: nonNegativeInt,
  });
  const limits = record(strict, {
    minAmount: decimalString,
    maxAmount: decimalString,
    minAmountRaw: rawAmountString,
    maxAmountRaw: rawAmountString,
    fetchedAt: timestamp,
  });
  const route = record(strict, {
    routeId: z.string(),
    provider: z.string(),
    from: tokenSide,
    to: tokenSide,
    limits: limits.nullable(),
    targets: record(strict, { bridge: address, token: address, treasury: address }),
  });
  const quote = record(strict, {
    routeId: z.string(),
    amountIn: decimalString,
    amountInRaw: rawAmountString,
    amountOut: decimalString,
    amountOutRaw: rawAmountString,
    ...feeFields(atoms()),
    etaSec: nonNegativeInt,
    expiresAt: timestamp,
    limits: limits.nullable(),
  });
  const bundle = record(strict, {
    chainId: nonNegativeInt,
    entryPoint: address,
    delegate: address,
    calls: z.array(record(strict, { target: address, value: hex, data: hex })),
    // The user operation's fields beyond `sender` are not specified: always kept as sent.
    userOp: z.looseObject({ sender: address }),
    userOpHash: hash32,
    authorization: record(strict, { chainId: nonNegativeInt, address, nonce: nonNegativeInt }).nullable(),
  });
  const transfer = transferSchema(strict, atoms(), id);
  const feeEstimate = z.looseObject({
    finalAmount: decimalString,
    feePercent: z.union([z.number(), z.string()]).exactOptional(),
    systemFeeUsd: z.union([z.number(), z.string()]).exactOptional(),
  });
  const data = <T extends z.ZodType>(payload: T) => record(strict, { data: payload });
  const constructResult = record(strict, { transferId: z.string(), intentId: z.string(), bundle, quote });
  return {
    transfer,
    route,
    constructResult,
    routes: data(z.array(route)),
    quote: data(quote),
    feeEstimate: data(feeEstimate),
    construct: data(constructResult),
    send: data(record(strict, { userOpHash: hash32, transferId: z.string() })),
    transferRead: data(transfer),
  };
}

export type BridgeSchemas = ReturnType<typeof build>;
const cache = new Map<boolean, BridgeSchemas>();

/** The bridge schemas for one mode, built once on first use. */
export function bridgeSchemas(strict: boolean): BridgeSchemas {
  let schemas = cache.get(strict);
  if (!schemas) cache.set(strict, (schemas = build(strict)));
  return schemas;
}

let verifying: Pick<BridgeSchemas, 'route' | 'constructResult'> | undefined;

/** The two schemas `verifyBridgeBatch` applies to every batch, compiled (see `compiled`). */
export function verifierSchemas(): Pick<BridgeSchemas, 'route' | 'constructResult'> {
  const { route, constructResult } = bridgeSchemas(false);
  verifying ??= { route: compiled(route), constructResult: compiled(constructResult) };
  return verifying;
}
