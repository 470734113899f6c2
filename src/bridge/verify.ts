import { BatchVerificationError, type VerificationIssue } from '../errors/bridge-errors.js';
import { ArgumentError } from '../errors/client-errors.js';
import { readArgs } from '../internal/args.js';
import type { AmountInput } from '../resources/params.js';
import { type BridgeConstructResult, type BridgeRoute, bridgeSchemas } from '../schemas/bridge.js';
import { ADDRESS_PATTERN, type Address, type Hex } from '../schemas/common.js';
import { decimalLiteral, fromRawAmount, toRawAmount } from './amounts.js';
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
import { entryPointVersion, packUserOperation, userOperationHash } from './user-operation.js';

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
  /** The current time, for expiry checks. @default new Date() */
  now?: Date | number | undefined;
}

/** How strict `verifyBridgeBatch` is; the defaults are the safe choice. */
export interface VerifyBridgeBatchOptions {
  /** EntryPoints the batch may use. @default v0.7 and v0.8 */
  entryPoints?: readonly string[];
  /** EIP-7702 delegates the wallet may be (or become) delegated to. @default both published MAv2 7702 delegates */
  delegates?: readonly string[];
  /** Accept an Across integrator tag (`0x1dc0de` + 2 bytes) after the deposit's arguments. @default false */
  allowIntegratorSuffix?: boolean;
  /** The quote must stay valid this much longer than `now`, to leave time to sign and submit. @default 15000 */
  expiryMarginMs?: number;
  /**
   * Require a paymaster: the batch is sponsored, and without one the wallet's own native balance
   * pays for gas at whatever fee the operation names. @default true
   */
  requirePaymaster?: boolean;
}

