import { decimalLiteral, toRawAmount } from '../../core/amounts.js';
import { readArgs } from '../../core/args.js';
import { BatchVerificationError, type VerificationIssue } from '../../errors/bridge-errors.js';
import { ArgumentError } from '../../errors/client-errors.js';
import { verifierSchemas } from '../../schemas/bridge.js';
import { ADDRESS_PATTERN, type Address } from '../../schemas/common.js';
import { OWNER_NONCE_KEY, SELECTOR } from '../constants.js';
import { sameAddress } from '../hex.js';
import { keccak256HexSharedPrefix } from '../keccak.js';
import {
  entryPointVersion,
  isEip7702Marker,
  packUserOperation,
  userOperationHash,
} from '../user-operation.js';
import { bundleText } from '../verified.js';
import { checkDeposit, checkGas, checkRouteTokens, checkTokenCall, type Fail, readCalls } from './calls.js';
import { MAX_DATE_MS, MIN_NOW_MS, readVerifyOptions, toMs } from './options.js';
import { checkAmount, checkArithmetic, checkExpiry, checkFees } from './quote.js';
import {
  type AccountFacts,
  type CallFacts,
  type InputFacts,
  type OperationFacts,
  type QuoteFacts,
  type RouteFacts,
  type VerifiedFacts,
  verifiedBatch,
} from './summary.js';
import type { VerifiedBridgeBatch, VerifyBridgeBatchOptions, VerifyBridgeBatchParams } from './types.js';

export { GAS_CEILINGS } from './options.js';
export type {
  BridgeBatchSummary,
  SummarySide,
  VerifiedBridgeBatch,
  VerifyBridgeBatchOptions,
  VerifyBridgeBatchParams,
} from './types.js';

/** The bits of an EntryPoint nonce key that select MAv2's validation: entity id and flags. */
const VALIDATION_BITS = (1n << 40n) - 1n;

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
  const issues: VerificationIssue[] = [];
  const fail: Fail = (check, message, expected, actual) => {
    issues.push({
      check,
      message,
      ...(expected === undefined ? {} : { expected: String(expected) }),
      ...(actual === undefined ? {} : { actual: String(actual) }),
    });
  };
  // Each section adds what it established to the facts and records every check that failed; the
  // batch is refused at the end with all of them. The facts are one object, added to in place
  // (Object.assign): a copy per section (object spread) cost a fifth of the verifier's time.
  const input = readInput(params, verifyOptions, issues, fail);
  const route = checkRoute(input, fail);
  const quote = checkQuote(route, fail);
  const account = checkAccount(quote, fail);
  const operation = checkUserOperation(account, fail);
  const calls = checkCalls(operation, fail);
  return verifiedBatch(settle(calls, issues, fail));
}

/**
 * Read input: everything is read once, here, so that a getter cannot answer one way to a check and
 * another way later. Bad arguments are an `ArgumentError`; a route or construct result of the
 * wrong shape is refused before any other check.
 */
function readInput(
  params: VerifyBridgeBatchParams,
  verifyOptions: VerifyBridgeBatchOptions,
  issues: VerificationIssue[],
  fail: Fail,
): InputFacts {
  const schemas = verifierSchemas();
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
  const { wallet, nowMs, amount, routeParsed, constructParsed } = input;
  const refuse = (path: string, message: string) =>
    new ArgumentError({ where: 'verifyBridgeBatch', issues: [{ path, message }] });
  if (typeof wallet !== 'string' || !ADDRESS_PATTERN.test(wallet))
    throw refuse('wallet', 'must be a 20-byte hex address');
  // Beyond ±8.64e15 ms a Date is invalid, and writing the time into an issue would throw.
  if (!Number.isFinite(nowMs) || Math.abs(nowMs) > MAX_DATE_MS) throw refuse('now', 'must be a valid date');
  if (nowMs < MIN_NOW_MS)
    throw refuse('now', 'must be in milliseconds: a number below 1e12 is seconds (or before 2001)');
  if (amount !== undefined) {
    const literal = decimalLiteral(amount);
    if ('error' in literal) throw refuse('amount', literal.error);
  }

  if (!routeParsed.success)
    for (const issue of routeParsed.error.issues)
      fail('shape.route', `${issue.path.join('.')}: ${issue.message}`);
  if (!constructParsed.success) {
    for (const issue of constructParsed.error.issues)
      fail('shape.construct', `${issue.path.join('.')}: ${issue.message}`);
  }
  if (!routeParsed.success || !constructParsed.success) throw new BatchVerificationError({ issues });
  const { bundle, quote } = constructParsed.data;
  return {
    wallet: wallet as Address,
    nowMs,
    amount,
    options: input.options,
    route: routeParsed.data,
    quote,
    bundle,
    original: input.original,
  };
}

/** Route: the quote is for it, it bridges from the batch's chain through a known SpokePool. */
function checkRoute(facts: InputFacts, fail: Fail): RouteFacts {
  const { route, quote, bundle, options } = facts;
  const { targets } = route;
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
  const { sourceToken, destinationToken } = checkRouteTokens(route, options.tokens, fail);
  return Object.assign(facts, { sourceToken, destinationToken });
}

