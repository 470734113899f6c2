import fc from 'fast-check';
import { getAddress, type Hex, hashMessage } from 'viem';
import { hashAuthorization } from 'viem/utils';
import { describe, expect, it } from 'vitest';
import { route } from '../../fixtures/wire.js';
import { type BridgeRoute, describeBridgeBatch, verifyBridgeBatch } from '../../src/index.js';
import {
  authorizationHash,
  canonicalJson,
  checksumAddress,
  erc191Digest,
} from '../../src/onchain/describe/digest.js';
import { formatAmount } from '../../src/onchain/describe/format.js';
import { batchFor, NOW, USER } from '../helpers/batches.js';

/*
 * Amounts are exact in every locale, cut only in the safe direction; the machine form and its
 * digest do not depend on the locale; the digests agree with viem's. Other locales than `en` are
 * checked by reading the numbers back, never against a string, so every Node line passes.
 */

const LOCALES = ['en-US', 'de-DE', 'fr-FR', 'hi-IN', 'ja-JP', 'ar-EG'] as const;

/** Reads a number a locale wrote back to a plain decimal, learning its signs from formatToParts. */
function reader(locale: string) {
  const format = new Intl.NumberFormat(locale, { maximumFractionDigits: 1 });
  const parts = format.formatToParts(1234567.5);
  const groups = new Set(parts.filter((part) => part.type === 'group').map((part) => part.value));
  const decimal = parts.find((part) => part.type === 'decimal')!.value;
  const digits = new Map(
    Array.from({ length: 10 }, (_, digit) => [
      format.formatToParts(digit).find((part) => part.type === 'integer')!.value,
      String(digit),
    ]),
  );
  const chars = [...groups, decimal, ...digits.keys()];
  return {
    /** A run of the locale's number characters followed by `suffix`, for finding amounts in a line. */
    amounts(text: string, suffix: string): string[] {
      const set = chars.map((char) => char.replace(/[\\\]^-]/g, '\\$&')).join('');
      return [...text.matchAll(new RegExp(`([${set}]+) ${suffix}`, 'gu'))].map((match) => match[1]!);
    },
    parse(text: string): string {
      let out = '';
      for (const char of text) {
        if (digits.has(char)) out += digits.get(char);
        else if (char === decimal) out += '.';
        else if (!groups.has(char)) throw new Error(`${JSON.stringify(char)} in ${JSON.stringify(text)}`);
      }
      return out;
    },
  };
}

/** A plain decimal as base units of `decimals`; more fraction digits than that is a failure. */
function units(decimal: string, decimals: number): bigint {
  const [whole, fraction = ''] = decimal.split('.');
  expect(fraction.length).toBeLessThanOrEqual(decimals);
  return BigInt(whole! + fraction.padEnd(decimals, '0'));
}

/** What was read back is the amount, or one step of the last shown digit away in the safe direction. */
function expectSafe(read: string, raw: bigint, decimals: number, shown: number, cut: 'received' | 'paid') {
  const keep = Math.min(decimals, shown, 20);
  expect(read.split('.')[1]?.length ?? 0).toBeLessThanOrEqual(keep);
  const back = units(read, decimals);
  if (keep === decimals) return expect(back).toBe(raw);
  const step = 10n ** BigInt(decimals - keep);
  if (cut === 'received') {
    expect(back <= raw && raw - back < step).toBe(true);
  } else {
    expect(back >= raw && back - raw < step).toBe(true);
  }
}

