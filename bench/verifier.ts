/**
 * Verifier throughput on one core, on a mix of batches it accepts: `verifyBridgeBatch` with every
 * check, against a straightforward verifier written with viem's public API (decodeFunctionData of
 * executeBatch, approve, the deposit and the fee transfer; getUserOperationHash; the same
 * semantic comparisons), and a bare viem decode of the calls, the least any verifier does.
 */

import type { BridgeConstructResult, BridgeRoute, VerifyBridgeBatchOptions } from 'partner-s2s-sdk';
import {
  type Address,
  decodeFunctionData,
  erc20Abi,
  type Hex,
  hexToBigInt,
  isAddressEqual,
  parseAbi,
  parseUnits,
} from 'viem';
import { entryPoint07Address, entryPoint08Address, getUserOperationHash } from 'viem/account-abstraction';
import { route, wethRoute } from '../fixtures/wire.js';
import { batchFor, NOW, USER, validConstruct } from '../test/helpers/batches.js';
import { cpuClock, fixed, interleaveSamples, median, pairedRatio, table, verdict } from './lib.js';
import { sdk } from './sdk.js';

const accountAbi = parseAbi(['function executeBatch((address target, uint256 value, bytes data)[] calls)']);
const spokePoolAbi = parseAbi([
  'function deposit(bytes32 depositor, bytes32 recipient, bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, bytes32 exclusiveRelayer, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityParameter, bytes message)',
  'function depositV3(address depositor, address recipient, address inputToken, address outputToken, uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, address exclusiveRelayer, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityDeadline, bytes message)',
]);

const callAbi = [...erc20Abi, ...spokePoolAbi];

interface Case {
  name: string;
  route: BridgeRoute;
  construct: BridgeConstructResult;
  amount: string | undefined;
  options: VerifyBridgeBatchOptions;
}

/** Batches the verifier accepts, of every shape it meets: the mix each contender goes through. */
function cases(): Case[] {
  const usdc = route();
  const eth = wethRoute();
  const now = NOW / 1000;
  const relayer = '0x1234567890123456789012345678901234567890';
  const pick = (c: BridgeConstructResult, name: string, r = usdc, options = {}, amount?: string | null) => ({
    name,
    route: r,
    construct: c,
    amount: amount === null ? undefined : (amount ?? c.quote.amountIn),
    options,
  });
  return [
    pick(validConstruct(), 'v0.7, deposit, fee transfer, 7702 authorization'),
    pick(
      batchFor(
        usdc,
        {},
        { entryPoint: entryPoint08Address, depositFunction: 'depositV3', authorizationNonce: null },
      ),
      'v0.8, depositV3, delegated already',
    ),
    pick(batchFor(usdc, { gasFeeRaw: 0n }), 'no gas fee (two calls), maxAmount', usdc, {}, null),
    pick(batchFor(eth), 'WETH base → arbitrum, 18 decimals both sides', eth),
    pick(
      batchFor(usdc, {}, { exclusiveRelayer: relayer, exclusivityParameter: 5, fillDeadline: now + 11_700 }),
      'exclusive relayer for 5 s',
    ),
    pick(batchFor(usdc, {}, { paymaster: null }), 'unsponsored', usdc, { requirePaymaster: false }),
  ];
}

const ZERO = '0x0000000000000000000000000000000000000000';
const GAS_FIELDS = [
  'nonce',
  'callGasLimit',
  'verificationGasLimit',
  'preVerificationGas',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'paymasterVerificationGasLimit',
  'paymasterPostOpGasLimit',
];

/** The user operation as viem's hashing takes it: the numeric fields as bigint, no signature. */
function forViem(op: Record<string, unknown>) {
  const converted: Record<string, unknown> = { ...op, signature: '0x' };
  for (const name of GAS_FIELDS) if (op[name] !== undefined) converted[name] = BigInt(op[name] as string);
  if (!op.paymaster) for (const name of ['paymaster', 'paymasterData']) delete converted[name];
  return converted;
}
/** A bytes32 argument holding an address: its upper 12 bytes zero. */
function addressOf(word: Hex): Address {
  if (hexToBigInt(word) >> 160n !== 0n) throw new Error('not an address word');
  return `0x${word.slice(26)}`;
}

/**
 * What a partner would write with viem: decode every call, recompute the hash, compare. Throws at
 * the first problem; it checks the route, the quote's arithmetic, the allowlists, each argument of
 * each call, the deposit's timing and the user-operation hash.
 */
