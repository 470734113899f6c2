import { getAddress, hashMessage } from 'viem';
import { hashAuthorization } from 'viem/utils';
import { describe, expect, it } from 'vitest';
import { route } from '../../fixtures/wire.js';
import {
  ArgumentError,
  BRIDGE_SUMMARY_SCHEMA,
  type BridgeRoute,
  DEFAULTS,
  describeBridgeBatch,
  type VerifiedBridgeBatch,
  type VerifyBridgeBatchOptions,
  verifyBridgeBatch,
} from '../../src/index.js';
import { polygonToArbitrum, tv1, tv2, tvNow, withDeposit } from '../helpers/across-vectors.js';
import { batchFor, forge, NOW, USER, unsponsor, validConstruct } from '../helpers/batches.js';

/** What ICU puts before AM/PM and between a number and its unit differs by Node line: one space. */
const plain = (text: string) => text.replace(/[\u202f\u00a0]/g, ' ');

function verified(
  construct = validConstruct(),
  extra: { route?: BridgeRoute; options?: VerifyBridgeBatchOptions; amount?: string } = {},
): VerifiedBridgeBatch {
  return verifyBridgeBatch(
    { route: extra.route ?? route(), construct, wallet: USER, amount: extra.amount, now: NOW },
    extra.options,
  );
}

const short = (hash: string) => `${hash.slice(0, 10)}…${hash.slice(-8)}`;
/** An address as the text shortens it, from viem's EIP-55 checksum. */
const shortAddress = (address: string) =>
  `${getAddress(address).slice(0, 6)}…${getAddress(address).slice(-4)}`;

