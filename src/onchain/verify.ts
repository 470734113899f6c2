import type { AmountInput } from '../core/amounts.js';
import { decimalLiteral, fromRawAmount, toRawAmount } from '../core/amounts.js';
import { readArgs } from '../core/args.js';
import { BatchVerificationError, type VerificationIssue } from '../errors/bridge-errors.js';
import { ArgumentError } from '../errors/client-errors.js';
import {
  type BridgeConstructResult,
  type BridgeRoute,
  type BundleAuthorization,
  bridgeSchemas,
  type TokenSide,
} from '../schemas/bridge.js';
import { ADDRESS_PATTERN, type Address, type Hex } from '../schemas/common.js';
import { DEFAULT_DELEGATES, DEFAULT_ENTRY_POINTS, INTEGRATOR_SUFFIX, SELECTOR } from './constants.js';
import {
  argWord,
  encodeExecuteBatch,
  quantity,
  sameAddress,
  uintWord,
  wordAddress,
  wordUint,
} from './hex.js';
import { keccak256Hex } from './keccak.js';
import { bridgeIndex, type KnownToken, symbolKey, type TokenIndex, tokenIndex } from './tables.js';
import {
  entryPointVersion,
  type GasFields,
  isEip7702Marker,
  packUserOperation,
  userOperationHash,
} from './user-operation.js';
import { bundleText, registerVerified, textDigest } from './verified.js';

/** What `verifyBridgeBatch` checks: the batch, against the route and the wallet and amount you meant. */
export interface VerifyBridgeBatchParams {
  /** The route as the partner read it from `bridge.routes()`, not one echoed by the construct result. */
  route: BridgeRoute;
  /** What `bridge.construct()` returned. */
  construct: BridgeConstructResult;
  /** The user's wallet: the signer's address. It must be the sender, depositor and recipient. */
  wallet: string;
  /** The amount asked for; omit for a `maxAmount: true` construct. */
  amount?: AmountInput | undefined;
  /**
   * The current time (a `Date` or milliseconds since 1970), for expiry checks. A number below
   * 1e12 is refused: it is seconds, and read as milliseconds it would switch every time check off.
   * @default new Date()
   */
  now?: Date | number | undefined;
}

/** How strict `verifyBridgeBatch` is; the defaults are the safe choice. */
export interface VerifyBridgeBatchOptions {
  /** EntryPoints the batch may use. @default v0.7 and v0.8 */
  entryPoints?: readonly string[];
  /** EIP-7702 delegates the wallet may be (or become) delegated to. @default both published MAv2 7702 delegates */
  delegates?: readonly string[];
  /**
   * Accept an Across integrator tag (`0x1dc0de` + 2 bytes) after the deposit's arguments, as real
   * Across deposits carry it: the SpokePool ignores it. Any other trailing bytes stay an issue.
   * @default true
   */
  allowIntegratorSuffix?: boolean;
  /** The quote must stay valid this much longer than `now`, to leave time to sign and submit. @default 15000 */
  expiryMarginMs?: number;
  /**
   * Require a paymaster: the batch is sponsored, and without one the wallet's own native balance
   * pays for gas at whatever fee the operation names. @default true
   */
  requirePaymaster?: boolean;
  /**
   * Across SpokePools by chain id, for chains the built-in table (`ACROSS_SPOKE_POOLS`) lacks or
   * where the partner knows better: a chain named here gets exactly these addresses; the others
   * keep the table's. `targets.bridge` must be a SpokePool of the source chain, and the destination
   * must be a chain with a SpokePool (another chain than the source).
   * @example { bridges: { 8453: '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64', 31337: ['0x…'] } }
   */
  bridges?: Readonly<Record<number, string | readonly string[]>>;
  /**
   * Tokens to add to the well-known table (`WELL_KNOWN_TOKENS`); an entry for an address the
   * table lists replaces it. A route must agree with the table on a known address's decimals and
   * on which addresses a well-known symbol may have on its chain.
   * @example { tokens: [{ chainId: 8453, address: '0x…', symbol: 'EURC', decimals: 6 }] }
   */
  tokens?: readonly KnownToken[];
  /**
   * The partner's own fee policy: provider fee plus gas fee, in basis points of the amount, above
   * which the batch is refused. It comes on top of the built-in ceilings (gas fee below the amount,
   * provider fee below a quarter of it), which hold with or without it.
   * @example { maxFeeBps: 150 } // refuse anything costing more than 1.5 %
   */
  maxFeeBps?: number;
}

/** One side of a verified bridge: the chain, the token and the amount in its own decimals. */
export interface SummarySide {
  chain: string;
  chainId: number;
  /** The well-known table's symbol when it lists the token, otherwise the route's. */
  symbol: string;
  /**
   * False when the table (with `tokens`) does not list the token's address on this chain and its
   * symbol is not a well-known one there: then only the route vouches for it.
   */
  known: boolean;
  token: Address;
  decimals: number;
  amount: string;
  amountRaw: bigint;
}

/** What the verified batch will do, in terms a person can check. */
export interface BridgeBatchSummary {
  wallet: Address;
  routeId: string;
  provider: string;
  /** Deposited on the source chain (taken from the wallet). */
  source: SummarySide;
  /** Delivered to the same wallet on the destination chain. */
  destination: SummarySide;
  providerFee: { amount: string; amountRaw: bigint };
  /** Paid to `treasury` in the source token, on top of the amount. */
  gasFee: { amount: string; amountRaw: bigint; symbol: string; treasury: Address };
  /** Everything the wallet spends of the source token: amount plus gas fee. */
  totalDebit: { amount: string; amountRaw: bigint };
  /** Provider fee plus gas fee in basis points of the amount, rounded up; `maxFeeBps` bounds it. */
  feeBps: number;
  bridge: Address;
  depositFunction: 'deposit' | 'depositV3';
  integratorSuffix: Hex | null;
  exclusiveRelayer: Address | null;
  quoteTimestamp: Date;
  /** After this the deposit can no longer be filled and is refunded in a later settlement. */
  fillDeadline: Date;
  quoteExpiresAt: Date;
  entryPoint: Address;
  entryPointVersion: '0.7' | '0.8';
  delegate: Address;
  /** True when the wallet signs an EIP-7702 authorization too (not yet delegated on this chain). */
  needsAuthorization: boolean;
  paymaster: Address | null;
  userOpHash: Hex;
}

