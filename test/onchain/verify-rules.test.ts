/**
 * The verifier against a service that lies: every batch here is forged the way an attacker who
 * controls the service would forge it, with the call data re-encoded and `userOpHash` recomputed,
 * so only the semantic check named can stand between it and a signature.
 */

import { getUserOperationHash } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { route } from '../../fixtures/wire.js';
import {
  ACROSS_SPOKE_POOLS,
  ArgumentError,
  BatchVerificationError,
  type BridgeConstructResult,
  type BridgeRoute,
  ENTRY_POINT_V08,
  MAV2_7702_DELEGATE_V100,
  MAV2_7702_DELEGATE_V110,
  verifyBridgeBatch,
  WELL_KNOWN_TOKENS,
} from '../../src/index.js';
import { rehashBundle, userOperationForViem } from '../../src/testing/batch.js';
import {
  ATTACKER,
  addressWord,
  batchFor,
  forge,
  forgeWord,
  issuesOf,
  NOW,
  packedForm,
  setWord,
  USER,
  validConstruct,
} from '../helpers/batches.js';
import { json, makeClient, mockService } from '../helpers/mock-fetch.js';

const ZERO_ADDRESS = `0x${'0'.repeat(40)}`;
const TKA = '0x000000000000000000000000000000000000a001' as const;
const MARKER = `0x7702${'0'.repeat(36)}`;

/** A v0.8 batch of a wallet delegating for the first time, with the initCode given. */
function v08(factory: string | undefined, factoryData?: string): BridgeConstructResult {
  return forge(
    (c) => {
      if (factory !== undefined) c.bundle.userOp.factory = factory;
      if (factoryData !== undefined) c.bundle.userOp.factoryData = factoryData;
    },
    { base: batchFor(route(), {}, { entryPoint: ENTRY_POINT_V08 }) },
  );
}

describe('1, 2: no hidden code before the batch', () => {
  it('refuses any initCode on EntryPoint v0.7, in the RPC and in the packed form', () => {
    for (const [factory, data] of [
      [ATTACKER, '0x'],
      [ATTACKER, '0xdeadbeef'],
      [MARKER, '0x'], // the marker means nothing to v0.7: a call to address 0x7702…
    ] as const) {
      const rpc = forge((c) => {
        c.bundle.userOp.factory = factory;
        c.bundle.userOp.factoryData = data;
      });
      expect(issuesOf(rpc), factory).toEqual(['userOp.initCode']);
      const packed = structuredClone(rpc);
      packed.bundle.userOp = { ...packedForm(packed.bundle.userOp), sender: USER };
      expect(issuesOf(packed), `packed ${factory}`).toEqual(['userOp.initCode']);
    }
  });

  it('refuses factoryData without a factory, and a packed operation with RPC fields beside', () => {
    expect(issuesOf(forge((c) => (c.bundle.userOp.factoryData = '0xdeadbeef')))).toEqual(['userOp.fields']);
    const mixed = validConstruct();
    mixed.bundle.userOp = { ...packedForm(mixed.bundle.userOp), sender: USER, factory: ATTACKER };
    expect(issuesOf(mixed)).toContain('userOp.fields');
  });

  it('accepts v0.8 with the bare marker and an authorization, hashed with the delegate in its place (13)', () => {
    for (const marker of ['0x7702', MARKER]) {
      const construct = v08(marker);
      const verified = verifyBridgeBatch({
        route: route(),
        construct,
        wallet: USER,
        amount: '25.5',
        now: NOW,
      });
      expect(verified.entryPointVersion).toBe('0.8');
      const packed = structuredClone(construct);
      packed.bundle.userOp = { ...packedForm(packed.bundle.userOp), sender: USER };
      expect(issuesOf(packed), `packed ${marker}`).toEqual([]);
    }
  });

  it('the accepted marker is safe: the signed hash holds only for the verified delegate', () => {
    const construct = v08(MARKER);
    const { bundle } = construct;
    const hashWith = (delegate: `0x${string}`) =>
      getUserOperationHash({
        chainId: bundle.chainId,
        entryPointAddress: ENTRY_POINT_V08,
        entryPointVersion: '0.8',
        userOperation: {
          ...userOperationForViem(bundle.userOp),
          authorization: {
            address: delegate,
            chainId: bundle.chainId,
            nonce: 3,
            r: '0x0',
            s: '0x0',
            yParity: 0,
          },
        },
      } as Parameters<typeof getUserOperationHash>[0]);
    expect(hashWith(MAV2_7702_DELEGATE_V100)).toBe(bundle.userOpHash);
    // The EntryPoint puts the wallet's actual delegate into the hash: delegated elsewhere, the
    // signature does not validate, so the marker cannot smuggle in another account's code.
    expect(hashWith(MAV2_7702_DELEGATE_V110)).not.toBe(bundle.userOpHash);
    // And an authorization to another delegate than the one hashed is refused outright.
    const other = forge((c) => (c.bundle.authorization!.address = MAV2_7702_DELEGATE_V110), {
      base: construct,
    });
    expect(issuesOf(other)).toContain('authorization.delegate');
  });

  it('refuses init data after the v0.8 marker (EntryPoint v0.8 calls the wallet with it first)', () => {
    expect(issuesOf(v08(MARKER, '0xdeadbeef'))).toEqual(['userOp.initCode']);
    expect(issuesOf(v08(ATTACKER, '0x'))).toEqual(['userOp.initCode']);
    const packed = v08(MARKER, '0xdeadbeef');
    packed.bundle.userOp = { ...packedForm(packed.bundle.userOp), sender: USER };
    expect(issuesOf(packed)).toEqual(['userOp.initCode']);
  });
});