describe('describeBridgeBatch: the text', () => {
  it('writes the facts of a verified batch in the documented order (en-US, UTC)', () => {
    const construct = validConstruct();
    const view = describeBridgeBatch(verified(construct), { locale: 'en-US', timeZone: 'UTC', now: NOW });
    const digest = hashMessage({ raw: construct.bundle.userOpHash });
    expect(plain(view.title)).toBe('Bridge 25.5 USDC from Base to BNB Chain');
    expect(view.lines.map(plain)).toEqual([
      'Bridge 25.5 USDC from Base to BNB Chain, receive at least 25.45 USDC (route base-usdc-to-bsc-usdc via across)',
      'You send 25.5 USDC + 0.12 USDC gas fee = 25.62 USDC total from 0x6969…5f49 on Base',
      'You receive at least 25.45 USDC on BNB Chain, to the same wallet 0x6969…5f49',
      'Provider fee 0.05 USDC (20 bps of the amount; all fees 67 bps)',
      'Quote valid until Nov 22, 2026, 10:05:00 AM UTC (in 5 minutes)',
      'If no relayer fills it by Nov 22, 2026, 1:00:00 PM UTC, the full 25.5 USDC is refunded to this wallet on Base in a later settlement (hours after the deadline)',
      'First use on Base: this wallet is delegated to 0x6900…E139, Alchemy Modular Account v2 (EIP-7702, v1.0.0), authorization nonce 3',
      'Gas sponsored by paymaster 0x2cc0…B633',
      `Signs ${short(digest)} for user operation ${short(construct.bundle.userOpHash)}`,
    ]);
    expect(view.warnings).toEqual([
      {
        code: 'FIRST_DELEGATION',
        text: 'Signing also delegates this wallet on Base to 0x6900…E139 (EIP-7702); it stays delegated after this bridge',
      },
    ]);
  });

  it('uses the documented defaults: en-US, UTC and the current time', () => {
    const batch = verified();
    const given = describeBridgeBatch(batch, {
      locale: DEFAULTS.describe.locale,
      timeZone: DEFAULTS.describe.timeZone,
      now: Date.now(),
    });
    const defaulted = describeBridgeBatch(batch);
    // The quote's relative time counts from now either way; everything before it is the same.
    expect(defaulted.lines.slice(0, 4)).toEqual(given.lines.slice(0, 4));
    expect(defaulted.lines[4]!.split(' (')[0]).toBe(given.lines[4]!.split(' (')[0]);
    expect(defaulted.machine).toEqual(given.machine);
  });

  it('writes times in the zone asked for and says how long is left from `now`', () => {
    const batch = verified();
    const berlin = describeBridgeBatch(batch, { timeZone: 'Europe/Berlin', now: NOW + 4 * 60_000 + 30_000 });
    expect(plain(berlin.lines[4]!)).toBe('Quote valid until Nov 22, 2026, 11:05:00 AM GMT+1 (in 30 seconds)');
    const late = describeBridgeBatch(batch, { now: NOW + 7 * 60_000 });
    expect(plain(late.lines[4]!)).toBe('Quote valid until Nov 22, 2026, 10:05:00 AM UTC (2 minutes ago)');
    expect(late.warnings.map((warning) => warning.code)).toEqual(['FIRST_DELEGATION', 'QUOTE_EXPIRED']);
    // Only the text knows the clock: the machine form is the same at any time.
    expect(late.binding.summaryDigest).toBe(describeBridgeBatch(batch, { now: NOW }).binding.summaryDigest);
  });

  it('a delegated wallet: no delegation line, no FIRST_DELEGATION, no authorization hash', () => {
    const view = describeBridgeBatch(verified(validConstruct({ authorizationNonce: null })), { now: NOW });
    expect(view.lines).toHaveLength(8);
    expect(view.lines.join('\n')).not.toMatch(/delegat/);
    expect(view.warnings).toEqual([]);
    expect(view.binding.authorizationHash).toBeNull();
    expect(view.machine.fields.map((field) => field.id)).not.toContain('authorization');
  });

  it('warns of an unsponsored batch, an exclusive relayer, high fees and unlisted tokens', () => {
    const unsponsored = forge((c) => unsponsor(c.bundle.userOp as unknown as Record<string, unknown>));
    const noPaymaster = describeBridgeBatch(verified(unsponsored, { options: { requirePaymaster: false } }), {
      now: NOW,
    });
    expect(noPaymaster.warnings.map((w) => w.code)).toEqual(['FIRST_DELEGATION', 'NO_PAYMASTER']);
    expect(noPaymaster.lines[7]).toBe('No paymaster: this wallet pays the network gas on Base itself');

    const relayer = '0xcad97616f91872c02ba3553db315db4015cbe850' as const;
    const exclusive = batchFor(route(), {}, { exclusiveRelayer: relayer, exclusivityParameter: 5 });
    const relayed = describeBridgeBatch(verified(exclusive), { now: NOW });
    expect(relayed.warnings.find((w) => w.code === 'EXCLUSIVE_RELAYER')?.text).toBe(
      `Only relayer ${shortAddress(relayer)} may fill this deposit during its exclusivity window`,
    );

    const expensive = describeBridgeBatch(verified(), { now: NOW, highFeeBps: 50 });
    expect(expensive.warnings.find((w) => w.code === 'HIGH_FEE')?.text).toBe(
      'Fees are 0.67% of the amount, above 0.5%',
    );
    // A policy of the caller, not a fact of the batch: the machine form does not carry it.
    expect(expensive.machine.warnings).toEqual([{ code: 'FIRST_DELEGATION' }]);

    const tka = route({
      from: { ...route().from, symbol: 'TKA', contractAddress: '0x000000000000000000000000000000000000a001' },
      to: { ...route().to, symbol: 'TKA', contractAddress: '0x000000000000000000000000000000000000b002' },
      targets: { ...route().targets, token: '0x000000000000000000000000000000000000a001' },
    });
    const unlisted = describeBridgeBatch(verified(batchFor(tka), { route: tka }), { now: NOW });
    expect(unlisted.warnings.find((w) => w.code === 'UNKNOWN_TOKEN')?.text).toBe(
      `TKA on Base (${shortAddress('0x000000000000000000000000000000000000a001')}) is not in the SDK's token table: only the route vouches for its symbol; ` +
        `TKA on BNB Chain (${shortAddress('0x000000000000000000000000000000000000b002')}) is not in the SDK's token table: only the route vouches for its symbol`,
    );
  });

  it('names a chain by its id, never by the route, and shows what the route adds with hidden characters written out', () => {
    const own = '0x00000000000000000000000000000000000c0ffe' as const;
    const r = route({
      routeId: 'dev\u202eroute',
      from: { ...route().from, chainId: 31337, chain: 'dev\u0007net' },
      to: { ...route().to, chain: 'ethereum' },
      targets: { ...route().targets, bridge: own },
    });
    const view = describeBridgeBatch(
      verified(batchFor(r), { route: r, options: { bridges: { 31337: own } } }),
      {
        now: NOW,
      },
    );
    expect(view.title).toBe('Bridge 25.5 USDC from dev\\u{7}net (chain 31337) to BNB Chain');
    expect(view.lines[0]).toContain('route dev\\u{202e}route via across');
    expect(view.warnings.map((w) => w.code)).toContain('UNKNOWN_CHAIN');
  });
});

