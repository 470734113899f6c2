import { expect } from 'vitest';
import { NOW, USER, validConstruct } from '../../fixtures/batches.js';
import { quote, route } from '../../fixtures/wire.js';

// The shared valid batch lives with the fixtures the benchmarks use too.
export { NOW, USER, validConstruct };

import {
  BatchVerificationError,
  type BridgeConstructResult,
  type BridgeRoute,
  fromRawAmount,
  type VerifyBridgeBatchOptions,
  verifyBridgeBatch,
} from '../../src/index.js';
import { buildBridgeBundle, encodeBatchCallData, rehashBundle } from '../../src/testing/index.js';

export const ATTACKER = '0xbad0000000000000000000000000000000000bad' as const;

/**
 * The ids of the checks a batch fails (none when it verifies), against the fixture route, wallet
 * and time unless told otherwise. `amount: null` verifies it as a `maxAmount` batch.
 */
export function issuesOf(
  construct: BridgeConstructResult,
  extra: {
    route?: BridgeRoute;
    amount?: string | null;
    now?: number;
    options?: VerifyBridgeBatchOptions;
    wallet?: string;
  } = {},
): string[] {
  try {
    verifyBridgeBatch(
      {
        route: extra.route ?? route(),
        construct,
        wallet: extra.wallet ?? USER,
        amount: extra.amount === null ? undefined : (extra.amount ?? construct.quote.amountIn),
        now: extra.now ?? NOW,
      },
      extra.options,
    );
  } catch (error) {
    expect(error).toBeInstanceOf(BatchVerificationError);
    return [...new Set((error as BatchVerificationError).issues.map((issue) => issue.check))];
  }
  return [];
}

/**
 * A valid construct result for `wallet` whose quote and deadlines count from now, so that
 * `bridge.execute` verifies and signs it; `tamper` changes it first.
 */
export function freshConstruct(
  wallet: `0x${string}`,
  tamper?: (c: BridgeConstructResult) => void,
): BridgeConstructResult {
  const expiresAt = new Date(Date.now() + 120_000).toISOString();
  const q = quote({ expiresAt });
  const now = Math.floor(Date.now() / 1000);
  const bundle = buildBridgeBundle({
    route: route(),
    wallet,
    amountInRaw: 25_500_000n,
    amountOutRaw: BigInt(q.amountOutRaw),
    gasFeeRaw: 120_000n,
    quoteTimestamp: now,
    // As the simulator and Across do: hours after the latest moment the SpokePool takes the deposit.
    fillDeadline: now + 3 * 3600 + 900,
    authorizationNonce: 0,
  });
  const construct = { transferId: 'tr_1', intentId: 'int_1', bundle, quote: q };
  tamper?.(construct);
  return construct;
}

/**
 * Changes a valid construct result as a forger would: after the change the call data is re-encoded
 * from the calls and the hash recomputed, so only the check aimed at must catch it.
 */
export function forge(
  mutate: (construct: BridgeConstructResult) => void,
  options: { reencode?: boolean; rehash?: boolean; base?: BridgeConstructResult } = {},
): BridgeConstructResult {
  const construct = structuredClone(options.base ?? validConstruct());
  mutate(construct);
  if (options.reencode ?? true)
    construct.bundle.userOp.callData = encodeBatchCallData(construct.bundle.calls);
  if (options.rehash ?? true) construct.bundle = rehashBundle(construct.bundle);
  return construct;
}

/** A batch forged in one argument word of one call (0 approve, 1 deposit, 2 fee transfer). */
export function forgeWord(call: number, word: number, value: string): BridgeConstructResult {
  return forge((c) => {
    c.bundle.calls[call]!.data = setWord(c.bundle.calls[call]!.data, word, value);
  });
}

/** Replaces the i-th argument word of ABI call data. */
export function setWord(data: string, index: number, word: string): `0x${string}` {
  const start = 10 + index * 64;
  return `0x${data.slice(2, start)}${word.padStart(64, '0')}${data.slice(start + 64)}` as `0x${string}`;
}

export function addressWord(address: string): string {
  return address.slice(2).toLowerCase().padStart(64, '0');
}

