import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  keccak256Hex,
  keccak256HexRecurring,
  keccak256HexSharedPrefix,
  keccak256Text,
} from '../../src/onchain/keccak.js';
import { referenceKeccak256 } from '../helpers/keccak-reference.js';

const hexOf = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** Published digests: the empty input, the Keccak team's short texts, and Ethereum's own constants. */
const VECTORS: [string, string][] = [
  ['', 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'],
  ['abc', '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45'],
  [
    'The quick brown fox jumps over the lazy dog',
    '4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15',
  ],
  ['Transfer(address,address,uint256)', 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'],
  [
    'EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)',
    '8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f',
  ],
];

describe('keccak256', () => {
  it.each(VECTORS)('hashes %j to its published digest, as text and as hex', (text, digest) => {
    expect(keccak256Text(text)).toBe(digest);
    expect(keccak256Hex(Buffer.from(text, 'utf8').toString('hex'))).toBe(digest);
    expect(referenceKeccak256(Buffer.from(text, 'utf8'))).toBe(digest);
  });

  it('matches the reference permutation on every length around the block boundaries', () => {
    for (let length = 0; length <= 3 * 136 + 2; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(keccak256Hex(hexOf(bytes))).toBe(referenceKeccak256(bytes));
    }
  });

  it('matches the reference on random inputs, upper and lower case hex alike', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1000 }), fc.boolean(), (bytes, upper) => {
        const hex = hexOf(bytes);
        expect(keccak256Hex(upper ? hex.toUpperCase() : hex)).toBe(referenceKeccak256(bytes));
      }),
      { numRuns: 100, seed: 1600 },
    );
  });

  it('hashes text as its UTF-8 bytes', () => {
    for (const text of ['ERC4337', 'é✓', '\u{1F600}']) {
      expect(keccak256Text(text)).toBe(referenceKeccak256(new TextEncoder().encode(text)));
    }
  });

  it('gives the digest of the whole input when the call data shares its leading blocks with earlier ones', () => {
    // Inputs that agree in their first 272 bytes and part ways after, or one byte before: the state
    // remembered after the shared blocks must never stand in for a prefix it was not computed from.
    const base = Uint8Array.from({ length: 5 * 136 + 7 }, (_, i) => (i * 7 + 3) & 0xff);
    for (const length of [271, 272, 273, 408, 409, base.length]) {
      for (const flip of [-1, 0, 135, 136, 271, 272, length - 1]) {
        const bytes = base.slice(0, length);
        if (flip >= 0 && flip < length) bytes[flip]! ^= 0x80;
        const hex = hexOf(bytes);
        const digest = referenceKeccak256(bytes);
        expect(keccak256HexSharedPrefix(hex), `${length}/${flip}`).toBe(digest);
        expect(keccak256HexSharedPrefix(hex.toUpperCase()), `${length}/${flip} upper`).toBe(digest);
        expect(keccak256HexSharedPrefix(hex), `${length}/${flip} again`).toBe(digest);
      }
    }
  });

  it('remembers each digest under exactly its own input, past the number it keeps', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 700 }), { minLength: 1, maxLength: 200 }), (inputs) => {
        // Every input twice, so that the second lookups meet a memory full of others.
        for (const bytes of [...inputs, ...inputs]) {
          const hex = hexOf(bytes);
          expect(keccak256HexRecurring(hex)).toBe(referenceKeccak256(bytes));
          expect(keccak256HexSharedPrefix(hex)).toBe(referenceKeccak256(bytes));
        }
      }),
      { numRuns: 5, seed: 7702 },
    );
  });
});