describe('describeBridgeBatch: only a verified batch, with checked options', () => {
  it('refuses a look-alike of a verified batch: a spread copy, a clone, a prototype child', () => {
    const batch = verified();
    for (const lookAlike of [{ ...batch }, structuredClone({ ...batch }), Object.create(batch)]) {
      expect(() => describeBridgeBatch(lookAlike)).toThrow(ArgumentError);
    }
    expect(() => describeBridgeBatch(undefined as never)).toThrow(
      /must be a batch verifyBridgeBatch returned/,
    );
  });

  it('refuses an unknown locale, a bad time zone, a time in seconds, a digit count out of range', () => {
    const batch = verified();
    const issues = (options: object) => {
      try {
        describeBridgeBatch(batch, options);
      } catch (error) {
        expect(error).toBeInstanceOf(ArgumentError);
        return (error as ArgumentError).issues.map((issue) => issue.path);
      }
      return [];
    };
    expect(issues({ locale: 'zz-ZZ' })).toEqual(['locale']);
    expect(issues({ locale: 'en_US' })).toEqual(['locale']);
    expect(issues({ locale: 42 })).toEqual(['locale']);
    expect(issues({ timeZone: 'Mars/Olympus' })).toEqual(['timeZone']);
    expect(issues({ now: NOW / 1000 })).toEqual(['now']);
    expect(issues({ maxFractionDigits: 21, highFeeBps: -1 })).toEqual(['maxFractionDigits', 'highFeeBps']);
    expect(issues({ locale: 'de-DE', timeZone: 'Asia/Kolkata', now: new Date(NOW) })).toEqual([]);
    expect(() => describeBridgeBatch(batch, 'en' as never)).toThrow(ArgumentError);
  });
});

describe('describeBridgeBatch: the binding', () => {
  it("equals viem's hashMessage({ raw }) and hashAuthorization, and the verified batch's digest", () => {
    const construct = validConstruct();
    const batch = verified(construct);
    const { binding } = describeBridgeBatch(batch, { now: NOW });
    expect(binding.userOpHash).toBe(construct.bundle.userOpHash);
    expect(binding.erc191Digest).toBe(hashMessage({ raw: construct.bundle.userOpHash }));
    expect(binding.authorizationHash).toBe(hashAuthorization(construct.bundle.authorization!));
    expect(binding.bundleDigest).toBe(batch.digest);
    expect(binding.summaryDigest).toMatch(/^0x[0-9a-f]{64}$/);
  });
});