/** Quote: its figures agree, its fees are within bounds, it is for the amount asked and still valid. */
function checkQuote(facts: RouteFacts, fail: Fail): QuoteFacts {
  const { route, quote } = facts;
  const figures = {
    amountInRaw: BigInt(quote.amountInRaw),
    amountOutRaw: BigInt(quote.amountOutRaw),
    providerFeeRaw: BigInt(quote.providerFeeRaw),
    gasFeeRaw: BigInt(quote.gasFeeRaw),
  };
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
  checkArithmetic(route, figures, fail);
  const feeBps = checkFees(facts, figures, fail);
  checkAmount(facts, figures.amountInRaw, fail);
  const expiresAt = checkExpiry(facts, fail);
  const { amountInRaw, amountOutRaw, providerFeeRaw, gasFeeRaw } = figures;
  return Object.assign(facts, { amountInRaw, amountOutRaw, providerFeeRaw, gasFeeRaw, feeBps, expiresAt });
}

/** Account: an allowed EntryPoint and delegate, and an authorization for this chain and delegate. */
function checkAccount(facts: QuoteFacts, fail: Fail): AccountFacts {
  const { bundle } = facts;
  const { entryPoints, delegates } = facts.options;
  const version = entryPointVersion(bundle.entryPoint);
  if (!entryPoints.some((allowed) => sameAddress(allowed, bundle.entryPoint)) || !version) {
    fail(
      'entryPoint.allowed',
      'the entry point is not an allowed v0.7 or v0.8 EntryPoint',
      entryPoints.join(', '),
      bundle.entryPoint,
    );
  }
  if (!delegates.some((allowed) => sameAddress(allowed, bundle.delegate))) {
    fail(
      'delegate.allowed',
      'the delegate is not an allowed account implementation',
      delegates.join(', '),
      bundle.delegate,
    );
  }
  const { authorization } = bundle;
  if (authorization) {
    if (authorization.chainId !== bundle.chainId) {
      fail(
        'authorization.chain',
        'the authorization is not for the source chain',
        bundle.chainId,
        authorization.chainId,
      );
    }
    if (!sameAddress(authorization.address, bundle.delegate)) {
      fail(
        'authorization.delegate',
        'the authorization delegates to another contract',
        bundle.delegate,
        authorization.address,
      );
    }
  }
  return Object.assign(facts, { version });
}

/**
 * User operation: sent by the wallet, executing exactly the listed calls, with no code run before
 * validation, sponsored when required, gas within bounds, and `userOpHash` its hash.
 */
function checkUserOperation(facts: AccountFacts, fail: Fail): OperationFacts {
  const { bundle, wallet, version, options } = facts;
  if (!sameAddress(bundle.userOp.sender, wallet))
    fail('userOp.sender', 'the operation is not sent by the wallet', wallet, bundle.userOp.sender);
  const { calls, callData } = readCalls(bundle, fail);
  const packed = packUserOperation(bundle.userOp, callData);
  if ('problems' in packed) {
    for (const problem of packed.problems) fail('userOp.fields', problem);
    return Object.assign(facts, { calls, paymaster: null, callDataHash: undefined });
  }
  const nonceKey = packed.op.nonce >> 64n;
  if (nonceKey !== OWNER_NONCE_KEY) {
    // MAv2 reads the validation from the key's low 40 bits; the bits above are a parallel sequence.
    fail(
      'userOp.nonceKey',
      (nonceKey & VALIDATION_BITS) === OWNER_NONCE_KEY
        ? 'the nonce key opens a parallel sequence: an operation under it could execute beside one signed under key 1'
        : "the nonce key does not select the owner's validation: the account would refuse the operation (AA23)",
      OWNER_NONCE_KEY,
      nonceKey,
    );
  }
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
  const paymaster = packed.op.paymaster ?? null;
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
  const callDataHash = keccak256HexSharedPrefix(packed.op.callData);
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
  return Object.assign(facts, { calls, paymaster, callDataHash });
}

/** Calls: approve → deposit → fee transfer (only and always when a gas fee is charged). */
function checkCalls(facts: OperationFacts, fail: Fail): CallFacts {
  const { calls, gasFeeRaw, amountInRaw, route, options, nowMs } = facts;
  const { targets } = route;
  const expectedCount = gasFeeRaw > 0n ? 3 : 2;
  if (calls.length !== expectedCount) {
    fail(
      'calls.count',
      `expected approve, deposit${gasFeeRaw > 0n ? ' and fee transfer' : ''}`,
      expectedCount,
      calls.length,
    );
  }
  const [approve, depositCall, fee] = calls;
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
  const deposit =
    depositCall &&
    checkDeposit(depositCall, {
      fail,
      route,
      wallet: facts.wallet,
      amountInRaw,
      amountOutRaw: facts.amountOutRaw,
      nowSec: BigInt(Math.floor(nowMs / 1000)),
      expiresAtSec: BigInt(Math.floor(facts.expiresAt / 1000)),
      allowSuffix: options.allowIntegratorSuffix,
    });
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
  return Object.assign(facts, { deposit });
}

/**
 * The verdict: any issue refuses the batch. Without issues the calls are proven to encode to the
 * call data, whose hash is known, and the bundle's text is taken to bind the signature to it.
 */
function settle(facts: CallFacts, issues: VerificationIssue[], fail: Fail): VerifiedFacts {
  const { bundle, callDataHash, deposit, version } = facts;
  const text = issues.length === 0 && callDataHash ? bundleText(bundle, callDataHash) : undefined;
  if (issues.length === 0 && text === undefined) fail('shape.construct', 'the bundle cannot be read as JSON');
  if (issues.length > 0 || !deposit || !version || text === undefined) {
    if (issues.length === 0) fail('calls.count', 'the batch has no deposit');
    throw new BatchVerificationError({ issues });
  }
  return Object.assign(facts, { deposit, version, text });
}