describe('3: the bridge is the Across SpokePool of the source chain', () => {
  it('refuses a route whose bridge the service named, with approve and deposit pointing at it', () => {
    const r = route({ targets: { ...route().targets, bridge: ATTACKER } });
    expect(issuesOf(batchFor(r), { route: r })).toEqual(['route.bridge']);
  });

  it("refuses another chain's SpokePool", () => {
    const r = route({ targets: { ...route().targets, bridge: ACROSS_SPOKE_POOLS[42161]! } });
    expect(issuesOf(batchFor(r), { route: r })).toEqual(['route.bridge']);
  });

  it('refuses a chain with no known SpokePool unless the bridges option names one', () => {
    const own = '0x00000000000000000000000000000000000c0ffe' as const;
    const r = route({
      from: { ...route().from, chainId: 31337, chain: 'devnet' },
      targets: { ...route().targets, bridge: own },
    });
    const construct = batchFor(r);
    expect(issuesOf(construct, { route: r })).toEqual(['route.bridge']);
    expect(issuesOf(construct, { route: r, options: { bridges: { 31337: own } } })).toEqual([]);
    expect(issuesOf(construct, { route: r, options: { bridges: { 31337: [ATTACKER, own] } } })).toEqual([]);
  });

  it('the bridges option replaces the entry of a chain it names', () => {
    expect(issuesOf(validConstruct(), { options: { bridges: { 8453: ATTACKER } } })).toEqual([
      'route.bridge',
    ]);
    expect(issuesOf(validConstruct(), { options: { bridges: { 1: ATTACKER } } })).toEqual([]);
  });

  it('the table holds the deployed SpokePools the research lists', () => {
    expect(ACROSS_SPOKE_POOLS).toMatchObject({
      1: '0x5c7BCd6E7De5423a257D81B442095A1a6ced35C5',
      10: '0x6f26Bf09B1C792e3228e5467807a900A503c0281',
      56: '0x4e8E101924eDE233C13e2D8622DC8aED2872d505',
      137: '0x9295ee1d8C5b022Be115A2AD3c30C72E34e7F096',
      8453: '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64',
      42161: '0xe35e9842fceaCA96570B734083f4a58e8F7C5f2A',
      59144: '0x7E63A5f1a8F0B4d0934B2f2327DAED3F6bb2ee75',
      11155111: '0x5ef6C01E11889d86803e0B23e3cB3F9E9d97B662',
      84532: '0x82B564983aE7274c86695917BBf8C99ECb6F0F8F',
    });
  });
});

