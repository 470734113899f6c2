import fc from 'fast-check';
import { bytesToHex, keccak256, stringToHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { keccak256Hex, keccak256HexJs, keccak256Text } from '../../src/onchain/keccak.js';

describe.each([
  ['WebAssembly', keccak256Hex],
  ['plain JS', keccak256HexJs],
])('keccak256 (%s)', (_, keccak256Hex) => {
  it('matches the known empty-input digest', () => {
    expect(keccak256Hex('')).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  });

  it('matches viem on every length around the block boundaries', () => {
    for (let length = 0; length <= 3 * 136 + 2; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(keccak256Hex(bytesToHex(bytes).slice(2))).toBe(keccak256(bytes).slice(2));
    }
  });

  it('matches viem on random inputs, upper and lower case hex alike', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), fc.boolean(), (bytes, upper) => {
        const hex = bytesToHex(bytes).slice(2);
        expect(keccak256Hex(upper ? hex.toUpperCase() : hex)).toBe(keccak256(bytes).slice(2));
      }),
      { numRuns: 300, seed: 1600 },
    );
  });

  it('grows its memory for inputs larger than it holds', () => {
    const bytes = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7) & 0xff);
    expect(keccak256Hex(bytesToHex(bytes).slice(2))).toBe(keccak256(bytes).slice(2));
  });

  it('hashes text as UTF-8', () => {
    for (const text of ['', 'ERC4337', 'EIP712Domain(string name)', 'é✓']) {
      expect(keccak256Text(text)).toBe(keccak256(stringToHex(text)).slice(2));
    }
  });
});