/**
 * What `verifyBridgeBatch` returns: the summary, frozen, with what it bound. `signBridgeBatch`
 * signs only such a batch (or, by name, an unverified bundle), and refuses it when the bundle
 * verified has changed since.
 */
export interface VerifiedBridgeBatch extends Readonly<BridgeBatchSummary> {
  /** keccak256 of the verified bundle's canonical JSON (calls, user operation, authorization). */
  readonly digest: Hex;
  /** The EIP-7702 authorization the signer will sign, as verified; `null` when already delegated. */
  readonly authorization: Readonly<BundleAuthorization> | null;
}

const ZERO_WORD = '0'.repeat(64);
const MAX_UINT32 = 0xffffffffn;
/** Before 2001-09-09 in milliseconds, or any time at all in seconds: never a real `now`. */
const MIN_NOW_MS = 1e12;
const MAX_DATE_MS = 8.64e15;
/**
 * Gas ceilings far above anything a bridge batch needs (approve, deposit and transfer take a few
 * hundred thousand gas) but low enough that no operation can name an unbounded prefund: each
 * execution or validation limit at most 15M gas (half an Ethereum block), preVerificationGas at
 * most 50M (on L2s it carries the L1 data cost in L2 gas: a few million in an L1 fee spike), and
 * fees at most 25,000 gwei (Polygon's worst spikes reached a few thousand).
 */
export const GAS_CEILINGS = Object.freeze({
  gasLimit: 15_000_000n,
  preVerificationGas: 50_000_000n,
  maxFeePerGas: 25_000n * 10n ** 9n,
  /**
   * What an unsponsored operation may make the wallet prefund in wei (all limits × maxFeePerGas):
   * one native unit, a thousand times an ordinary batch at 1,000 gwei. The ceilings above, each
   * sane alone, multiply to 2,000 ETH, and preVerificationGas is charged whether used or not.
   */
  walletPrefund: 10n ** 18n,
});
/**
 * The fill window a deposit must leave: its fill deadline at least this long after the quote
 * expires, and an exclusive relayer's exclusivity over at least this long before the deadline.
 * Across sets deadlines hours out (TV-1: 6 h) and exclusivity of seconds.
 */
const FILL_MARGIN_SEC = 600n;
/**
 * The SpokePool takes a deposit until its quote timestamp is this old (`depositQuoteTimeBuffer`,
 * deployed as one hour): whoever holds the signed operation can land it that late, whatever the
 * quote's expiry says.
 */
const QUOTE_TIME_BUFFER_SEC = 3600n;
/** How far ahead of `now` a quote timestamp may be: the partner's clock may lag the chain's. */
const CLOCK_SKEW_SEC = 300n;
/** Limits move with relayer liquidity after the route was read: this much room either way. */
const LIMITS_ROOM_DIVISOR = 4n;
const MAX_DECIMALS = 77;
/** Across reads exclusivity parameters up to this as an offset from the deposit time. */
const MAX_EXCLUSIVITY_PERIOD_SEC = 31_536_000n;

interface ReadOptions {
  entryPoints: readonly string[];
  delegates: readonly string[];
  allowIntegratorSuffix: boolean;
  requirePaymaster: boolean;
  expiryMarginMs: number;
  maxFeeBps: number | undefined;
  bridges: ReadonlyMap<number, readonly string[]>;
  tokens: TokenIndex;
}

const CHAIN_ID = /^[1-9]\d*$/;

function isAddress(value: unknown): value is string {
  return typeof value === 'string' && ADDRESS_PATTERN.test(value);
}

/** The options with their defaults; a value of the wrong kind is an error, never a looser check. */
function readVerifyOptions(options: VerifyBridgeBatchOptions | undefined): ReadOptions {
  const problems: { path: string; message: string }[] = [];
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new ArgumentError('verifyBridgeBatch', [{ path: 'options', message: 'must be an object' }]);
  }
  const addresses = (name: 'entryPoints' | 'delegates', fallback: readonly Address[]) => {
    const value = options?.[name];
    if (value === undefined) return fallback;
    if (!Array.isArray(value) || !value.every(isAddress)) {
      problems.push({ path: name, message: 'must be an array of 20-byte hex addresses' });
      return [];
    }
    return [...value];
  };
  const flag = (name: 'allowIntegratorSuffix' | 'requirePaymaster', fallback: boolean) => {
    const value = options?.[name];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') problems.push({ path: name, message: 'must be true or false' });
    return value === true;
  };
  const read: ReadOptions = {
    entryPoints: addresses('entryPoints', DEFAULT_ENTRY_POINTS),
    delegates: addresses('delegates', DEFAULT_DELEGATES),
    allowIntegratorSuffix: flag('allowIntegratorSuffix', true),
    requirePaymaster: flag('requirePaymaster', true),
    expiryMarginMs: options?.expiryMarginMs ?? 15_000,
    maxFeeBps: options?.maxFeeBps,
    bridges: bridgeIndex(readBridges(options?.bridges, problems)),
    tokens: tokenIndex(readTokens(options?.tokens, problems)),
  };
  if (
    typeof read.expiryMarginMs !== 'number' ||
    !(read.expiryMarginMs >= 0) ||
    !Number.isFinite(read.expiryMarginMs)
  ) {
    problems.push({ path: 'expiryMarginMs', message: 'must be a non-negative number of milliseconds' });
  }
  const bps = read.maxFeeBps;
  if (bps !== undefined && !(Number.isInteger(bps) && bps >= 0 && bps <= 10_000)) {
    problems.push({ path: 'maxFeeBps', message: 'must be a whole number of basis points from 0 to 10000' });
  }
  if (problems.length > 0) throw new ArgumentError('verifyBridgeBatch', problems);
  return read;
}

