/**
 * Batches found by red-teaming the verifier after issue 19: each is built as an attacker who
 * controls the service builds it (call data re-encoded, `userOpHash` recomputed, a quote that adds
 * up), so only the semantic check named stands between it and a signature.
 */

import { describe, expect, it } from 'vitest';
import { route, wethRoute } from '../../fixtures/wire.js';
import {
  ACROSS_SPOKE_POOLS,
  ArgumentError,
  BatchVerificationError,
  type BridgeConstructResult,
  type BridgeRoute,
  ENTRY_POINT_V07,
  ENTRY_POINT_V08,
  MAV2_7702_DELEGATE_V100,
  MAV2_7702_DELEGATE_V110,
  verifyBridgeBatch,
} from '../../src/index.js';
import { rehashBundle } from '../../src/testing/index.js';
import {
  ATTACKER,
  addressWord,
  batchFor,
  forge,
  issuesOf,
  NOW,
  setWord,
  USER,
  unsponsor,
  validConstruct,
} from '../helpers/batches.js';

const BASE_WETH = '0x4200000000000000000000000000000000000006' as const;
const ARBITRUM_USDC = '0xaf88d065e77c8cC2239327C5EDb3A432268e5831' as const;

describe('the route moves one asset', () => {
  it('refuses 1 WETH in for 1 USDC out: the quote adds up one for one across assets', () => {
    // Both tokens well known, decimals right, output = amount − fee in destination decimals:
    // 1e18 wei of WETH becomes 1e6 = 1 USDC, and the relayer that fills keeps the WETH.
    const r: BridgeRoute = route({
      routeId: 'base-weth-to-arbitrum-usdc',
      from: { symbol: 'WETH', chain: 'base', chainId: 8453, contractAddress: BASE_WETH, decimals: 18 },
      to: { symbol: 'USDC', chain: 'arbitrum', chainId: 42161, contractAddress: ARBITRUM_USDC, decimals: 6 },
      targets: { ...route().targets, token: BASE_WETH },
      limits: null,
    });
    const construct = batchFor(r, { amountInRaw: 10n ** 18n, providerFeeRaw: 0n, gasFeeRaw: 10n ** 15n });
    expect(issuesOf(construct, { route: r, amount: '1' })).toEqual(['route.asset']);
  });

  it('refuses USDC in for a token of another name out, known to the table or not', () => {
    // Across pays the relayer back in the input token whatever output it delivered: a relayer of
    // the service's own delivers its worthless token and takes the USDC.
    const token = '0x000000000000000000000000000000000000f00d' as const;
    const r = route({ to: { ...route().to, symbol: 'FOO', contractAddress: token } });
    expect(issuesOf(batchFor(r), { route: r })).toEqual(['route.asset']);
    const listed = { tokens: [{ chainId: 56, address: token, symbol: 'FOO', decimals: 18 }] };
    expect(issuesOf(batchFor(r), { route: r, options: listed })).toEqual(['route.asset']);
  });

  it('still accepts one asset under its other names: bridged USDC, and WETH called ETH', () => {
    const bridged = route({
      from: {
        ...route().from,
        symbol: 'USDbC',
        contractAddress: '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA',
      },
      targets: { ...route().targets, token: '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA' },
    });
    expect(issuesOf(batchFor(bridged), { route: bridged })).toEqual([]);
    const eth = wethRoute();
    expect(issuesOf(batchFor(eth), { route: eth })).toEqual([]);
    // Two tokens the table does not know, of one name: flagged in the summary, not refused.
    const tka = route({
      from: { ...route().from, symbol: 'tka', contractAddress: '0x000000000000000000000000000000000000a001' },
      to: { ...route().to, symbol: 'TKA', contractAddress: '0x000000000000000000000000000000000000b002' },
      targets: { ...route().targets, token: '0x000000000000000000000000000000000000a001' },
    });
    expect(issuesOf(batchFor(tka), { route: tka, now: NOW })).toEqual([]);
  });
});