/** One side of a verified bridge: the chain, the token and the amount in its own decimals. */
export interface SummarySide {
  chain: string;
  chainId: number;
  symbol: string;
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

const ZERO_WORD = '0'.repeat(64);
const MAX_UINT32 = 0xffffffffn;

/** The options with their defaults; a value of the wrong kind is an error, never a looser check. */
function readVerifyOptions(
  options: VerifyBridgeBatchOptions | undefined,
): Required<VerifyBridgeBatchOptions> {
  const problems: { path: string; message: string }[] = [];
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new ArgumentError('verifyBridgeBatch', [{ path: 'options', message: 'must be an object' }]);
  }
  const addresses = (name: 'entryPoints' | 'delegates', fallback: readonly Address[]) => {
    const value = options?.[name];
    if (value === undefined) return fallback;
    if (
      !Array.isArray(value) ||
      !value.every((entry) => typeof entry === 'string' && ADDRESS_PATTERN.test(entry))
    ) {
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
  const read = {
    entryPoints: addresses('entryPoints', DEFAULT_ENTRY_POINTS),
    delegates: addresses('delegates', DEFAULT_DELEGATES),
    allowIntegratorSuffix: flag('allowIntegratorSuffix', false),
    requirePaymaster: flag('requirePaymaster', true),
    expiryMarginMs: options?.expiryMarginMs ?? 15_000,
  };
  if (
    typeof read.expiryMarginMs !== 'number' ||
    !(read.expiryMarginMs >= 0) ||
    !Number.isFinite(read.expiryMarginMs)
  ) {
    problems.push({ path: 'expiryMarginMs', message: 'must be a non-negative number of milliseconds' });
  }
  if (problems.length > 0) throw new ArgumentError('verifyBridgeBatch', problems);
  return read;
}

function toMs(now: Date | number | undefined): number {
  if (now === undefined) return Date.now();
  if (typeof now === 'number') return now;
  return now instanceof Date ? now.getTime() : Number.NaN;
}

/**
 * Checks a constructed bridge batch before anything is signed: that it does exactly what the
 * partner asked, on the route the partner read, and that the hash to be signed is the hash of
 * those calls. Fails closed: every check it cannot make is an issue.
 *
 * @throws BatchVerificationError listing every failed check.
 * @example
 * const routes = await client.bridge.routes();
 * const route = routes.find((r) => r.routeId === routeId)!;
 * const built = await client.bridge.construct({ userId, routeId, amount: '25.5' });
 * const summary = await verifyBridgeBatch({ route, construct: built, wallet: account.address, amount: '25.5' });
 * console.log(`${summary.source.amount} ${summary.source.symbol} → ${summary.destination.amount} on ${summary.destination.chain}`);
 */
export async function verifyBridgeBatch(
  params: VerifyBridgeBatchParams,
  verifyOptions: VerifyBridgeBatchOptions = {},
): Promise<BridgeBatchSummary> {
  // Everything is read once, here: a getter cannot answer one way to a check and another way later.
  const schemas = bridgeSchemas(false);
  const input = readArgs('verifyBridgeBatch', () => ({
    wallet: params?.wallet,
    nowMs: toMs(params?.now),
    amount: params?.amount,
    routeParsed: schemas.route.safeParse(params?.route),
    constructParsed: schemas.constructResult.safeParse(params?.construct),
    options: readVerifyOptions(verifyOptions),
  }));
  const { wallet, nowMs, routeParsed, constructParsed, options } = input;
  if (typeof wallet !== 'string' || !ADDRESS_PATTERN.test(wallet)) {
    throw new ArgumentError('verifyBridgeBatch', [
      { path: 'wallet', message: 'must be a 20-byte hex address' },
    ]);
  }
  let asked: bigint | undefined;
  if (!Number.isFinite(nowMs))
    throw new ArgumentError('verifyBridgeBatch', [{ path: 'now', message: 'must be a valid date' }]);
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
  const amountInRaw = BigInt(quote.amountInRaw);
  const amountOutRaw = BigInt(quote.amountOutRaw);
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
  consistent('quote.gasFee', quote.gasFee, quote.gasFeeRaw, route.from.decimals);
  if (quote.gasFeeToken !== route.from.symbol) {
    fail(
      'quote.gasFeeToken',
      'the gas fee is not charged in the source token',
      route.from.symbol,
      quote.gasFeeToken,
    );
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
      `after ${new Date(nowMs + margin).toISOString()}`,
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
  if ('problems' in packed) {
    for (const problem of packed.problems) fail('userOp.fields', problem);
  } else {
    paymaster = packed.op.paymaster ?? null;
    if (options.requirePaymaster && !paymaster) {
      fail('userOp.paymaster', 'the operation is not sponsored: the wallet would pay gas in native token');
    }
    if (version) {
      const hash = userOperationHash(packed.op, {
        entryPoint: bundle.entryPoint,
        chainId: bundle.chainId,
        version,
        delegate: bundle.delegate,
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

  if (issues.length > 0 || !deposit || !version) {
    if (issues.length === 0) fail('calls.count', 'the batch has no deposit');
    throw new BatchVerificationError(issues);
  }

  const side = (from: typeof route.from, amount: string, amountRaw: bigint): SummarySide => ({
    chain: from.chain,
    chainId: from.chainId,
    symbol: from.symbol,
    token: from.contractAddress,
    decimals: from.decimals,
    amount,
    amountRaw,
  });
  const totalDebitRaw = amountInRaw + gasFeeRaw;
  return {
    wallet: wallet as Address,
    routeId: route.routeId,
    provider: route.provider,
    source: side(route.from, quote.amountIn, amountInRaw),
    destination: side(route.to, quote.amountOut, amountOutRaw),
    providerFee: { amount: quote.providerFee, amountRaw: BigInt(quote.providerFeeRaw) },
    gasFee: {
      amount: quote.gasFee,
      amountRaw: gasFeeRaw,
      symbol: quote.gasFeeToken,
      treasury: targets.treasury,
    },
    totalDebit: { amount: fromRawAmount(totalDebitRaw, route.from.decimals), amountRaw: totalDebitRaw },
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
    needsAuthorization: bundle.authorization !== null,
    paymaster,
    userOpHash: bundle.userOpHash,
  };
}

type Fail = (check: string, message: string, expected?: unknown, actual?: unknown) => void;

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
  return {
    fn,
    suffix,
    exclusiveRelayer: relayer && word(7) !== ZERO_WORD ? relayer : null,
    quoteTimestamp,
    fillDeadline,
  };
}