function readBridges(
  value: VerifyBridgeBatchOptions['bridges'],
  problems: { path: string; message: string }[],
): Map<number, readonly string[]> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push({ path: 'bridges', message: 'must be an object of chain id → SpokePool address(es)' });
    return undefined;
  }
  const map = new Map<number, readonly string[]>();
  for (const [key, entry] of Object.entries(value)) {
    const list: unknown[] = Array.isArray(entry) ? entry : [entry];
    if (
      !CHAIN_ID.test(key) ||
      !Number.isSafeInteger(Number(key)) ||
      list.length === 0 ||
      !list.every(isAddress)
    ) {
      problems.push({
        path: `bridges.${key}`,
        message: 'must map a positive chain id to a 20-byte hex address or an array of them',
      });
      continue;
    }
    map.set(Number(key), list as string[]);
  }
  return map;
}

function readTokens(
  value: VerifyBridgeBatchOptions['tokens'],
  problems: { path: string; message: string }[],
): KnownToken[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    problems.push({ path: 'tokens', message: 'must be an array of { chainId, address, symbol, decimals }' });
    return undefined;
  }
  const tokens: KnownToken[] = [];
  value.forEach((entry: unknown, index) => {
    const token = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const { chainId, address, symbol, decimals, also } = token;
    if (
      !(Number.isSafeInteger(chainId) && (chainId as number) > 0) ||
      !isAddress(address) ||
      typeof symbol !== 'string' ||
      symbol.trim() === '' ||
      !(Number.isInteger(decimals) && (decimals as number) >= 0 && (decimals as number) <= 255) ||
      (also !== undefined && !(Array.isArray(also) && also.every((item) => typeof item === 'string')))
    ) {
      problems.push({
        path: `tokens.${index}`,
        message: 'must be { chainId: positive integer, address, symbol, decimals: 0–255, also?: string[] }',
      });
      return;
    }
    tokens.push({
      chainId: chainId as number,
      address: address as Address,
      symbol,
      decimals: decimals as number,
      ...(also ? { also: [...(also as string[])] } : {}),
    });
  });
  return tokens;
}

function toMs(now: Date | number | undefined): number {
  if (now === undefined) return Date.now();
  if (typeof now === 'number') return now;
  return now instanceof Date ? now.getTime() : Number.NaN;
}

/**
 * Checks a constructed bridge batch before anything is signed: that it does exactly what the
 * partner asked, on the route the partner read, and that the hash to be signed is the hash of
 * those calls. Fails closed: every check it cannot make is an issue. Synchronous: it loads and
 * awaits nothing (an `await` in front of it still works).
 *
 * Returns the verified batch: the summary, frozen, with the bundle's digest; `signBridgeBatch`
 * takes it and refuses it if the bundle has changed since.
 *
 * @throws BatchVerificationError listing every failed check.
 * @example
 * const routes = await client.bridge.routes();
 * const route = routes.find((r) => r.routeId === routeId)!;
 * const built = await client.bridge.construct({ userId, routeId, amount: '25.5' });
 * const verified = verifyBridgeBatch({ route, construct: built, wallet: account.address, amount: '25.5' }, { maxFeeBps: 150 });
 * console.log(`${verified.source.amount} ${verified.source.symbol} → ${verified.destination.amount} on ${verified.destination.chain}`);
 * const signed = await signBridgeBatch({ verified, signer: account });
 */