describe('the deposit can be filled whenever the signed operation lands', () => {
  /** The fixture quote expires at 10:05; the honest service submits before then, a lying one when it likes. */
  const EXPIRES = Date.parse('2026-11-22T10:05:00.000Z') / 1000;
  const deposit = (words: Record<number, bigint | string>) =>
    forge((c) => {
      for (const [index, value] of Object.entries(words)) {
        const word = typeof value === 'bigint' ? value.toString(16) : value;
        c.bundle.calls[1]!.data = setWord(c.bundle.calls[1]!.data, Number(index), word);
      }
    });

  it('refuses a quote timestamp after the quote expires: the operation is held back until then', () => {
    // Priced two hours out with a deadline 30 minutes after that: the old check (deadline at
    // least 10 minutes after expiry) passed it, and landed at 12:05 it leaves 30 s to fill.
    const held = deposit({ 8: BigInt(EXPIRES + 7200), 9: BigInt(EXPIRES + 7230) });
    expect(issuesOf(held)).toEqual(['deposit.quoteTimestamp', 'deposit.fillDeadline']);
  });

  it('refuses a quote timestamp in the future even inside a long-lived quote: the operation waits for it', () => {
    // A quote valid for ten days, priced an hour before that: the signed operation lands then
    // (the deadline within the SpokePool's 6 h of it), when the user, told it failed, may have
    // signed another (a parallel nonce key keeps both valid).
    const later = forge((c) => {
      c.quote.expiresAt = new Date(NOW + 10 * 86_400_000).toISOString();
      const at = BigInt(NOW / 1000 + 10 * 86_400 - 3600);
      c.bundle.calls[1]!.data = setWord(c.bundle.calls[1]!.data, 8, at.toString(16));
      c.bundle.calls[1]!.data = setWord(c.bundle.calls[1]!.data, 9, (at + 11_700n).toString(16));
    });
    expect(issuesOf(later)).toEqual(['deposit.quoteTimestamp']);
    // Five minutes of clock skew are allowed.
    const skewed = deposit({ 8: BigInt(NOW / 1000 + 300) });
    expect(issuesOf(skewed)).toEqual([]);
  });

  it('counts the fill window from the latest the SpokePool takes the deposit, not the quote expiry', () => {
    // Priced now, deadline 20 minutes after expiry: submitted 59 minutes late (the SpokePool
    // still takes it) the deposit has seconds left, and only the refund settles it.
    const now = BigInt(NOW / 1000);
    expect(issuesOf(deposit({ 8: now, 9: BigInt(EXPIRES + 1200) }))).toEqual(['deposit.fillDeadline']);
    // And an exclusive relayer's offset runs from that latest landing too.
    const exclusive = deposit({ 7: addressWord(ATTACKER), 8: now, 9: now + 3600n + 700n, 10: 120n });
    expect(issuesOf(exclusive)).toEqual(['deposit.exclusivity']);
    // Across's own deadline (timestamp plus 3.25 h) with a few seconds of exclusivity still passes.
    const across = deposit({ 7: addressWord(ATTACKER), 8: now, 9: now + 11_700n, 10: 5n });
    expect(issuesOf(across)).toEqual([]);
  });
});

describe('every refusal is a typed error', () => {
  it('a now past what a Date holds is an ArgumentError, not a RangeError', () => {
    for (const now of [1e300, 8.64e15 + 1]) {
      expect(() =>
        verifyBridgeBatch({ route: route(), construct: validConstruct(), wallet: USER, amount: '25.5', now }),
      ).toThrow(ArgumentError);
    }
  });

  it('an expiry margin past what a Date holds refuses the quote, and says so', () => {
    const attempt = () =>
      verifyBridgeBatch(
        { route: route(), construct: validConstruct(), wallet: USER, amount: '25.5', now: NOW },
        { expiryMarginMs: 1e300 },
      );
    expect(attempt).toThrow(BatchVerificationError);
    expect(issuesOf(validConstruct(), { options: { expiryMarginMs: 1e300 } })).toEqual(['quote.expiry']);
  });
});

describe('a symbol is read as a person reads it', () => {
  it('refuses a look-alike of a well-known symbol on an address the table does not list for it', () => {
    // Zero-width and format characters, full-width letters, inner spaces: each shows as "USDC" in
    // the summary, and each escaped the well-known symbol rule, so the route's own word stood.
    // Both sides alike, so that the one-asset rule has nothing to say.
    const fake = '0x000000000000000000000000000000000000fa4e' as const;
    for (const symbol of ['USDC\u200b', '\u2060USDC', 'ＵＳＤＣ', 'US DC', 'USD\u00adC']) {
      const r = route({
        from: { ...route().from, symbol, contractAddress: fake },
        to: { ...route().to, symbol, contractAddress: ATTACKER },
        targets: { ...route().targets, token: fake },
      });
      expect(issuesOf(batchFor(r), { route: r }), JSON.stringify(symbol)).toEqual(['route.tokenAddress']);
    }
  });
});