describe('amounts in six locales read back exactly, or cut towards safety', () => {
  it('any amount, decimals and digit count: a minimum truncated, a debit rounded up, no exponent', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 20 }),
        fc.constantFrom(...LOCALES),
        fc.constantFrom('received' as const, 'paid' as const),
        (raw, decimals, shown, locale, cut) => {
          const text = formatAmount(raw, decimals, locale, shown, cut);
          expectSafe(reader(locale).parse(text), raw, decimals, shown, cut);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('the amounts of a described batch, in every locale, with one machine form and one digest', () => {
    const tokenRoute = (fromDecimals: number, toDecimals: number): BridgeRoute =>
      route({
        from: { ...route().from, symbol: 'TKA', decimals: fromDecimals, contractAddress: TOKEN_A },
        to: { ...route().to, symbol: 'TKA', decimals: toDecimals, contractAddress: TOKEN_B },
        targets: { ...route().targets, token: TOKEN_A },
        limits: null,
      });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 0, max: 24 }),
        fc.bigInt({ min: 1n, max: 10n ** 8n }),
        fc.bigInt({ min: 0n, max: 10n ** 24n }),
        fc.integer({ min: 0, max: 20 }),
        (fromDecimals, toDecimals, whole, low, shown) => {
          const r = tokenRoute(fromDecimals, toDecimals);
          const scale = 10n ** BigInt(fromDecimals);
          const verified = verifyBridgeBatch({
            route: r,
            construct: batchFor(r, { amountInRaw: whole * scale + (low % scale) }),
            wallet: USER,
            now: NOW,
          });
          const { source, destination } = verified;
          const digests = new Set<string>();
          for (const locale of LOCALES) {
            const view = describeBridgeBatch(verified, { locale, now: NOW, maxFractionDigits: shown });
            const read = reader(locale);
            const [sent, gas, total] = read.amounts(view.lines[1]!, 'TKA').map(read.parse);
            const [minimum] = read.amounts(view.lines[2]!, 'TKA').map(read.parse);
            expectSafe(sent!, source.amountRaw, source.decimals, shown, 'paid');
            expectSafe(gas!, verified.gasFee.amountRaw, source.decimals, shown, 'paid');
            expectSafe(total!, verified.totalDebit.amountRaw, source.decimals, shown, 'paid');
            expectSafe(minimum!, destination.amountRaw, destination.decimals, shown, 'received');
            digests.add(view.binding.summaryDigest);
            digests.add(
              describeBridgeBatch(verified, { locale, timeZone: 'Asia/Kolkata' }).binding.summaryDigest,
            );
          }
          expect(digests.size).toBe(1);
        },
      ),
      { numRuns: 40 },
    );
  });
});

const TOKEN_A = '0x000000000000000000000000000000000000a001' as const;
const TOKEN_B = '0x000000000000000000000000000000000000b002' as const;

const hex = (length: number) =>
  fc.uint8Array({ minLength: length, maxLength: length }).map((bytes) => Buffer.from(bytes).toString('hex'));

describe("the binding digests agree with viem's", () => {
  it('authorizationHash is hashAuthorization for any chain id, address and nonce', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(0, 1, 127, 128, 255, 256), fc.integer({ min: 0, max: 2 ** 32 })),
        hex(20),
        fc.oneof(fc.constantFrom(0, 1, 127, 128), fc.maxSafeNat()),
        (chainId, address, nonce) => {
          const authorization = { chainId, address: `0x${address}` as Hex, nonce };
          expect(authorizationHash(authorization)).toBe(hashAuthorization(authorization));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('erc191Digest is hashMessage({ raw }), and the checksum is getAddress', () => {
    fc.assert(
      fc.property(hex(32), hex(20), (hash, address) => {
        expect(erc191Digest(`0x${hash}`)).toBe(hashMessage({ raw: `0x${hash}` }));
        expect(checksumAddress(`0x${address}`)).toBe(getAddress(`0x${address}`));
      }),
      { numRuns: 200 },
    );
  });
});

describe('canonical JSON is RFC 8785', () => {
  it("the RFC's own examples: numbers, escapes and key order by UTF-16 code units", () => {
    const input = String.raw`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`;
    expect(canonicalJson(JSON.parse(input))).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
    const sorting = JSON.parse(
      String.raw`{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}`,
    );
    // Read off the text: parsing it again would put the integer-like key "1" first.
    const text = canonicalJson(sorting);
    const values = Object.values(sorting) as string[];
    expect(values.sort((a, b) => text.indexOf(`"${a}"`) - text.indexOf(`"${b}"`))).toEqual([
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ]);
  });

  it('refuses what JCS cannot hold: a lone surrogate, a non-finite number, a non-JSON value', () => {
    expect(() => canonicalJson({ a: '\ud800' })).toThrow(TypeError);
    expect(() => canonicalJson([Number.NaN])).toThrow(TypeError);
    expect(() => canonicalJson({ a: 1n } as never)).toThrow(TypeError);
    expect(() => canonicalJson({ a: new Date(0) } as never)).toThrow(TypeError);
  });
});