export function verifyBridgeBatch(
  params: VerifyBridgeBatchParams,
  verifyOptions: VerifyBridgeBatchOptions = {},
): VerifiedBridgeBatch {
  // Everything is read once, here: a getter cannot answer one way to a check and another way later.
  const schemas = bridgeSchemas(false);
  const input = readArgs('verifyBridgeBatch', () => {
    // One read of the construct's fields: the bundle kept to compare at signing is the one parsed.
    const raw: unknown = params?.construct;
    const construct = typeof raw === 'object' && raw !== null ? { ...raw } : raw;
    return {
      wallet: params?.wallet,
      nowMs: toMs(params?.now),
      amount: params?.amount,
      routeParsed: schemas.route.safeParse(params?.route),
      original: (construct as { bundle?: unknown } | undefined)?.bundle,
      constructParsed: schemas.constructResult.safeParse(construct),
      options: readVerifyOptions(verifyOptions),
    };
  });
  const { wallet, nowMs, routeParsed, constructParsed, options } = input;
  if (typeof wallet !== 'string' || !ADDRESS_PATTERN.test(wallet)) {
    throw new ArgumentError('verifyBridgeBatch', [
      { path: 'wallet', message: 'must be a 20-byte hex address' },
    ]);
  }
  let asked: bigint | undefined;
  // Beyond ±8.64e15 ms a Date is invalid, and writing the time into an issue would throw.
  if (!Number.isFinite(nowMs) || Math.abs(nowMs) > MAX_DATE_MS)
    throw new ArgumentError('verifyBridgeBatch', [{ path: 'now', message: 'must be a valid date' }]);
  if (nowMs < MIN_NOW_MS) {
    throw new ArgumentError('verifyBridgeBatch', [
      { path: 'now', message: 'must be in milliseconds: a number below 1e12 is seconds (or before 2001)' },
    ]);
  }
  if (input.amount !== undefined) {
    const literal = decimalLiteral(input.amount);
    if ('error' in literal)
      throw new ArgumentError('verifyBridgeBatch', [{ path: 'amount', message: literal.error }]);
  }

  const issues: VerificationIssue[] = [];
  const fail = (check: string, message: string, expected?: unknown, actual?: unknown) => {
    issues.push({
      check,
      message,
      ...(expected === undefined ? {} : { expected: String(expected) }),
      ...(actual === undefined ? {} : { actual: String(actual) }),
    });
  };

  if (!routeParsed.success)
    for (const issue of routeParsed.error.issues)
      fail('shape.route', `${issue.path.join('.')}: ${issue.message}`);
  if (!constructParsed.success) {
    for (const issue of constructParsed.error.issues)
      fail('shape.construct', `${issue.path.join('.')}: ${issue.message}`);
  }
  if (!routeParsed.success || !constructParsed.success) throw new BatchVerificationError(issues);
  const route = routeParsed.data;
  const { bundle, quote } = constructParsed.data;
  const { targets } = route;

  // The route and the request.
  if (quote.routeId !== route.routeId)
    fail('route.id', 'the quote is for another route', route.routeId, quote.routeId);
  for (const [side, chainId] of [
    ['source', route.from.chainId],
    ['destination', route.to.chainId],
  ] as const) {
    // An EIP-7702 authorization for chain 0 is valid on every chain.
    if (chainId === 0) fail('route.chainId', `the ${side} chain id is 0`, 'a chain id above 0', 0);
  }
  if (bundle.chainId !== route.from.chainId) {
    fail('route.chain', "the batch is not for the route's source chain", route.from.chainId, bundle.chainId);
  }
  if (!sameAddress(targets.token, route.from.contractAddress)) {
    fail(
      'route.token',
      "the route's target token is not its source token",
      route.from.contractAddress,
      targets.token,
    );
  }
  const spokePools = options.bridges.get(route.from.chainId);
  if (!spokePools) {
    fail(
      'route.bridge',
      `no Across SpokePool is known for chain ${route.from.chainId}: name it in the bridges option`,
      `a SpokePool of chain ${route.from.chainId}`,
      targets.bridge,
    );
  } else if (!spokePools.includes(targets.bridge.toLowerCase())) {
    fail(
      'route.bridge',
      `the route's bridge is not the Across SpokePool of chain ${route.from.chainId}`,
      spokePools.join(', '),
      targets.bridge,
    );
  }
  // A deposit no relayer fills still pays the gas fee, and its refund takes hours.
  if (route.to.chainId === route.from.chainId) {
    fail(
      'route.destinationChain',
      'the route goes to its own source chain',
      'another chain',
      route.to.chainId,
    );
  } else if (route.to.chainId !== 0 && !options.bridges.has(route.to.chainId)) {
    fail(
      'route.destinationChain',
      `no Across SpokePool is known for chain ${route.to.chainId}, so no relayer fills there: name it in the bridges option`,
      'a chain with an Across SpokePool',
      route.to.chainId,
    );
  }
  const sourceToken = checkToken(fail, 'source', route.from, options.tokens);
  const destinationToken = checkToken(fail, 'destination', route.to, options.tokens);
  // The quote is checked one for one (output = amount less fee): across two assets that prices
  // 1 WETH at 1 USDC, and Across repays the relayer in the input token whatever it delivered.
  const sourceNames = assetNames(route.from, sourceToken);
  const destinationNames = assetNames(route.to, destinationToken);
  if (!sourceNames.some((name) => destinationNames.includes(name))) {
    fail(
      'route.asset',
      'the route delivers another token than it takes, but the quote is checked one for one',
      sourceNames.join(' or '),
      destinationNames.join(' or '),
    );
  }

  const amountInRaw = BigInt(quote.amountInRaw);
  const amountOutRaw = BigInt(quote.amountOutRaw);
  const providerFeeRaw = BigInt(quote.providerFeeRaw);
  const gasFeeRaw = BigInt(quote.gasFeeRaw);
  const consistent = (check: string, decimal: string, raw: string, decimals: number) => {
    let converted: bigint | undefined;
    try {
      converted = toRawAmount(decimal, decimals);
    } catch {
      converted = undefined;
    }
    if (converted !== BigInt(raw))
      fail(check, 'the decimal and raw figures of the quote disagree', decimal, raw);
  };
  consistent('quote.amountIn', quote.amountIn, quote.amountInRaw, route.from.decimals);
  consistent('quote.amountOut', quote.amountOut, quote.amountOutRaw, route.to.decimals);
  consistent('quote.providerFee', quote.providerFee, quote.providerFeeRaw, route.from.decimals);
  consistent('quote.gasFee', quote.gasFee, quote.gasFeeRaw, route.from.decimals);
  if (quote.gasFeeToken !== route.from.symbol) {
    fail(
      'quote.gasFeeToken',
      'the gas fee is not charged in the source token',
      route.from.symbol,
      quote.gasFeeToken,
    );
  }
  // A uint256 holds 77 decimal digits; more decimals is no token, and 10^decimals would be a
  // number large enough to stall the verifier.
  const sane = route.from.decimals <= MAX_DECIMALS && route.to.decimals <= MAX_DECIMALS;
  if (!sane) {
    fail(
      'route.tokenDecimals',
      'a token of the route has more decimals than a uint256 has digits',
      `at most ${MAX_DECIMALS}`,
      Math.max(route.from.decimals, route.to.decimals),
    );
  }
  // The provider fee is taken out of the amount: what arrives is the rest, in the destination's
  // decimals, rounded down. A relayer may round by one base unit; it may not keep more.
  if (!sane) {
    // Nothing to convert with.
  } else if (providerFeeRaw >= amountInRaw) {
    fail(
      'quote.arithmetic',
      'the provider fee is not below the amount',
      `below ${amountInRaw}`,
      providerFeeRaw,
    );
  } else {
    const net = amountInRaw - providerFeeRaw;
    const scale = route.to.decimals - route.from.decimals;
    const expectedOut = scale >= 0 ? net * 10n ** BigInt(scale) : net / 10n ** BigInt(-scale);
    if (amountOutRaw > expectedOut + 1n || amountOutRaw + 1n < expectedOut) {
      fail(
        'quote.arithmetic',
        'the amount delivered is not the amount less the provider fee',
        expectedOut,
        amountOutRaw,
      );
    }
  }
  // Built-in ceilings that hold with any policy: production never charges this much.
  if (gasFeeRaw >= amountInRaw)
    fail('quote.gasFeeCeiling', 'the gas fee is not below the amount', `below ${amountInRaw}`, gasFeeRaw);
  if (providerFeeRaw * 4n >= amountInRaw) {
    fail(
      'quote.providerFeeCeiling',
      'the provider fee is not below a quarter of the amount',
      `below ${amountInRaw / 4n}`,
      providerFeeRaw,
    );
  }
  const feesRaw = providerFeeRaw + gasFeeRaw;
  const feeBps = amountInRaw > 0n ? Number((feesRaw * 10_000n + amountInRaw - 1n) / amountInRaw) : 10_000;
  if (options.maxFeeBps !== undefined && feesRaw * 10_000n > BigInt(options.maxFeeBps) * amountInRaw) {
    fail(
      'quote.maxFeeBps',
      'provider fee plus gas fee is above the maxFeeBps policy',
      `at most ${options.maxFeeBps} bps`,
      `${feeBps} bps`,
    );
  }
  if (route.limits) {
    const min = BigInt(route.limits.minAmountRaw);
    const max = BigInt(route.limits.maxAmountRaw);
    if (amountInRaw > max + max / LIMITS_ROOM_DIVISOR || amountInRaw < min - min / LIMITS_ROOM_DIVISOR) {
      fail(
        'quote.limits',
        "the amount is outside the route's limits (with room for limits that moved)",
        `${min} to ${max}`,
        amountInRaw,
      );
    }
  }
  if (input.amount !== undefined) {
    try {
      asked = toRawAmount(input.amount, route.from.decimals);
    } catch {
      fail(
        'request.amount',
        `the amount asked has more decimals than ${route.from.symbol} (${route.from.decimals})`,
      );
    }
    if (asked !== undefined && asked !== amountInRaw) {
      fail('request.amount', 'the batch deposits another amount than asked', asked, amountInRaw);
    }
  }
  const expiresAt = Date.parse(quote.expiresAt);
  const margin = options.expiryMarginMs;
  if (!(expiresAt - nowMs > margin)) {
    fail(
      'quote.expiry',
      `the quote expires in less than ${margin} ms`,
      nowMs + margin <= MAX_DATE_MS
        ? `after ${new Date(nowMs + margin).toISOString()}`
        : `${margin} ms from now`,
      quote.expiresAt,
    );
  }

  // Entry point, delegate, authorization.
  const version = entryPointVersion(bundle.entryPoint);
  const { entryPoints } = options;
  if (!entryPoints.some((allowed) => sameAddress(allowed, bundle.entryPoint)) || !version) {
    fail(
      'entryPoint.allowed',
      'the entry point is not an allowed v0.7 or v0.8 EntryPoint',
      entryPoints.join(', '),
      bundle.entryPoint,
    );
  }
  const { delegates } = options;
  if (!delegates.some((allowed) => sameAddress(allowed, bundle.delegate))) {
    fail(
      'delegate.allowed',
      'the delegate is not an allowed account implementation',
      delegates.join(', '),
      bundle.delegate,
    );
  }
  if (bundle.authorization) {
    if (bundle.authorization.chainId !== bundle.chainId) {
      fail(
        'authorization.chain',
        'the authorization is not for the source chain',
        bundle.chainId,
        bundle.authorization.chainId,
      );
    }
    if (!sameAddress(bundle.authorization.address, bundle.delegate)) {
      fail(
        'authorization.delegate',
        'the authorization delegates to another contract',
        bundle.delegate,
        bundle.authorization.address,
      );
    }
  }

  // The user operation, bound to the calls.
  if (!sameAddress(bundle.userOp.sender, wallet))
    fail('userOp.sender', 'the operation is not sent by the wallet', wallet, bundle.userOp.sender);
  const calls: { target: string; value: bigint; data: string }[] = [];
  bundle.calls.forEach((call, index) => {
    const value = quantity(call.value);
    if (value !== 0n) fail('calls.value', `call ${index + 1} sends native value`, '0', call.value);
    if (call.data.length % 2 !== 0) fail('calls.data', `call ${index + 1} data is not whole bytes`);
    calls.push({ target: call.target, value: value ?? 0n, data: call.data.toLowerCase() });
  });
  // The call data must be exactly executeBatch of the listed calls; once it matches that encoding
  // (built from validated calls) it is known to be clean hex and needs no second check.
  const callData = bundle.userOp.callData;
  const canonical = typeof callData === 'string' && callData.toLowerCase() === encodeExecuteBatch(calls);
  if (!canonical) {
    const hooks =
      typeof callData === 'string' && callData.slice(2, 10).toLowerCase() === SELECTOR.executeUserOp;
    fail(
      'userOp.callData',
      hooks
        ? 'the call data goes through executeUserOp (execution hooks), not executeBatch'
        : 'the operation does not execute exactly the listed calls',
    );
  }
  const packed = packUserOperation(bundle.userOp, canonical ? callData : undefined);
  let paymaster: Address | null = null;
  let callDataHash: string | undefined;
  if ('problems' in packed) {
    for (const problem of packed.problems) fail('userOp.fields', problem);
  } else {
    const { initCode } = packed.op;
    // The EntryPoint runs initCode before validation: code the verifier never saw. Only v0.8's
    // bare EIP-7702 marker runs nothing; it puts the delegate into the hash instead.
    if (initCode && !(version === '0.8' && isEip7702Marker(initCode))) {
      fail(
        'userOp.initCode',
        version === '0.8'
          ? 'the initCode is not the bare EIP-7702 marker: EntryPoint v0.8 would call the wallet with it first'
          : 'the operation has initCode: the EntryPoint would call a factory before the batch',
        version === '0.8' ? '0x or the bare 0x7702 marker' : '0x',
        `0x${initCode}`,
      );
    }
    paymaster = packed.op.paymaster ?? null;
    if (options.requirePaymaster && !paymaster) {
      const zero = packed.op.paymasterAndData !== '';
      fail(
        'userOp.paymaster',
        zero
          ? 'the paymaster is the zero address, which the EntryPoint reads as none: the wallet would pay gas in native token'
          : 'the operation is not sponsored: the wallet would pay gas in native token',
        'a paymaster',
        zero ? `0x${'0'.repeat(40)}` : 'none',
      );
    }
    checkGas(fail, packed.op.gas, paymaster !== null);
    callDataHash = keccak256Hex(packed.op.callData);
    if (version) {
      const hash = userOperationHash(packed.op, {
        entryPoint: bundle.entryPoint,
        chainId: bundle.chainId,
        version,
        delegate: bundle.delegate,
        callDataHash,
      });
      if (hash.toLowerCase() !== bundle.userOpHash.toLowerCase()) {
        fail('userOp.hash', 'userOpHash is not the hash of this operation', hash, bundle.userOpHash);
      }
    } else {
      fail('userOp.hash', 'the hash cannot be recomputed for an unknown entry point');
    }
  }

  // The calls: approve → deposit → fee transfer (only and always when a gas fee is charged).
  const expectedCount = gasFeeRaw > 0n ? 3 : 2;
  if (calls.length !== expectedCount) {
    fail(
      'calls.count',
      `expected approve, deposit${gasFeeRaw > 0n ? ' and fee transfer' : ''}`,
      expectedCount,
      calls.length,
    );
  }
  const approve = calls[0];
  if (approve) {
    checkTokenCall(fail, approve, {
      id: 'approve',
      selector: SELECTOR.approve,
      signature: 'approve(address,uint256)',
      token: targets.token,
      party: {
        check: 'approve.spender',
        name: 'the spender',
        expected: targets.bridge,
        wrong: 'approve is not to the bridge',
      },
      amount: { expected: amountInRaw, wrong: 'approve is not for exactly the amount deposited' },
    });
  }

  let deposit: DepositFacts | undefined;
  const depositCall = calls[1];
  if (depositCall) {
    deposit = checkDeposit(depositCall, {
      fail,
      route,
      wallet,
      amountInRaw,
      amountOutRaw,
      nowSec: BigInt(Math.floor(nowMs / 1000)),
      expiresAtSec: BigInt(Math.floor(expiresAt / 1000)),
      allowSuffix: options.allowIntegratorSuffix,
    });
  }

  const fee = calls[2];
  if (fee) {
    checkTokenCall(fail, fee, {
      id: 'fee',
      selector: SELECTOR.transfer,
      signature: 'transfer(address,uint256)',
      token: targets.token,
      party: {
        check: 'fee.recipient',
        name: 'the fee recipient',
        expected: targets.treasury,
        wrong: 'the fee does not go to the treasury',
      },
      amount: { expected: gasFeeRaw, wrong: 'the fee is not the quoted gas fee' },
    });
  }

  // Without issues the calls are proven to encode to the call data, whose hash is known.
  const text = issues.length === 0 && callDataHash ? bundleText(bundle, callDataHash) : undefined;
  if (issues.length === 0 && text === undefined) fail('shape.construct', 'the bundle cannot be read as JSON');
  if (issues.length > 0 || !deposit || !version || text === undefined) {
    if (issues.length === 0) fail('calls.count', 'the batch has no deposit');
    throw new BatchVerificationError(issues);
  }

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
  // The text is taken now; its hash only when asked for (most callers sign and never read it).
  let digest: Hex | undefined;
  const verified: VerifiedBridgeBatch = Object.freeze({
    wallet: wallet as Address,
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
    get digest(): Hex {
      digest ??= textDigest(text);
      return digest;
    },
    authorization,
  });
  registerVerified(verified, {
    text,
    wallet,
    userOpHash: bundle.userOpHash,
    authorization,
    original: input.original,
  });
  return verified;
}