describe('the deposit goes where a relayer fills it', () => {
  it('refuses a route to its own source chain: no relayer fills it, the refund takes hours', () => {
    const r = route({ to: { ...route().from } });
    expect(issuesOf(batchFor(r), { route: r })).toEqual(['route.destinationChain']);
  });

  it('refuses a destination chain with no Across SpokePool unless the bridges option names one', () => {
    const token = '0x000000000000000000000000000000000000d00d' as const;
    const r = route({ to: { ...route().to, chain: 'nowhere', chainId: 999_999, contractAddress: token } });
    // Named by the partner, chain and token, it is a destination like any other.
    const tokens = [{ chainId: 999_999, address: token, symbol: 'USDC', decimals: 18 }];
    expect(issuesOf(batchFor(r), { route: r, options: { tokens } })).toEqual(['route.destinationChain']);
    const bridges = { 999999: '0x000000000000000000000000000000000000c0de' };
    expect(issuesOf(batchFor(r), { route: r, options: { tokens, bridges } })).toEqual([]);
  });
});

describe('an unsponsored operation cannot name an unbounded prefund', () => {
  it('refuses 2,000 ETH of prefund built from limits and fees each under its own ceiling', () => {
    // No paymaster (the partner allowed it): the wallet prefunds (limits × maxFeePerGas), and
    // preVerificationGas is charged in full, 1,250 ETH here, to the bundler's beneficiary.
    const drain = forge((c) => {
      const op = c.bundle.userOp;
      unsponsor(op);
      op.callGasLimit = `0x${(15_000_000n).toString(16)}`;
      op.verificationGasLimit = `0x${(15_000_000n).toString(16)}`;
      op.preVerificationGas = `0x${(50_000_000n).toString(16)}`;
      op.maxFeePerGas = `0x${(25_000n * 10n ** 9n).toString(16)}`;
      op.maxPriorityFeePerGas = op.maxFeePerGas;
    });
    expect(issuesOf(drain, { options: { requirePaymaster: false } })).toEqual(['userOp.prefund']);
  });

  it('still accepts an unsponsored batch of ordinary gas, and any sponsored one within the ceilings', () => {
    const ordinary = forge((c) => {
      unsponsor(c.bundle.userOp);
      c.bundle.userOp.maxFeePerGas = `0x${(500n * 10n ** 9n).toString(16)}`; // 500 gwei: 0.2 ETH of prefund
    });
    expect(issuesOf(ordinary, { options: { requirePaymaster: false } })).toEqual([]);
    // With a paymaster the wallet prefunds nothing: the paymaster's deposit pays.
    const sponsored = forge((c) => {
      c.bundle.userOp.preVerificationGas = `0x${(50_000_000n).toString(16)}`;
      c.bundle.userOp.maxFeePerGas = `0x${(25_000n * 10n ** 9n).toString(16)}`;
    });
    expect(issuesOf(sponsored)).toEqual([]);
  });
});

describe('a well-known asset the table cannot place is not delivered', () => {
  it('refuses USDC delivered on a chain the table lists no USDC for, at an address only the route names', () => {
    // Blast has a SpokePool but no USDC in the table: the route's "USDC" there is the service's own
    // token, its relayer delivers it and is repaid the user's real USDC on Base.
    const r = route({
      to: { symbol: 'USDC', chain: 'blast', chainId: 81457, contractAddress: ATTACKER, decimals: 6 },
    });
    expect(issuesOf(batchFor(r), { route: r })).toEqual(['route.tokenAddress']);
    // Named by the partner, it is a token like any other.
    const named = { tokens: [{ chainId: 81457, address: ATTACKER, symbol: 'USDC', decimals: 6 }] };
    expect(issuesOf(batchFor(r), { route: r, options: named })).toEqual([]);
  });
});