/**
 * A construct result whose quote adds up for any route: the output is the amount less the provider
 * fee in the destination's decimals, every figure given in both forms, the batch built to match.
 * A forger who controls the service sends exactly this, with whatever route it likes.
 */
export function batchFor(
  r: BridgeRoute,
  figures: { amountInRaw?: bigint; providerFeeRaw?: bigint; gasFeeRaw?: bigint; amountOutRaw?: bigint } = {},
  bundle: Partial<Parameters<typeof buildBridgeBundle>[0]> = {},
): BridgeConstructResult {
  const amountInRaw =
    figures.amountInRaw ?? 25n * 10n ** BigInt(r.from.decimals) + 5n * 10n ** BigInt(r.from.decimals - 1);
  const providerFeeRaw = figures.providerFeeRaw ?? amountInRaw / 500n;
  const gasFeeRaw = figures.gasFeeRaw ?? amountInRaw / 200n;
  const scale = r.to.decimals - r.from.decimals;
  const net = amountInRaw - providerFeeRaw;
  const amountOutRaw =
    figures.amountOutRaw ?? (scale >= 0 ? net * 10n ** BigInt(scale) : net / 10n ** BigInt(-scale));
  const q = quote({
    routeId: r.routeId,
    amountIn: fromRawAmount(amountInRaw, r.from.decimals),
    amountInRaw: String(amountInRaw),
    amountOut: fromRawAmount(amountOutRaw, r.to.decimals),
    amountOutRaw: String(amountOutRaw),
    providerFee: fromRawAmount(providerFeeRaw, r.from.decimals),
    providerFeeRaw: String(providerFeeRaw),
    gasFee: fromRawAmount(gasFeeRaw, r.from.decimals),
    gasFeeRaw: String(gasFeeRaw),
    gasFeeToken: r.from.symbol,
  });
  const built = buildBridgeBundle({
    route: r,
    wallet: USER,
    amountInRaw,
    amountOutRaw,
    gasFeeRaw,
    quoteTimestamp: NOW / 1000 - 30,
    fillDeadline: NOW / 1000 + 3 * 3600,
    authorizationNonce: 3,
    ...bundle,
  });
  return { transferId: 'tr_1', intentId: 'int_1', bundle: built, quote: q };
}

/**
 * The same user operation in the packed JSON form (`initCode`, `accountGasLimits`, `gasFees`,
 * `paymasterAndData`): the EntryPoint hashes both forms alike, so `userOpHash` stays valid.
 */
export function packedForm(userOp: Record<string, unknown>): Record<string, unknown> {
  const hex = (name: string) => BigInt((userOp[name] as string | undefined) ?? 0);
  const u128 = (value: bigint) => value.toString(16).padStart(32, '0');
  const bytes = (name: string) => ((userOp[name] as string | undefined) ?? '0x').slice(2);
  const paymaster = userOp.paymaster as string | undefined;
  return {
    sender: userOp.sender,
    nonce: userOp.nonce,
    initCode: userOp.factory ? `0x${bytes('factory')}${bytes('factoryData')}` : '0x',
    callData: userOp.callData,
    accountGasLimits: `0x${u128(hex('verificationGasLimit'))}${u128(hex('callGasLimit'))}`,
    preVerificationGas: userOp.preVerificationGas,
    gasFees: `0x${u128(hex('maxPriorityFeePerGas'))}${u128(hex('maxFeePerGas'))}`,
    paymasterAndData: paymaster
      ? `0x${paymaster.slice(2)}${u128(hex('paymasterVerificationGasLimit'))}${u128(hex('paymasterPostOpGasLimit'))}${bytes('paymasterData')}`
      : '0x',
    signature: '0x',
  };
}

/** Takes the paymaster out of an RPC-form user operation: the wallet then pays its own gas. */
export function unsponsor(userOp: Record<string, unknown>): void {
  for (const key of [
    'paymaster',
    'paymasterData',
    'paymasterVerificationGasLimit',
    'paymasterPostOpGasLimit',
  ])
    delete userOp[key];
}