type Fail = (check: string, message: string, expected?: unknown, actual?: unknown) => void;

/**
 * One side of the route against the well-known table: a listed address must have the listed
 * decimals, and a well-known symbol must be one of the addresses listed for it on that chain.
 * Returns the table's entry; undefined when the table does not list the address (the summary
 * flags it: a well-known symbol with an unlisted address is an issue already).
 */
function checkToken(
  fail: Fail,
  name: 'source' | 'destination',
  side: TokenSide,
  tokens: TokenIndex,
): KnownToken | undefined {
  const address = side.contractAddress.toLowerCase();
  const known = tokens.byAddress.get(`${side.chainId}:${address}`);
  if (known && known.decimals !== side.decimals) {
    fail(
      'route.tokenDecimals',
      `the ${name} token ${known.symbol} on chain ${side.chainId} has other decimals than the route says`,
      known.decimals,
      side.decimals,
    );
  }
  const symbol = symbolKey(side.symbol);
  const listed = tokens.bySymbol.get(`${side.chainId}:${symbol}`);
  // What arrives is the user's whole value: a well-known asset the table cannot place on the
  // destination chain is whatever token the service names, that its relayer delivers and is
  // repaid for in the real input token.
  if (!known && !listed && name === 'destination' && tokens.symbols.has(symbol)) {
    fail(
      'route.tokenAddress',
      `the destination token is called ${side.symbol}, which the table lists on other chains but not on chain ${side.chainId}: name it in the tokens option`,
      `a ${side.symbol} address the table or the tokens option lists on chain ${side.chainId}`,
      side.contractAddress,
    );
  }
  if (listed && !listed.has(address)) {
    fail(
      'route.tokenAddress',
      `the ${name} token is called ${side.symbol}, but that is not ${side.symbol}'s address on chain ${side.chainId}`,
      [...listed].join(', '),
      side.contractAddress,
    );
  }
  return known;
}

