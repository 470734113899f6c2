import type { BridgeConstructResult, BridgeRoute } from '../../src/index.js';
import { buildBridgeBundle, encodeBatchCallData, rehashBundle } from '../../src/testing/index.js';
import { quote, route } from './fixtures.js';

export const USER = '0x6969174FD72466430a46e18234D0b530c9FD5f49' as const;
export const ATTACKER = '0xbad0000000000000000000000000000000000bad' as const;
/** 2026-11-22T10:00:00Z: before the fixture quote's expiry (10:05) and the fill deadline. */
export const NOW = Date.parse('2026-11-22T10:00:00.000Z');

export function validConstruct(
  overrides: { route?: BridgeRoute; authorizationNonce?: number | null } = {},
): BridgeConstructResult {
  const r = overrides.route ?? route();
  const q = quote({ routeId: r.routeId });
  const bundle = buildBridgeBundle({
    route: r,
    wallet: USER,
    amountInRaw: BigInt(q.amountInRaw),
    amountOutRaw: BigInt(q.amountOutRaw),
    gasFeeRaw: BigInt(q.gasFeeRaw),
    quoteTimestamp: NOW / 1000 - 30,
    fillDeadline: NOW / 1000 + 3 * 3600,
    authorizationNonce: overrides.authorizationNonce === undefined ? 3 : overrides.authorizationNonce,
  });
  return { transferId: 'tr_1', intentId: 'int_1', bundle, quote: q };
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
    fillDeadline: now + 3600,
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