describe('4: the quote adds up', () => {
  it('refuses an output that is half of amount less provider fee, with the deposit matching it', () => {
    const half = batchFor(route(), { amountOutRaw: 12_725_000_000_000_000_000n, providerFeeRaw: 50_000n });
    expect(issuesOf(half)).toEqual(['quote.arithmetic']);
  });

  it('accepts one destination base unit of rounding either way, not two', () => {
    // Tokens the table does not know, so that any decimals may be tried. 25.5e18 − 0.051e18 = 25.449e18 → 25449000 at 6 decimals.
    const figures = { amountInRaw: 25_500_000_000_000_000_000n, providerFeeRaw: 51_000_000_000_000_000n };
    const rebuilt = (out: bigint) => {
      const rr = route({
        from: { ...route().from, symbol: 'TKA', decimals: 18, contractAddress: TKA },
        to: {
          ...route().to,
          symbol: 'TKA',
          decimals: 6,
          contractAddress: '0x000000000000000000000000000000000000b002',
        },
        targets: { ...route().targets, token: TKA },
        limits: null,
      });
      return issuesOf(batchFor(rr, { ...figures, amountOutRaw: out }), { route: rr });
    };
    expect(rebuilt(25_449_000n)).toEqual([]);
    expect(rebuilt(25_448_999n)).toEqual([]);
    expect(rebuilt(25_449_001n)).toEqual([]);
    expect(rebuilt(25_448_998n)).toEqual(['quote.arithmetic']);
    expect(rebuilt(25_449_002n)).toEqual(['quote.arithmetic']);
  });

  it('refuses a provider fee not below the amount, and one whose figures disagree', () => {
    expect(issuesOf(batchFor(route(), { providerFeeRaw: 25_500_000n, amountOutRaw: 0n }))).toContain(
      'quote.arithmetic',
    );
    expect(issuesOf(forge((c) => (c.quote.providerFee = '0.5')))).toEqual(['quote.providerFee']);
  });
});

describe('5: a zero-address paymaster is no paymaster; gas within ceilings', () => {
  it('refuses paymaster 0x0…0 in the RPC form and 20 zero bytes in the packed form', () => {
    const zero = forge((c) => (c.bundle.userOp.paymaster = ZERO_ADDRESS));
    expect(issuesOf(zero)).toEqual(['userOp.paymaster']);
    const packed = structuredClone(zero);
    packed.bundle.userOp = { ...packedForm(packed.bundle.userOp), sender: USER };
    expect(issuesOf(packed)).toEqual(['userOp.paymaster']);
  });

  it('refuses the 20 ETH prefund of the reproduction even when no paymaster is required', () => {
    const drain = forge((c) => {
      c.bundle.userOp.paymaster = ZERO_ADDRESS;
      c.bundle.userOp.verificationGasLimit = '0xf4240'; // 1M
      c.bundle.userOp.maxFeePerGas = `0x${(20_000n * 10n ** 9n * 1000n).toString(16)}`; // 20M gwei
      c.bundle.userOp.maxPriorityFeePerGas = c.bundle.userOp.maxFeePerGas;
    });
    expect(issuesOf(drain)).toEqual(['userOp.paymaster', 'userOp.gasFees', 'userOp.prefund']);
    expect(issuesOf(drain, { options: { requirePaymaster: false } })).toEqual([
      'userOp.gasFees',
      'userOp.prefund',
    ]);
  });

  it('refuses gas limits and fees above the ceilings, sponsored or not', () => {
    const cases: [string, string, string][] = [
      ['verificationGasLimit', 15_000_001n.toString(16), 'userOp.gasLimits'],
      ['callGasLimit', (2n ** 100n).toString(16), 'userOp.gasLimits'],
      ['paymasterVerificationGasLimit', 15_000_001n.toString(16), 'userOp.gasLimits'],
      ['paymasterPostOpGasLimit', 15_000_001n.toString(16), 'userOp.gasLimits'],
      ['preVerificationGas', 50_000_001n.toString(16), 'userOp.gasLimits'],
      ['maxFeePerGas', (25_000n * 10n ** 9n + 1n).toString(16), 'userOp.gasFees'],
      ['maxPriorityFeePerGas', 1_500_000_001n.toString(16), 'userOp.gasFees'],
    ];
    for (const [field, value, check] of cases) {
      expect(issuesOf(forge((c) => (c.bundle.userOp[field] = `0x${value}`))), field).toEqual([check]);
    }
    // At the ceiling is still fine: production sends far less.
    expect(
      issuesOf(forge((c) => (c.bundle.userOp.preVerificationGas = `0x${(50_000_000n).toString(16)}`))),
    ).toEqual([]);
  });
});

