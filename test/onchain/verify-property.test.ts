import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quote, route } from '../../fixtures/wire.js';
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
} from '../../src/index.js';
import { bridgeSchemas, verifierSchemas } from '../../src/schemas/bridge.js';
import { buildBridgeBundle, encodeBatchCallData, rehashBundle } from '../../src/testing/index.js';
import { addressWord, NOW, setWord, USER } from '../helpers/batches.js';

interface Shape {
  fromDecimals: number;
  toDecimals: number;
  amountInRaw: bigint;
  /** The provider fee as parts per 10,000 of the amount, below the quarter ceiling. */
  providerFeeBp: bigint;
  /** The gas fee as parts per 10,000 of the amount, below the amount. */
  gasFeeBp: bigint;
  authorizationNonce: number | null;
  v08: boolean;
  v110: boolean;
  depositV3: boolean;
}

const shape: fc.Arbitrary<Shape> = fc.record({
  fromDecimals: fc.integer({ min: 0, max: 18 }),
  toDecimals: fc.integer({ min: 0, max: 24 }),
  amountInRaw: fc.bigInt({ min: 1n, max: 10n ** 30n }),
  providerFeeBp: fc.bigInt({ min: 0n, max: 2499n }),
  gasFeeBp: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 9999n })),
  authorizationNonce: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: null }),
  v08: fc.boolean(),
  v110: fc.boolean(),
  depositV3: fc.boolean(),
});

/** Tokens the well-known table does not list, so that any decimals are the route's to say. */
const SOURCE_TOKEN = '0x000000000000000000000000000000000000a001';
const DESTINATION_TOKEN = '0x000000000000000000000000000000000000b002';

/** The figures of a quote that adds up: output = amount − provider fee, in destination decimals. */
function figures(s: Shape) {
  const providerFeeRaw = (s.amountInRaw * s.providerFeeBp) / 10_000n;
  const gasFeeRaw = (s.amountInRaw * s.gasFeeBp) / 10_000n;
  const net = s.amountInRaw - providerFeeRaw;
  const scale = s.toDecimals - s.fromDecimals;
  const amountOutRaw = scale >= 0 ? net * 10n ** BigInt(scale) : net / 10n ** BigInt(-scale);
  return { providerFeeRaw, gasFeeRaw, amountOutRaw };
}