function naiveVerify({ route: r, construct, amount, options }: Case, wallet: Address, nowMs: number): void {
  const { bundle, quote } = construct;
  const check = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`naive verifier: ${what}`);
  };
  check(quote.routeId === r.routeId, 'route');
  check(bundle.chainId === r.from.chainId && r.to.chainId !== r.from.chainId, 'chains');
  check(isAddressEqual(r.targets.token, r.from.contractAddress), 'token');
  const pool = sdk.ACROSS_SPOKE_POOLS[r.from.chainId];
  check(pool !== undefined && isAddressEqual(pool, r.targets.bridge), 'bridge');
  check(sdk.ACROSS_SPOKE_POOLS[r.to.chainId] !== undefined, 'destination pool');
  const amountIn = BigInt(quote.amountInRaw);
  const amountOut = BigInt(quote.amountOutRaw);
  const providerFee = BigInt(quote.providerFeeRaw);
  const gasFee = BigInt(quote.gasFeeRaw);
  check(parseUnits(quote.amountIn, r.from.decimals) === amountIn, 'amountIn');
  check(parseUnits(quote.amountOut, r.to.decimals) === amountOut, 'amountOut');
  check(parseUnits(quote.providerFee, r.from.decimals) === providerFee, 'providerFee');
  check(parseUnits(quote.gasFee, r.from.decimals) === gasFee, 'gasFee');
  const scale = r.to.decimals - r.from.decimals;
  const net = amountIn - providerFee;
  const expectedOut = scale >= 0 ? net * 10n ** BigInt(scale) : net / 10n ** BigInt(-scale);
  check(amountOut <= expectedOut + 1n && amountOut + 1n >= expectedOut, 'arithmetic');
  check(gasFee < amountIn && providerFee * 4n < amountIn, 'fee ceilings');
  if (amount !== undefined) check(parseUnits(amount, r.from.decimals) === amountIn, 'amount asked');
  const expiresAt = Date.parse(quote.expiresAt);
  check(expiresAt - nowMs > 15_000, 'expiry');
  check(
    sdk.DEFAULT_ENTRY_POINTS.some((a) => isAddressEqual(a, bundle.entryPoint)),
    'entry point',
  );
  check(
    sdk.DEFAULT_DELEGATES.some((a) => isAddressEqual(a, bundle.delegate)),
    'delegate',
  );
  if (bundle.authorization) {
    check(bundle.authorization.chainId === bundle.chainId, 'authorization chain');
    check(isAddressEqual(bundle.authorization.address, bundle.delegate), 'authorization delegate');
  }
  const op = bundle.userOp as Record<string, Hex | undefined>;
  check(isAddressEqual(op.sender as Address, wallet), 'sender');
  check(!op.factory, 'initCode');
  check(options.requirePaymaster === false || !!op.paymaster, 'paymaster');

  // The call data is executeBatch of exactly the listed calls.
  const batch = decodeFunctionData({ abi: accountAbi, data: op.callData as Hex });
  const calls = batch.args[0];
  check(calls.length === bundle.calls.length && calls.length === (gasFee > 0n ? 3 : 2), 'call count');
  calls.forEach((call, i) => {
    const listed = bundle.calls[i]!;
    check(isAddressEqual(call.target, listed.target), 'call target');
    check(call.value === 0n && BigInt(listed.value) === 0n, 'call value');
    check(call.data.toLowerCase() === listed.data.toLowerCase(), 'call data');
  });
  const approve = decodeFunctionData({ abi: erc20Abi, data: calls[0]!.data });
  check(approve.functionName === 'approve' && isAddressEqual(calls[0]!.target, r.targets.token), 'approve');
  const [spender, allowance] = approve.args as [Address, bigint];
  check(isAddressEqual(spender, r.targets.bridge) && allowance === amountIn, 'approve args');

  check(isAddressEqual(calls[1]!.target, r.targets.bridge), 'deposit target');
  const deposit = decodeFunctionData({ abi: spokePoolAbi, data: calls[1]!.data });
  const a = deposit.args;
  const asAddress = (value: Hex) => (deposit.functionName === 'deposit' ? addressOf(value) : value);
  check(isAddressEqual(asAddress(a[0]), wallet) && isAddressEqual(asAddress(a[1]), wallet), 'depositor');
  check(isAddressEqual(asAddress(a[2]), r.from.contractAddress), 'input token');
  check(isAddressEqual(asAddress(a[3]), r.to.contractAddress), 'output token');
  check(a[4] === amountIn && a[5] === amountOut && a[6] === BigInt(r.to.chainId), 'deposit amounts');
  const relayer = asAddress(a[7]);
  const [quoteTimestamp, fillDeadline, exclusivity, message] = [a[8], a[9], a[10], a[11]];
  check(message === '0x', 'message');
  const nowSec = Math.floor(nowMs / 1000);
  const expiresSec = Math.floor(expiresAt / 1000);
  check(quoteTimestamp <= Math.min(nowSec + 300, expiresSec), 'quote timestamp');
  const latest = Math.max(quoteTimestamp + 3600, expiresSec);
  check(fillDeadline > nowSec && fillDeadline >= latest + 600, 'fill deadline');
  if (exclusivity !== 0) {
    check(!isAddressEqual(relayer, ZERO), 'exclusive relayer');
    check(latest + exclusivity + 600 <= fillDeadline, 'exclusivity');
  }
  if (gasFee > 0n) {
    const fee = decodeFunctionData({ abi: erc20Abi, data: calls[2]!.data });
    check(fee.functionName === 'transfer' && isAddressEqual(calls[2]!.target, r.targets.token), 'fee');
    const [to, value] = fee.args as [Address, bigint];
    check(isAddressEqual(to, r.targets.treasury) && value === gasFee, 'fee args');
  }

  // The hash to be signed is the hash of this operation.
  const big = (name: string) => BigInt(op[name] ?? 0);
  const maxFeePerGas = big('maxFeePerGas');
  check(big('maxPriorityFeePerGas') <= maxFeePerGas && maxFeePerGas <= 25_000n * 10n ** 9n, 'gas fees');
  for (const name of ['callGasLimit', 'verificationGasLimit', 'paymasterVerificationGasLimit'])
    check(big(name) <= 15_000_000n, 'gas limits');
  const version = isAddressEqual(bundle.entryPoint, entryPoint07Address) ? '0.7' : '0.8';
  const hash = getUserOperationHash({
    chainId: bundle.chainId,
    entryPointAddress: bundle.entryPoint,
    entryPointVersion: version,
    userOperation: forViem(op),
  } as Parameters<typeof getUserOperationHash>[0]);
  check(hash === bundle.userOpHash.toLowerCase(), 'user operation hash');
}