describe('6: fees are bounded without options, and by maxFeeBps', () => {
  it('refuses a 10,000 USDC gas fee on a 25.5 USDC bridge', () => {
    expect(issuesOf(batchFor(route(), { gasFeeRaw: 10_000_000_000n }))).toEqual(['quote.gasFeeCeiling']);
  });

  it('refuses a 50 % provider fee whose output matches', () => {
    expect(issuesOf(batchFor(route(), { providerFeeRaw: 12_750_000n }))).toEqual([
      'quote.providerFeeCeiling',
    ]);
  });

  it('refuses a maxAmount batch whose gas fee equals its amount', () => {
    expect(issuesOf(batchFor(route(), { gasFeeRaw: 25_500_000n }), { amount: null })).toEqual([
      'quote.gasFeeCeiling',
    ]);
  });

  it('accepts fees just under the ceilings (small deposits pay large relayer fees)', () => {
    expect(issuesOf(batchFor(route(), { providerFeeRaw: 6_374_999n, gasFeeRaw: 25_499_999n }))).toEqual([]);
    expect(issuesOf(batchFor(route(), { providerFeeRaw: 6_375_000n }))).toEqual(['quote.providerFeeCeiling']);
  });

  it('maxFeeBps turns a higher provider plus gas fee into an issue', () => {
    const construct = validConstruct(); // 0.17 on 25.5: 66.7 bps
    expect(issuesOf(construct, { options: { maxFeeBps: 66 } })).toEqual(['quote.maxFeeBps']);
    expect(issuesOf(construct, { options: { maxFeeBps: 67 } })).toEqual([]);
    expect(issuesOf(construct, { options: { maxFeeBps: 0 } })).toEqual(['quote.maxFeeBps']);
  });
});

describe('7: deposits that can be filled', () => {
  const relayer = '0xcad97616f91872c02ba3553db315db4015cbe850' as const;
  const expiry = Date.parse('2026-11-22T10:05:00.000Z') / 1000;

  it('refuses exclusivity that covers the whole fill window, as offset or timestamp', () => {
    const fillDeadline = NOW / 1000 + 3 * 3600;
    for (const exclusivityParameter of [3 * 3600, fillDeadline, fillDeadline - 599 - 0]) {
      const construct = batchFor(
        route(),
        {},
        { exclusiveRelayer: relayer, exclusivityParameter, fillDeadline },
      );
      expect(issuesOf(construct), String(exclusivityParameter)).toEqual(['deposit.exclusivity']);
    }
  });

  it('accepts a short exclusivity, as the Across API sets it', () => {
    for (const exclusivityParameter of [5, 0, expiry + 60]) {
      const construct = batchFor(route(), {}, { exclusiveRelayer: relayer, exclusivityParameter });
      expect(issuesOf(construct), String(exclusivityParameter)).toEqual([]);
    }
  });

  it('refuses a fill deadline before the latest landing (expiry, or quote timestamp + 1 h) plus the margin', () => {
    expect(issuesOf(batchFor(route(), {}, { fillDeadline: NOW / 1000 + 1 }))).toEqual([
      'deposit.fillDeadline',
    ]);
    expect(issuesOf(batchFor(route(), {}, { fillDeadline: expiry + 599 }))).toEqual(['deposit.fillDeadline']);
    // batchFor prices the quote 30 s before NOW; the SpokePool takes the deposit for an hour after.
    const latest = NOW / 1000 - 30 + 3600;
    expect(issuesOf(batchFor(route(), {}, { fillDeadline: latest + 599 }))).toEqual(['deposit.fillDeadline']);
    expect(issuesOf(batchFor(route(), {}, { fillDeadline: latest + 600 }))).toEqual([]);
    // A quote priced at its expiry: the latest landing is an hour after that.
    const late = { quoteTimestamp: expiry, fillDeadline: expiry + 3600 + 600 };
    expect(issuesOf(batchFor(route(), {}, late))).toEqual([]);
  });
});