function make(s: Shape): { route: BridgeRoute; construct: BridgeConstructResult } {
  const base = route();
  const r: BridgeRoute = {
    ...base,
    from: { ...base.from, symbol: 'TKA', contractAddress: SOURCE_TOKEN, decimals: s.fromDecimals },
    to: { ...base.to, symbol: 'TKA', contractAddress: DESTINATION_TOKEN, decimals: s.toDecimals },
    targets: { ...base.targets, token: SOURCE_TOKEN },
    limits: null,
  };
  const { providerFeeRaw, gasFeeRaw, amountOutRaw } = figures(s);
  const q = quote({
    amountIn: fromRawAmount(s.amountInRaw, s.fromDecimals),
    amountInRaw: String(s.amountInRaw),
    amountOut: fromRawAmount(amountOutRaw, s.toDecimals),
    amountOutRaw: String(amountOutRaw),
    providerFee: fromRawAmount(providerFeeRaw, s.fromDecimals),
    providerFeeRaw: String(providerFeeRaw),
    gasFee: fromRawAmount(gasFeeRaw, s.fromDecimals),
    gasFeeRaw: String(gasFeeRaw),
    gasFeeToken: 'TKA',
  });
  const bundle = buildBridgeBundle({
    route: r,
    wallet: USER,
    amountInRaw: s.amountInRaw,
    amountOutRaw,
    gasFeeRaw,
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
function expectRejectedOnceRehashed(r: BridgeRoute, construct: BridgeConstructResult, amount?: string) {
  construct.bundle.userOp.callData = encodeBatchCallData(construct.bundle.calls);
  construct.bundle = rehashBundle(construct.bundle);
  expect(() => verifyBridgeBatch({ route: r, construct, wallet: USER, amount, now: NOW })).toThrow(
    BatchVerificationError,
  );
}

describe('verifyBridgeBatch, by property', () => {
  it('accepts valid batches with random amounts, decimals and optional parts', async () => {
    await fc.assert(
      fc.property(shape, (s) => {
        const { route: r, construct } = make(s);
        const summary = verifyBridgeBatch({
          route: r,
          construct,
          wallet: USER,
          amount: construct.quote.amountIn,
          now: NOW,
        });
        expect(summary.source.amountRaw).toBe(s.amountInRaw);
        expect(summary.destination.amountRaw).toBe(figures(s).amountOutRaw);
        expect(summary.needsAuthorization).toBe(s.authorizationNonce !== null);
      }),
      { numRuns: 150, seed: 20261122 },
    );
  });

  it('rejects any change to a checked byte of any call, even with the hash recomputed', async () => {
    await fc.assert(
      fc.property(
        shape,
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (s, callPick, bytePick, xor) => {
          const { route: r, construct } = make(s);
          const callIndex = callPick % construct.bundle.calls.length;
          const call = construct.bundle.calls[callIndex]!;
          const positions = checkedBytes(callIndex, (call.data.length - 2) / 2);
          const position = positions[bytePick % positions.length]!;
          const byte = Number.parseInt(call.data.slice(2 + position * 2, 4 + position * 2), 16) ^ xor;
          call.data =
            `${call.data.slice(0, 2 + position * 2)}${byte.toString(16).padStart(2, '0')}${call.data.slice(4 + position * 2)}` as `0x${string}`;
          expectRejectedOnceRehashed(r, construct, construct.quote.amountIn);
        },
      ),
      { numRuns: 200, seed: 7702 },
    );
  });

  it('rejects a change to any bound field of the bundle, quote or route', () => {
    const ZERO = `0x${'0'.repeat(40)}` as const;
    /** Re-points approve and deposit at another bridge, as a service naming its own would. */
    const swapBridge = (c: BridgeConstructResult, r: BridgeRoute, other: `0x${string}`) => {
      r.targets = { ...r.targets, bridge: other };
      c.bundle.calls[0]!.data = setWord(c.bundle.calls[0]!.data, 0, addressWord(other));
      c.bundle.calls[1]!.target = other;
    };
    /** Changes the quote's output and the deposit's outputAmount together. */
    const setOutput = (c: BridgeConstructResult, r: BridgeRoute, out: bigint) => {
      c.quote.amountOutRaw = String(out);
      c.quote.amountOut = fromRawAmount(out, r.to.decimals);
      c.bundle.calls[1]!.data = setWord(c.bundle.calls[1]!.data, 5, out.toString(16));
    };
    const mutations: ((c: BridgeConstructResult, other: `0x${string}`, r: BridgeRoute) => void)[] = [
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
      // Issue 19: hidden code, the bridge, the arithmetic, the paymaster, the fill window, chain 0.
      (c, other) => (c.bundle.userOp.factory = other),
      (c, other) => {
        c.bundle.userOp.factory = `0x7702${'0'.repeat(36)}`;
        c.bundle.userOp.factoryData = other;
      },
      (c, other, r) => swapBridge(c, r, other),
      (c, _other, r) => setOutput(c, r, BigInt(c.quote.amountOutRaw) / 2n),
      (c, _other, r) => {
        // A provider fee of half the amount, the output matching it.
        const fee = BigInt(c.quote.amountInRaw) / 2n;
        c.quote.providerFeeRaw = String(fee);
        c.quote.providerFee = fromRawAmount(fee, r.from.decimals);
        const net = BigInt(c.quote.amountInRaw) - fee;
        const scale = r.to.decimals - r.from.decimals;
        setOutput(c, r, scale >= 0 ? net * 10n ** BigInt(scale) : net / 10n ** BigInt(-scale));
      },
      (c, _other, r) => {
        // A gas fee equal to the amount, the fee transfer matching it.
        const fee = BigInt(c.quote.amountInRaw);
        c.quote.gasFeeRaw = String(fee);
        c.quote.gasFee = fromRawAmount(fee, r.from.decimals);
        const transfer =
          `0xa9059cbb${addressWord(r.targets.treasury)}${fee.toString(16).padStart(64, '0')}` as const;
        if (c.bundle.calls[2]) c.bundle.calls[2].data = transfer;
        else c.bundle.calls.push({ target: r.targets.token, value: '0x0', data: transfer });
      },
      (c) => (c.bundle.userOp.paymaster = ZERO),
      (c) => (c.bundle.userOp.maxFeePerGas = `0x${(10n ** 20n).toString(16)}`),
      (c) => (c.bundle.calls[1]!.data = setWord(c.bundle.calls[1]!.data, 9, (NOW / 1000 + 1).toString(16))),
      (c, _other, r) => {
        r.from = { ...r.from, chainId: 0 };
        c.bundle.chainId = 0;
        if (c.bundle.authorization) c.bundle.authorization.chainId = 0;
      },
    ];
    fc.assert(
      fc.property(
        shape,
        fc.integer({ min: 0, max: mutations.length - 1 }),
        fc.stringMatching(/^0x[0-9a-f]{40}$/),
        (s, which, other) => {
          const { route: r, construct } = make(s);
          mutations[which]!(construct, other as `0x${string}`, r);
          expectRejectedOnceRehashed(r, construct, fromRawAmount(s.amountInRaw, s.fromDecimals));
        },
      ),
      { numRuns: 300, seed: 4337 },
    );
  });

  it('rejects the red-team forgeries whatever the amounts and decimals', () => {
    // Another asset out, the route to its own chain or to one without a SpokePool, a fill window
    // that a late landing closes, a quote priced in the future.
    const mutations: ((c: BridgeConstructResult, r: BridgeRoute) => void)[] = [
      (_c, r) => (r.to = { ...r.to, symbol: 'TKB' }),
      (_c, r) => (r.to = { ...r.to, chainId: r.from.chainId }),
      (_c, r) => (r.to = { ...r.to, chainId: 999_999 }),
      (c) => {
        const at = BigInt(NOW / 1000);
        c.bundle.calls[1]!.data = setWord(c.bundle.calls[1]!.data, 8, at.toString(16));
        c.bundle.calls[1]!.data = setWord(c.bundle.calls[1]!.data, 9, (at + 3600n).toString(16));
      },
      (c) => {
        const at = BigInt(NOW / 1000 + 3600);
        c.bundle.calls[1]!.data = setWord(c.bundle.calls[1]!.data, 8, at.toString(16));
      },
    ];
    fc.assert(
      fc.property(shape, fc.integer({ min: 0, max: mutations.length - 1 }), (s, which) => {
        const { route: r, construct } = make(s);
        mutations[which]!(construct, r);
        expectRejectedOnceRehashed(r, construct, fromRawAmount(s.amountInRaw, s.fromDecimals));
      }),
      { numRuns: 100, seed: 1337 },
    );
  });

  it('parses any route and construct with the compiled schemas exactly as with the schemas', () => {
    type Node = Record<string, unknown> | unknown[];
    /** Every path to a value inside `value`, the root first. */
    const paths = (value: unknown, at: string[] = []): string[][] =>
      typeof value === 'object' && value !== null
        ? [at, ...Object.keys(value).flatMap((key) => paths((value as Node)[key as never], [...at, key]))]
        : [at];
    /** The value with the order of every object's keys made visible, which toEqual ignores. */
    const ordered = (value: unknown): unknown =>
      typeof value === 'object' && value !== null
        ? Object.entries(value).map(([key, entry]) => [key, ordered(entry)])
        : value;
    const near = [
      (text: string) => text.toUpperCase(),
      (text: string) => `${text}g`,
      (text: string) => text.slice(1),
      (text: string) => `${text}\n`,
      (text: string) => ` ${text}`,
    ];
    const change = fc.record({
      which: fc.nat(),
      op: fc.constantFrom('replace', 'near', 'delete', 'add', 'proto', 'reorder'),
      value: fc.anything({ withBigInt: true, withNullPrototype: true }),
      key: fc.string(),
      tweak: fc.integer({ min: 0, max: near.length - 1 }),
    });
    const { route: plainRoute, constructResult: plainConstruct } = bridgeSchemas(false);
    const compiled = verifierSchemas();
    fc.assert(
      fc.property(shape, fc.boolean(), fc.array(change, { maxLength: 3 }), (s, onRoute, changes) => {
        const made = make(s);
        const root: Record<string, unknown> = JSON.parse(
          JSON.stringify(onRoute ? made.route : made.construct),
        );
        for (const { which, op, value, key, tweak } of changes) {
          const all = paths(root);
          const path = all[which % all.length]!;
          const parent = path
            .slice(0, -1)
            .reduce<unknown>((node, k) => (node as Node)[k as never], root) as Node;
          const last = path.at(-1);
          const target = path.length === 0 ? root : (parent as Record<string, unknown>)[last!];
          const node = target as Record<string, unknown>;
          if (op === 'replace' && last !== undefined) (parent as Record<string, unknown>)[last] = value;
          else if (op === 'near' && last !== undefined && typeof target === 'string')
            (parent as Record<string, unknown>)[last] = near[tweak]!(target);
          else if (op === 'delete' && last !== undefined) delete (parent as Record<string, unknown>)[last];
          else if (op === 'add' && typeof target === 'object' && target !== null) node[key] = value;
          else if (op === 'proto' && typeof target === 'object' && target !== null)
            Object.defineProperty(node, '__proto__', {
              value,
              enumerable: true,
              writable: true,
              configurable: true,
            });
          else if (
            op === 'reorder' &&
            typeof target === 'object' &&
            target !== null &&
            !Array.isArray(target)
          )
            for (const k of Object.keys(node).reverse()) {
              const entry = node[k];
              delete node[k];
              node[k] = entry;
            }
        }
        const schema = onRoute ? plainRoute : plainConstruct;
        const fast = (onRoute ? compiled.route : compiled.constructResult).safeParse(root);
        const slow = schema.safeParse(root);
        expect(fast.success).toBe(slow.success);
        if (fast.success && slow.success) expect(ordered(fast.data)).toEqual(ordered(slow.data));
        else expect(fast.error?.issues).toEqual(slow.error?.issues);
      }),
      { numRuns: 1000, seed: 4337 },
    );
  });
});