/** The names a side's token goes by: the table's symbol and aliases when it lists it, else the route's. */
function assetNames(side: TokenSide, known: KnownToken | undefined): string[] {
  const names = known ? [known.symbol, ...(known.also ?? [])] : [side.symbol];
  return names.map(symbolKey);
}

/** Gas limits and fees within `GAS_CEILINGS`, whoever pays: no operation may name an unbounded prefund. */
function checkGas(fail: Fail, gas: GasFields, sponsored: boolean): void {
  const bounds: [check: string, name: keyof GasFields, ceiling: bigint, what: string][] = [
    ['userOp.gasLimits', 'verificationGasLimit', GAS_CEILINGS.gasLimit, 'the ceiling'],
    ['userOp.gasLimits', 'callGasLimit', GAS_CEILINGS.gasLimit, 'the ceiling'],
    ['userOp.gasLimits', 'paymasterVerificationGasLimit', GAS_CEILINGS.gasLimit, 'the ceiling'],
    ['userOp.gasLimits', 'paymasterPostOpGasLimit', GAS_CEILINGS.gasLimit, 'the ceiling'],
    ['userOp.gasLimits', 'preVerificationGas', GAS_CEILINGS.preVerificationGas, 'the ceiling'],
    ['userOp.gasFees', 'maxFeePerGas', GAS_CEILINGS.maxFeePerGas, 'the ceiling'],
    ['userOp.gasFees', 'maxPriorityFeePerGas', gas.maxFeePerGas, 'maxFeePerGas'],
  ];
  for (const [check, name, ceiling, what] of bounds) {
    if (gas[name] > ceiling) fail(check, `${name} is above ${what}`, `at most ${ceiling}`, gas[name]);
  }
  if (sponsored) return;
  const prefund =
    (gas.verificationGasLimit +
      gas.callGasLimit +
      gas.paymasterVerificationGasLimit +
      gas.paymasterPostOpGasLimit +
      gas.preVerificationGas) *
    gas.maxFeePerGas;
  if (prefund > GAS_CEILINGS.walletPrefund) {
    fail(
      'userOp.prefund',
      'without a paymaster the wallet would prefund more native token than the ceiling (limits × maxFeePerGas)',
      `at most ${GAS_CEILINGS.walletPrefund} wei`,
      `${prefund} wei`,
    );
  }
}