export async function verifier(): Promise<void> {
  const mix = cases();
  // Both must accept every case, or the race is not between verifiers of the same batches.
  for (const c of mix) {
    naiveVerify(c, USER, NOW);
    sdk.verifyBridgeBatch(
      { route: c.route, construct: c.construct, wallet: USER, amount: c.amount, now: NOW },
      c.options,
    );
  }
  const N = 300;
  const run = (verify: (c: Case) => void) => () => {
    for (let i = 0; i < N; i++) verify(mix[i % mix.length]!);
    return N;
  };
  const contenders = [
    {
      name: 'viem decode of the calls only',
      run: run((c) => {
        for (const call of c.construct.bundle.calls) decodeFunctionData({ abi: callAbi, data: call.data });
      }),
    },
    { name: 'naive viem verifier', run: run((c) => naiveVerify(c, USER, NOW)) },
    {
      name: 'verifyBridgeBatch (every check)',
      run: run((c) =>
        sdk.verifyBridgeBatch(
          { route: c.route, construct: c.construct, wallet: USER, amount: c.amount, now: NOW },
          c.options,
        ),
      ),
    },
  ];
  for (const c of contenders) c.run();
  const ROUNDS = 31;
  // CPU time, not wall time: the verifier is synchronous, and on a shared machine the time this
  // process waits for a core is not the verifier's.
  const samples = await interleaveSamples(contenders, ROUNDS, cpuClock);
  const naive = samples.get('naive viem verifier')!;
  table(
    `Verifier, one core, ${mix.length} kinds of accepted batch in turn, ${N} per round (${ROUNDS} interleaved rounds, CPU time; ratios are medians of per-round ratios)`,
    ['work', 'µs/batch', 'batches/s', '× naive viem speed'],
    [...samples].map(([name, values]) => [
      name,
      fixed(median(values), 1),
      Math.round(1e6 / median(values)).toLocaleString('en'),
      fixed(pairedRatio(naive, values)),
    ]),
  );
  // Batches per second move with this machine's speed; the ratio to the naive viem verifier of the
  // same batches in the same rounds does not.
  const sdkTimes = samples.get('verifyBridgeBatch (every check)')!;
  const speed = pairedRatio(naive, sdkTimes);
  verdict(
    'verifier speed × the naive viem verifier, same batches, same run',
    `${fixed(speed)}× (${Math.round(1e6 / median(sdkTimes)).toLocaleString('en')} batches/s)`,
    '≥ 1.50×',
    speed >= 1.5,
  );
}