describe('what the verifier remembers between batches is never taken for another batch', () => {
  const BASE_USDC = route().from.contractAddress;
  /** USDC from Arbitrum to Base: a second source chain, so a second EIP-712 domain. */
  const arbitrum = route({
    routeId: 'arbitrum-usdc-to-base-usdc',
    from: { symbol: 'USDC', chain: 'arbitrum', chainId: 42161, contractAddress: ARBITRUM_USDC, decimals: 6 },
    to: { symbol: 'USDC', chain: 'base', chainId: 8453, contractAddress: BASE_USDC, decimals: 6 },
    targets: { ...route().targets, bridge: ACROSS_SPOKE_POOLS[42161]!, token: ARBITRUM_USDC },
  });
  const MARKER = `0x7702${'0'.repeat(36)}`;

  type Bundle = BridgeConstructResult['bundle'];

  /**
   * Each honest batch verifies; the same batch with the hash of another context (`hashedAs` gives
   * its bundle as hashed there) is refused. In turn A, B, A: each context's remembered values are
   * in place when the other's replay comes.
   */
  function refusesReplays<T>(
    turns: readonly (readonly [BridgeConstructResult, T, BridgeRoute?])[],
    hashedAs: (bundle: Bundle, other: T) => Bundle,
  ): void {
    for (const [honest, other, r = route()] of turns) {
      expect(issuesOf(honest, { route: r })).toEqual([]);
      const { userOpHash } = rehashBundle(hashedAs(structuredClone(honest.bundle), other));
      expect(userOpHash).not.toBe(honest.bundle.userOpHash);
      const replayed = { ...honest, bundle: { ...honest.bundle, userOpHash } };
      expect(issuesOf(replayed, { route: r }), String(other)).toEqual(['userOp.hash']);
    }
  }

  it("refuses a v0.8 operation hashed under another chain's domain, with both domains seen before", () => {
    const onBase = batchFor(route(), {}, { entryPoint: ENTRY_POINT_V08, authorizationNonce: null });
    const onArbitrum = batchFor(arbitrum, {}, { entryPoint: ENTRY_POINT_V08, authorizationNonce: null });
    refusesReplays(
      [
        [onBase, 42161],
        [onArbitrum, 8453, arbitrum],
        [onBase, 42161],
      ],
      (bundle, chainId) => ({ ...bundle, chainId }),
    );
  });

  it('refuses an operation hashed for the other EntryPoint version, with both verified before', () => {
    const v07 = batchFor(route(), {}, { entryPoint: ENTRY_POINT_V07, authorizationNonce: null });
    const v08 = batchFor(route(), {}, { entryPoint: ENTRY_POINT_V08, authorizationNonce: null });
    refusesReplays(
      [
        [v08, ENTRY_POINT_V07],
        [v07, ENTRY_POINT_V08],
        [v08, ENTRY_POINT_V07],
      ],
      (bundle, entryPoint) => ({ ...bundle, entryPoint }),
    );
  });

  it('refuses a v0.8 marker hashed with another delegate in its place, with both delegates seen before', () => {
    const withDelegate = (delegate: `0x${string}`) =>
      forge((c) => (c.bundle.userOp.factory = MARKER), {
        base: batchFor(route(), {}, { entryPoint: ENTRY_POINT_V08, delegate }),
      });
    const v100 = withDelegate(MAV2_7702_DELEGATE_V100);
    const v110 = withDelegate(MAV2_7702_DELEGATE_V110);
    // The EntryPoint hashes the wallet's delegate in place of the marker, from its authorization.
    refusesReplays(
      [
        [v100, MAV2_7702_DELEGATE_V110],
        [v110, MAV2_7702_DELEGATE_V100],
        [v100, MAV2_7702_DELEGATE_V110],
      ],
      (bundle, address) => ({ ...bundle, authorization: { ...bundle.authorization!, address } }),
    );
  });

  it('refuses call data that shares its leading blocks with a verified batch but not its hash', () => {
    // Another amount: the same layout and token in the first blocks of the call data, whose
    // absorbed state the verifier keeps, and a hash that is the first batch's.
    const first = validConstruct();
    expect(issuesOf(first)).toEqual([]);
    const second = batchFor(route(), { amountInRaw: 26_000_000n });
    const leading = (c: BridgeConstructResult) => String(c.bundle.userOp.callData).slice(0, 2 + 2 * 272);
    expect(leading(second)).toBe(leading(first));
    expect(issuesOf(second, { amount: '26' })).toEqual([]);
    const replayed = { ...second, bundle: { ...second.bundle, userOpHash: first.bundle.userOpHash } };
    expect(issuesOf(replayed, { amount: '26' })).toEqual(['userOp.hash']);
  });
});