/**
 * An ERC-20 call of shape `(address, uint256)` on the source token (approve, fee transfer): exactly
 * its selector and two clean words, the expected party and the exact amount.
 */
function checkTokenCall(
  fail: Fail,
  call: { target: string; data: string },
  spec: {
    id: 'approve' | 'fee';
    selector: string;
    signature: string;
    token: string;
    party: { check: string; name: string; expected: string; wrong: string };
    amount: { expected: bigint; wrong: string };
  },
): void {
  if (!sameAddress(call.target, spec.token))
    fail(`${spec.id}.target`, `${spec.id} is not on the source token`, spec.token, call.target);
  const body = call.data.slice(2);
  if (body.length !== 136 || !body.startsWith(spec.selector)) {
    fail(`${spec.id}.encoding`, `the call is not a canonically encoded ${spec.signature}`);
    return;
  }
  const party = wordAddress(argWord(body, 0));
  if (party === undefined) fail(`${spec.id}.encoding`, `${spec.party.name} is not a clean address word`);
  else if (!sameAddress(party, spec.party.expected))
    fail(spec.party.check, spec.party.wrong, spec.party.expected, party);
  if (argWord(body, 1) !== uintWord(spec.amount.expected)) {
    fail(`${spec.id}.amount`, spec.amount.wrong, spec.amount.expected, wordUint(argWord(body, 1)));
  }
}

interface DepositFacts {
  fn: 'deposit' | 'depositV3';
  suffix: Hex | null;
  exclusiveRelayer: Address | null;
  quoteTimestamp: bigint;
  fillDeadline: bigint;
}

