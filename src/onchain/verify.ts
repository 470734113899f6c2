import { decimalLiteral, toRawAmount } from '../core/amounts.js';
import { readArgs } from '../core/args.js';
import { BatchVerificationError, type VerificationIssue } from '../errors/bridge-errors.js';
import { ArgumentError } from '../errors/client-errors.js';
import { verifierSchemas } from '../schemas/bridge.js';
import { ADDRESS_PATTERN, type Address } from '../schemas/common.js';
import { SELECTOR } from './constants.js';
import { isExecuteBatchOf, sameAddress } from './hex.js';
import { keccak256Hex } from './keccak.js';
import {
  entryPointVersion,
  isEip7702Marker,
  packUserOperation,
  userOperationHash,
} from './user-operation.js';
import { bundleText } from './verified.js';
import {
  assetNames,
  checkDeposit,
  checkGas,
  checkToken,
  checkTokenCall,
  type DepositFacts,
} from './verify-calls.js';
import {
  LIMITS_ROOM_DIVISOR,
  MAX_DATE_MS,
  MAX_DECIMALS,
  MIN_NOW_MS,
  readVerifyOptions,
  toMs,
} from './verify-options.js';
import { verifiedBatch } from './verify-summary.js';
import type {
  VerifiedBridgeBatch,
  VerifyBridgeBatchOptions,
  VerifyBridgeBatchParams,
} from './verify-types.js';

export { GAS_CEILINGS } from './verify-options.js';
export type {
  BridgeBatchSummary,
  SummarySide,
  VerifiedBridgeBatch,
  VerifyBridgeBatchOptions,
  VerifyBridgeBatchParams,
} from './verify-types.js';

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
  const { wallet, nowMs, routeParsed, constructParsed, options } = input;
  if (typeof wallet !== 'string' || !ADDRESS_PATTERN.test(wallet)) {
    throw new ArgumentError({
      where: 'verifyBridgeBatch',
      issues: [{ path: 'wallet', message: 'must be a 20-byte hex address' }],
    });
  }
  let asked: bigint | undefined;
  // Beyond ±8.64e15 ms a Date is invalid, and writing the time into an issue would throw.
  if (!Number.isFinite(nowMs) || Math.abs(nowMs) > MAX_DATE_MS)
    throw new ArgumentError({
      where: 'verifyBridgeBatch',
      issues: [{ path: 'now', message: 'must be a valid date' }],
    });
  if (nowMs < MIN_NOW_MS) {
    throw new ArgumentError({
      where: 'verifyBridgeBatch',
      issues: [
        { path: 'now', message: 'must be in milliseconds: a number below 1e12 is seconds (or before 2001)' },
      ],
    });
  }
  if (input.amount !== undefined) {
    const literal = decimalLiteral(input.amount);
    if ('error' in literal)
      throw new ArgumentError({
        where: 'verifyBridgeBatch',
        issues: [{ path: 'amount', message: literal.error }],
      });
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
  if (!routeParsed.success || !constructParsed.success) throw new BatchVerificationError({ issues });
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
    // Hex already (the schema checked it): read, not checked again.
    const value = call.value === '0x' ? 0n : BigInt(call.value);
    if (value !== 0n) fail('calls.value', `call ${index + 1} sends native value`, '0', call.value);
    if (call.data.length % 2 !== 0) fail('calls.data', `call ${index + 1} data is not whole bytes`);
    calls.push({ target: call.target, value, data: call.data.toLowerCase() });
  });
  // The call data must be exactly executeBatch of the listed calls, word for word; once it matches
  // (validated calls, in place) it is known to be clean hex and needs no second check.
  const callData =
    typeof bundle.userOp.callData === 'string' ? bundle.userOp.callData.toLowerCase() : undefined;
  const canonical = callData !== undefined && isExecuteBatchOf(callData, calls);
  if (!canonical) {
    const hooks = callData?.slice(2, 10) === SELECTOR.executeUserOp;
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
    throw new BatchVerificationError({ issues });
  }

  return verifiedBatch({
    wallet: wallet as Address,
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
    original: input.original,
  });
}