describe('describeBridgeBatch: the real Across deposits (TV-1, TV-2)', () => {
  const describeVector = (data: string) =>
    describeBridgeBatch(
      verifyBridgeBatch({
        route: polygonToArbitrum,
        construct: withDeposit(data),
        wallet: USER,
        amount: '0.130592',
        now: tvNow,
      }),
      { now: tvNow },
    );
  const value = (view: ReturnType<typeof describeVector>, id: string) =>
    view.machine.fields.find((field) => field.id === id)?.value;

  it('both produce the facts of the deposit: 130592 → at least 107647 to chain 42161 by 1718657594', () => {
    for (const view of [describeVector(tv1), describeVector(tv2)]) {
      expect(view.title).toBe('Bridge 0.130592 USDC from Polygon to Arbitrum One');
      expect(view.lines[1]).toBe(
        'You send 0.130592 USDC + 0 USDC gas fee = 0.130592 USDC total from 0x6969…5f49 on Polygon',
      );
      expect(view.lines[2]).toBe(
        'You receive at least 0.107647 USDC on Arbitrum One, to the same wallet 0x6969…5f49',
      );
      expect(plain(view.lines[5]!)).toMatch(
        /^If no relayer fills it by Jun 17, 2024, 8:53:14 PM UTC, the full 0\.130592 USDC/,
      );
      expect(value(view, 'amountIn')).toMatchObject({ raw: '130592', decimals: 6, chainId: 137 });
      expect(value(view, 'amountOut')).toMatchObject({ raw: '107647', decimals: 6, chainId: 42161 });
      expect(value(view, 'toChain')).toBe(42161);
      expect(value(view, 'fillDeadline')).toBe(new Date(1718657594 * 1000).toISOString());
      expect(value(view, 'recipient')).toBe('0x6969174FD72466430a46e18234D0b530c9FD5f49');
      // Across kept 17.57 % of this small deposit: worth a warning by default.
      expect(view.warnings.map((w) => w.code)).toContain('HIGH_FEE');
    }
    expect(value(describeVector(tv1), 'depositFunction')).toBe('depositV3');
    expect(value(describeVector(tv1), 'integratorSuffix')).toBe('0x1dc0de0000');
    expect(value(describeVector(tv2), 'depositFunction')).toBe('deposit');
  });
});

describe('describeBridgeBatch: the machine form', () => {
  it('is versioned, in ERC-7730 field formats, with full checksummed addresses', () => {
    const { machine } = describeBridgeBatch(verified(), { now: NOW });
    expect(machine.schema).toBe(BRIDGE_SUMMARY_SCHEMA);
    expect(BRIDGE_SUMMARY_SCHEMA).toBe('partner-s2s/bridge-summary@1');
    const formats = new Set(['tokenAmount', 'chainId', 'addressName', 'date', 'unit', 'raw', 'enum']);
    for (const field of machine.fields) expect(formats.has(field.format), field.id).toBe(true);
    const ids = machine.fields.map((field) => field.id);
    expect(ids.slice(0, 11)).toEqual([
      'amountIn',
      'gasFee',
      'gasFeeRecipient',
      'totalDebit',
      'fromChain',
      'sender',
      'amountOut',
      'toChain',
      'recipient',
      'providerFee',
      'feeBps',
    ]);
    for (const id of machine.interpolatedIntent.match(/\{(\w+)\}/g)!) expect(ids).toContain(id.slice(1, -1));
    const delegate = machine.fields.find((field) => field.id === 'delegate');
    expect(delegate?.value).toBe('0x69007702764179f14F51cdce752f4f775d74E139');
    expect(machine.fields.find((field) => field.id === 'amountOut')?.value).toEqual({
      raw: '25450000000000000000',
      decimals: 18,
      symbol: 'USDC',
      token: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
      chainId: 56,
      known: true,
    });
    // JSON as it is: no bigint, no Date, nothing a JSON round trip changes.
    expect(JSON.parse(JSON.stringify(machine))).toEqual(machine);
  });
});