/** The Across deposit: bytes32 `deposit` and address `depositV3` share one body layout. */
function checkDeposit(
  call: { target: string; data: string },
  context: {
    fail: Fail;
    route: BridgeRoute;
    wallet: string;
    amountInRaw: bigint;
    amountOutRaw: bigint;
    nowSec: bigint;
    /** The latest time the deposit can be submitted. */
    expiresAtSec: bigint;
    allowSuffix: boolean;
  },
): DepositFacts | undefined {
  const { fail, route, wallet } = context;
  if (!sameAddress(call.target, route.targets.bridge))
    fail('deposit.target', "the deposit is not on the route's bridge", route.targets.bridge, call.target);
  const body = call.data.slice(2);
  const selector = body.slice(0, 8);
  const fn =
    selector === SELECTOR.deposit ? 'deposit' : selector === SELECTOR.depositV3 ? 'depositV3' : undefined;
  if (!fn) {
    fail(
      'deposit.selector',
      'the second call is not an Across deposit or depositV3',
      `0x${SELECTOR.deposit} or 0x${SELECTOR.depositV3}`,
      `0x${selector}`,
    );
    return undefined;
  }
  const canonicalLength = 8 + 13 * 64;
  if (body.length < canonicalLength) {
    fail('deposit.encoding', 'the deposit call data is shorter than its arguments');
    return undefined;
  }
  const extra = body.slice(canonicalLength);
  let suffix: Hex | null = null;
  if (extra) {
    if (context.allowSuffix && INTEGRATOR_SUFFIX.test(extra)) suffix = `0x${extra}`;
    else
      fail(
        'deposit.encoding',
        context.allowSuffix
          ? 'bytes after the deposit are not an integrator tag'
          : 'bytes after the deposit arguments',
        '',
        `0x${extra}`,
      );
  }
  const word = (index: number) => argWord(body, index);
  const address = (index: number, check: string, name: string, expected: string) => {
    const value = wordAddress(word(index));
    if (value === undefined) fail('deposit.encoding', `${name} is not a clean address word`);
    else if (!sameAddress(value, expected))
      fail(check, `${name} is not the expected address`, expected, value);
  };
  address(0, 'deposit.depositor', 'depositor', wallet);
  address(1, 'deposit.recipient', 'recipient', wallet);
  address(2, 'deposit.inputToken', 'inputToken', route.from.contractAddress);
  address(3, 'deposit.outputToken', 'outputToken', route.to.contractAddress);
  if (word(4) !== uintWord(context.amountInRaw))
    fail(
      'deposit.inputAmount',
      'the deposit is not the quoted input amount',
      context.amountInRaw,
      wordUint(word(4)),
    );
  if (word(5) !== uintWord(context.amountOutRaw))
    fail(
      'deposit.outputAmount',
      'the deposit is not the quoted output amount',
      context.amountOutRaw,
      wordUint(word(5)),
    );
  if (wordUint(word(6)) !== BigInt(route.to.chainId)) {
    fail(
      'deposit.destinationChain',
      'the deposit goes to another chain',
      route.to.chainId,
      wordUint(word(6)),
    );
  }
  const relayer = wordAddress(word(7));
  if (relayer === undefined) fail('deposit.encoding', 'exclusiveRelayer is not a clean address word');
  const uint32 = (index: number, name: string) => {
    const value = wordUint(word(index));
    if (value > MAX_UINT32) fail('deposit.encoding', `${name} is not a uint32`);
    return value;
  };
  const quoteTimestamp = uint32(8, 'quoteTimestamp');
  const fillDeadline = uint32(9, 'fillDeadline');
  const exclusivity = uint32(10, 'exclusivityParameter');
  if (word(11) !== uintWord(0x180n) || word(12) !== ZERO_WORD) {
    fail('deposit.message', 'the deposit carries a message (or a non-canonical one)');
  }
  if (exclusivity !== 0n && word(7) === ZERO_WORD) {
    fail('deposit.exclusivity', 'exclusivity is set without an exclusive relayer: the deposit would revert');
  }
  if (fillDeadline <= context.nowSec)
    fail('deposit.fillDeadline', 'the fill deadline has passed', `after ${context.nowSec}`, fillDeadline);
  // The SpokePool takes no deposit before its quote timestamp: one in the future holds the signed
  // operation back until then, however long the quote claims to last.
  const pricedBy =
    context.nowSec + CLOCK_SKEW_SEC < context.expiresAtSec
      ? context.nowSec + CLOCK_SKEW_SEC
      : context.expiresAtSec;
  if (quoteTimestamp > pricedBy) {
    fail(
      'deposit.quoteTimestamp',
      `the quote timestamp is in the future (more than ${CLOCK_SKEW_SEC} s, or after the quote expires): the deposit could not land before`,
      `at most ${pricedBy}`,
      quoteTimestamp,
    );
  }
  // The quote's expiry binds only an honest service: the SpokePool takes the deposit until the
  // quote timestamp is an hour old, so the fill window is counted from the latest it can land.
  const latestDeposit =
    quoteTimestamp + QUOTE_TIME_BUFFER_SEC > context.expiresAtSec
      ? quoteTimestamp + QUOTE_TIME_BUFFER_SEC
      : context.expiresAtSec;
  // A deposit nobody may fill still costs the gas fee, and the funds wait hours for a refund.
  const fillFrom = latestDeposit + FILL_MARGIN_SEC;
  if (fillDeadline < fillFrom) {
    fail(
      'deposit.fillDeadline',
      `the fill deadline leaves less than ${FILL_MARGIN_SEC} s to fill after the latest the deposit can land (the quote's expiry, or its timestamp plus ${QUOTE_TIME_BUFFER_SEC} s)`,
      `at least ${fillFrom}`,
      fillDeadline,
    );
  }
  if (exclusivity !== 0n && word(7) !== ZERO_WORD) {
    // Across reads a small parameter as an offset from the deposit time, a large one as a timestamp.
    const exclusiveUntil =
      exclusivity <= MAX_EXCLUSIVITY_PERIOD_SEC ? latestDeposit + exclusivity : exclusivity;
    if (exclusiveUntil + FILL_MARGIN_SEC > fillDeadline) {
      fail(
        'deposit.exclusivity',
        `only the exclusive relayer may fill until less than ${FILL_MARGIN_SEC} s before the fill deadline`,
        `until at most ${fillDeadline - FILL_MARGIN_SEC}`,
        exclusiveUntil,
      );
    }
  }
  return {
    fn,
    suffix,
    exclusiveRelayer: relayer && word(7) !== ZERO_WORD ? relayer : null,
    quoteTimestamp,
    fillDeadline,
  };
}
