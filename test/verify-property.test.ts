import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BatchVerificationError,
  type BridgeConstructResult,
  type BridgeRoute,
  ENTRY_POINT_V07,
  ENTRY_POINT_V08,
  fromRawAmount,
  MAV2_7702_DELEGATE_V100,
  MAV2_7702_DELEGATE_V110,
  verifyBridgeBatch,
} from '../src/index.js';
import { buildBridgeBundle, encodeBatchCallData, rehashBundle } from '../src/testing/index.js';
import { NOW, USER } from './helpers/batches.js';
import { quote, route } from './helpers/fixtures.js';

interface Shape {
  fromDecimals: number;
  toDecimals: number;
  amountInRaw: bigint;
  amountOutRaw: bigint;
  gasFeeRaw: bigint;
  authorizationNonce: number | null;
  v08: boolean;
  v110: boolean;
  depositV3: boolean;
}

const shape: fc.Arbitrary<Shape> = fc.record({
  fromDecimals: fc.integer({ min: 0, max: 18 }),
  toDecimals: fc.integer({ min: 0, max: 24 }),
  amountInRaw: fc.bigInt({ min: 1n, max: 10n ** 30n }),
  amountOutRaw: fc.bigInt({ min: 1n, max: 10n ** 30n }),
  gasFeeRaw: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 10n ** 20n })),
  authorizationNonce: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: null }),
  v08: fc.boolean(),
  v110: fc.boolean(),
  depositV3: fc.boolean(),
});

function make(s: Shape): { route: BridgeRoute; construct: BridgeConstructResult } {
  const base = route();
  const r: BridgeRoute = {
    ...base,
    from: { ...base.from, decimals: s.fromDecimals },
    to: { ...base.to, decimals: s.toDecimals },
  };
  const q = quote({
    amountIn: fromRawAmount(s.amountInRaw, s.fromDecimals),
    amountInRaw: String(s.amountInRaw),
    amountOut: fromRawAmount(s.amountOutRaw, s.toDecimals),
    amountOutRaw: String(s.amountOutRaw),
    gasFee: fromRawAmount(s.gasFeeRaw, s.fromDecimals),
    gasFeeRaw: String(s.gasFeeRaw),
  });
  const bundle = buildBridgeBundle({
    route: r,
    wallet: USER,
    amountInRaw: s.amountInRaw,
    amountOutRaw: s.amountOutRaw,
    gasFeeRaw: s.gasFeeRaw,
    quoteTimestamp: NOW / 1000 - 10,
    fillDeadline: NOW / 1000 + 7200,
    authorizationNonce: s.authorizationNonce,
    entryPoint: s.v08 ? ENTRY_POINT_V08 : ENTRY_POINT_V07,
    delegate: s.v110 ? MAV2_7702_DELEGATE_V110 : MAV2_7702_DELEGATE_V100,
    depositFunction: s.depositV3 ? 'depositV3' : 'deposit',
  });
  return { route: r, construct: { transferId: 't', intentId: 'i', bundle, quote: q } };
}

/** Byte offsets of a call's data (selector included) whose every bit the verifier pins down. */
function checkedBytes(callIndex: number, length: number): number[] {
  if (callIndex !== 1) return Array.from({ length }, (_, i) => i);
  const bytes: number[] = [];
  for (let i = 0; i < 4 + 7 * 32; i++) bytes.push(i); // selector, parties, tokens, amounts, chain
  for (let i = 4 + 7 * 32; i < 4 + 8 * 32 - 20; i++) bytes.push(i); // relayer's upper bytes
  for (let word = 8; word <= 10; word++) for (let i = 0; i < 28; i++) bytes.push(4 + word * 32 + i); // uint32 upper bytes
  for (let i = 4 + 11 * 32; i < length; i++) bytes.push(i); // message offset and length
  return bytes;
}

/**
 * Re-encodes the calls and recomputes the hash of a forged batch, as a forger would, so that only
 * the verifier's own checks stand between it and a signature; then expects them to reject it.
 */
async function expectRejectedOnceRehashed(r: BridgeRoute, construct: BridgeConstructResult, amount: string) {
  construct.bundle.userOp.callData = encodeBatchCallData(construct.bundle.calls);
  construct.bundle = rehashBundle(construct.bundle);
  await expect(
    verifyBridgeBatch({ route: r, construct, wallet: USER, amount, now: NOW }),
  ).rejects.toBeInstanceOf(BatchVerificationError);
}

describe('verifyBridgeBatch, by property', () => {
  it('accepts valid batches with random amounts, decimals and optional parts', async () => {
    await fc.assert(
      fc.asyncProperty(shape, async (s) => {
        const { route: r, construct } = make(s);
        const summary = await verifyBridgeBatch({
          route: r,
          construct,
          wallet: USER,
          amount: construct.quote.amountIn,
          now: NOW,
        });
        expect(summary.source.amountRaw).toBe(s.amountInRaw);
        expect(summary.destination.amountRaw).toBe(s.amountOutRaw);
        expect(summary.needsAuthorization).toBe(s.authorizationNonce !== null);
      }),
      { numRuns: 150, seed: 20261122 },
    );
  });

  it('rejects any change to a checked byte of any call, even with the hash recomputed', async () => {
    await fc.assert(
      fc.asyncProperty(
        shape,
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (s, callPick, bytePick, xor) => {
          const { route: r, construct } = make(s);
          const callIndex = callPick % construct.bundle.calls.length;
          const call = construct.bundle.calls[callIndex]!;
          const positions = checkedBytes(callIndex, (call.data.length - 2) / 2);
          const position = positions[bytePick % positions.length]!;
          const byte = Number.parseInt(call.data.slice(2 + position * 2, 4 + position * 2), 16) ^ xor;
          call.data =
            `${call.data.slice(0, 2 + position * 2)}${byte.toString(16).padStart(2, '0')}${call.data.slice(4 + position * 2)}` as `0x${string}`;
          await expectRejectedOnceRehashed(r, construct, construct.quote.amountIn);
        },
      ),
      { numRuns: 200, seed: 7702 },
    );
  });

  it('rejects a change to any bound field of the bundle or quote', async () => {
    const mutations: ((c: BridgeConstructResult, other: `0x${string}`) => void)[] = [
      (c, other) => (c.bundle.userOp.sender = other),
      (c) => (c.bundle.chainId += 1),
      (c, other) => (c.bundle.entryPoint = other),
      (c, other) => (c.bundle.delegate = other),
      (c, other) => (c.bundle.calls[0]!.target = other),
      (c, other) => (c.bundle.calls[1]!.target = other),
      (c) => (c.bundle.calls[0]!.value = '0x1'),
      (c) => (c.quote.amountInRaw = String(BigInt(c.quote.amountInRaw) + 1n)),
      (c) => (c.quote.amountOutRaw = String(BigInt(c.quote.amountOutRaw) + 1n)),
      (c) => (c.quote.gasFeeRaw = String(BigInt(c.quote.gasFeeRaw) + 1n)),
      (c) => (c.quote.routeId = `${c.quote.routeId}-x`),
      (c) => c.bundle.calls.reverse(),
    ];
    await fc.assert(
      fc.asyncProperty(
        shape,
        fc.integer({ min: 0, max: mutations.length - 1 }),
        fc.stringMatching(/^0x[0-9a-f]{40}$/),
        async (s, which, other) => {
          const { route: r, construct } = make(s);
          mutations[which]!(construct, other as `0x${string}`);
          await expectRejectedOnceRehashed(r, construct, fromRawAmount(s.amountInRaw, s.fromDecimals));
        },
      ),
      { numRuns: 200, seed: 4337 },
    );
  });
});