describe('8: token facts are held to the well-known table', () => {
  const bsc = route().to;

  it('refuses BSC USDC as 6 decimals (the user would receive dust)', () => {
    const r = route({ to: { ...bsc, decimals: 6 } });
    expect(issuesOf(batchFor(r), { route: r })).toEqual(['route.tokenDecimals']);
  });

  it('refuses Base USDC as 9 decimals ("25.5" would debit 25,500 USDC)', () => {
    const r = route({ from: { ...route().from, decimals: 9 } });
    expect(issuesOf(batchFor(r), { route: r })).toEqual(['route.tokenDecimals']);
  });

  it('refuses an unknown output token that calls itself USDC, in any case', () => {
    for (const symbol of ['USDC', 'usdc', ' USDC']) {
      const r = route({ to: { ...bsc, symbol, contractAddress: ATTACKER } });
      expect(issuesOf(batchFor(r), { route: r }), symbol).toEqual(['route.tokenAddress']);
    }
  });

  it('accepts bridged USDC called USDC, and names it by the table', () => {
    const r = route({
      from: { ...route().from, contractAddress: '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA' },
      targets: { ...route().targets, token: '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA' },
    });
    const construct = batchFor(r);
    const verified = verifyBridgeBatch({ route: r, construct, wallet: USER, now: NOW });
    expect(verified.source).toMatchObject({ symbol: 'USDbC', known: true });
  });

  it('flags a token the table does not know under a symbol that is not well-known there', () => {
    const token = '0x000000000000000000000000000000000000f00d' as const;
    const source = '0x000000000000000000000000000000000000f00e' as const;
    // One asset on both sides: a route from USDC to FOO is refused (route.asset).
    const r = route({
      from: { ...route().from, symbol: 'FOO', contractAddress: source },
      to: { ...bsc, symbol: 'FOO', contractAddress: token },
      targets: { ...route().targets, token: source },
    });
    const construct = batchFor(r);
    const verified = verifyBridgeBatch({ route: r, construct, wallet: USER, now: NOW });
    expect(verified.destination).toMatchObject({ symbol: 'FOO', known: false });
    expect(verified.source).toMatchObject({ symbol: 'FOO', known: false });
    // The tokens option makes it known, with the partner's symbol and aliases.
    const known = verifyBridgeBatch(
      { route: r, construct, wallet: USER, now: NOW },
      { tokens: [{ chainId: 56, address: token, symbol: 'FOOX', decimals: 18, also: ['FOO'] }] },
    );
    expect(known.destination).toMatchObject({ symbol: 'FOOX', known: true });
    expect(
      issuesOf(construct, {
        route: r,
        options: { tokens: [{ chainId: 56, address: token, symbol: 'FOO', decimals: 6 }] },
      }),
    ).toEqual(['route.tokenDecimals']);
  });

  it('the table lists USDC, USDT and WETH with their real decimals', () => {
    const find = (chainId: number, symbol: string) =>
      WELL_KNOWN_TOKENS.filter((t) => t.chainId === chainId && t.symbol === symbol).map((t) => [
        t.address,
        t.decimals,
      ]);
    expect(find(8453, 'USDC')).toEqual([['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 6]]);
    expect(find(56, 'USDC')).toEqual([['0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', 18]]);
    expect(find(56, 'USDT')).toEqual([['0x55d398326f99059fF775485246999027B3197955', 18]]);
    expect(find(137, 'USDC')).toEqual([['0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 6]]);
    expect(find(1, 'WETH')).toEqual([['0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', 18]]);
    for (const token of WELL_KNOWN_TOKENS) expect(ACROSS_SPOKE_POOLS[token.chainId]).toBeDefined();
  });
});

describe('9, 10: chain id 0, limits, now', () => {
  it('refuses chain id 0 on either side', () => {
    const from = route({ from: { ...route().from, chainId: 0 } });
    expect(issuesOf(batchFor(from), { route: from })).toContain('route.chainId');
    const to = route({ to: { ...route().to, chainId: 0 } });
    expect(issuesOf(batchFor(to), { route: to })).toContain('route.chainId');
  });

  it("refuses a maxAmount batch of 10× the route's maximum, with room for limits that moved", () => {
    const max = BigInt(route().limits!.maxAmountRaw);
    expect(issuesOf(batchFor(route(), { amountInRaw: max * 10n }), { amount: null })).toEqual([
      'quote.limits',
    ]);
    expect(issuesOf(batchFor(route(), { amountInRaw: max + max / 5n }), { amount: null })).toEqual([]);
    expect(issuesOf(batchFor(route(), { amountInRaw: max * 2n }), { amount: null })).toEqual([
      'quote.limits',
    ]);
    // Limits unknown (the bridge was unreachable when the route was read): nothing to hold it to.
    const open = route({ limits: null });
    expect(issuesOf(batchFor(open, { amountInRaw: max * 10n }), { route: open, amount: null })).toEqual([]);
  });

  it('refuses a now in seconds', () => {
    expect(() =>
      verifyBridgeBatch({ route: route(), construct: validConstruct(), wallet: USER, now: NOW / 1000 }),
    ).toThrow(ArgumentError);
  });
});

describe('11: what stays', () => {
  it("the target token is the route's source token; the fee is on the source token; a paymaster by default", () => {
    const r = route({ targets: { ...route().targets, token: ATTACKER } });
    expect(issuesOf(batchFor(r), { route: r })).toContain('route.token');
    const fee = forge((c) => (c.bundle.calls[2]!.target = route().to.contractAddress));
    expect(issuesOf(fee)).toEqual(['fee.target']);
    const unsponsored = batchFor(route(), {}, { paymaster: null });
    expect(issuesOf(unsponsored)).toEqual(['userOp.paymaster']);
  });

  it('a forged spender still fails on its own', () => {
    expect(issuesOf(forgeWord(0, 0, addressWord(ATTACKER)))).toEqual(['approve.spender']);
    expect(
      issuesOf(forge((c) => (c.bundle.calls[0]!.data = setWord(c.bundle.calls[0]!.data, 1, '1')))),
    ).toEqual(['approve.amount']);
  });
});

describe("12: the nonce key selects the owner's validation", () => {
  /** The fixture batch with its EntryPoint nonce replaced (`key << 64 | sequence`) and its hash redone. */
  const withNonce = (nonce: bigint) =>
    forge((c) => (c.bundle.userOp.nonce = `0x${nonce.toString(16)}`), { reencode: false });

  it('refuses any key but 1: MAv2 reads the validation from the key, and no other validates the owner (AA23)', () => {
    for (const key of [0n, 2n, 3n, (1n << 40n) | 1n, (1n << 192n) - 1n]) {
      const other = withNonce((key << 64n) | 5n);
      expect(issuesOf(other), `key ${key}`).toEqual(['userOp.nonceKey']);
      // The packed form hashes alike: the hash stays.
      const packed = forge((c) => (c.bundle.userOp = { ...packedForm(c.bundle.userOp), sender: USER }), {
        base: other,
        reencode: false,
        rehash: false,
      });
      expect(issuesOf(packed), `packed, key ${key}`).toEqual(['userOp.nonceKey']);
    }
  });

  it('accepts key 1 with any sequence, as the real vectors carry it (0x10000000000000000)', () => {
    expect(validConstruct().bundle.userOp.nonce).toBe('0x10000000000000000');
    for (const sequence of [0n, 1n, 41n, (1n << 64n) - 1n])
      expect(issuesOf(withNonce((1n << 64n) | sequence)), `sequence ${sequence}`).toEqual([]);
  });

  it('names the key expected and the key that came', () => {
    let error: unknown;
    try {
      verifyBridgeBatch({ route: route(), construct: withNonce(7n), wallet: USER, now: NOW });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BatchVerificationError);
    expect((error as BatchVerificationError).issues).toEqual([
      expect.objectContaining({ check: 'userOp.nonceKey', expected: '1', actual: '0' }),
    ]);
  });
});

describe('bridge.execute against a service that lies', () => {
  const own = privateKeyToAccount(generatePrivateKey());

  /** A service whose routes and batch are both the forger's, consistent with each other. */
  function lyingService(r: BridgeRoute, tamper: (c: BridgeConstructResult) => void = () => {}) {
    const now = Math.floor(Date.now() / 1000);
    const construct = batchFor(
      r,
      {},
      { wallet: own.address, quoteTimestamp: now, fillDeadline: now + 3 * 3600 },
    );
    construct.quote.expiresAt = new Date(Date.now() + 120_000).toISOString();
    tamper(construct);
    return mockService({
      routes: {
        'GET /bridge/routes': () => json({ data: [r] }),
        'POST /bridge/construct/transaction/batch': () => json({ data: construct }),
        'POST /bridge/transaction/batch/send': () =>
          json({ data: { userOpHash: construct.bundle.userOpHash, transferId: 'tr_1' } }),
      },
    });
  }

  const run = (service: ReturnType<typeof mockService>, r: BridgeRoute) =>
    makeClient(service).bridge.execute({ userId: 'u', routeId: r.routeId, amount: '25.5', signer: own });

  it('signs and sends an honest batch', async () => {
    const service = lyingService(route());
    expect((await run(service, route())).transferId).toBe('tr_1');
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
  });

  it('signs nothing for a route naming its own bridge, a zero paymaster or hidden initCode', async () => {
    const attackerBridge = route({ targets: { ...route().targets, bridge: ATTACKER } });
    const cases: [BridgeRoute, (c: BridgeConstructResult) => void, string][] = [
      [attackerBridge, () => {}, 'route.bridge'],
      [
        route(),
        (c) => {
          c.bundle.userOp.paymaster = ZERO_ADDRESS;
          c.bundle = rehashBundle(c.bundle);
        },
        'userOp.paymaster',
      ],
      [
        route(),
        (c) => {
          c.bundle.userOp.factory = ATTACKER;
          c.bundle = rehashBundle(c.bundle);
        },
        'userOp.initCode',
      ],
    ];
    for (const [r, tamper, check] of cases) {
      const service = lyingService(r, tamper);
      const error = await run(service, r).catch((e: unknown) => e);
      expect(error, check).toBeInstanceOf(BatchVerificationError);
      expect((error as BatchVerificationError).issues.map((issue) => issue.check)).toEqual([check]);
      expect(service.count('POST /bridge/transaction/batch/send')).toBe(0);
    }
  });
});

describe('every new issue names what was expected and what came', () => {
  it('with expected and actual values', () => {
    const zero = forge((c) => (c.bundle.userOp.paymaster = ZERO_ADDRESS));
    const devnet = route({ from: { ...route().from, chainId: 31337 } });
    const forged: [BridgeConstructResult, BridgeRoute?][] = [
      [forge((c) => (c.bundle.userOp.factory = ATTACKER))],
      [zero],
      [batchFor(route(), {}, { paymaster: null })],
      [forge((c) => (c.bundle.userOp.maxFeePerGas = '0xffffffffffffff'))],
      [
        batchFor(route({ targets: { ...route().targets, bridge: ATTACKER } })),
        route({ targets: { ...route().targets, bridge: ATTACKER } }),
      ],
      [batchFor(devnet), devnet],
      [batchFor(route(), { amountOutRaw: 1n })],
      [batchFor(route(), { gasFeeRaw: 30_000_000n, providerFeeRaw: 7_000_000n })],
      [batchFor(route(), {}, { fillDeadline: NOW / 1000 + 1 })],
      [
        batchFor(route({ to: { ...route().to, decimals: 6 } })),
        route({ to: { ...route().to, decimals: 6 } }),
      ],
    ];
    for (const [construct, r] of forged) {
      let error: unknown;
      try {
        verifyBridgeBatch({ route: r ?? route(), construct, wallet: USER, now: NOW }, { maxFeeBps: 10 });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(BatchVerificationError);
      for (const issue of (error as BatchVerificationError).issues) {
        expect(issue.expected, issue.check).toBeDefined();
        expect(issue.actual, issue.check).toBeDefined();
      }
    }
  });
});

describe('hostile decimals', () => {
  it('refuses decimals no uint256 can hold, quickly and as an issue', () => {
    const huge = route({ to: { ...route().to, decimals: 1_000_000_000 } });
    const construct = validConstruct();
    expect(issuesOf(construct, { route: huge })).toContain('route.tokenDecimals');
  });
});
