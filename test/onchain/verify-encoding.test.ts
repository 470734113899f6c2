import fc from 'fast-check';
import { type Address, encodeFunctionData, type Hex, parseAbi } from 'viem';
import { describe, expect, it } from 'vitest';
import { isExecuteBatchOf } from '../../src/onchain/hex.js';
import { bundleText } from '../../src/onchain/verified.js';

const accountAbi = parseAbi(['function executeBatch((address target, uint256 value, bytes data)[] calls)']);
const encode = (calls: readonly { target: string; value: bigint; data: string }[]) =>
  encodeFunctionData({
    abi: accountAbi,
    functionName: 'executeBatch',
    args: [calls.map((call) => ({ ...call, target: call.target as Address, data: call.data as Hex }))],
  });

const call = fc.record({
  target: fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
  value: fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
  data: fc.uint8Array({ maxLength: 300 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
});

describe('call data compared word by word with the executeBatch of the calls', () => {
  it("accepts viem's encoding of any calls", () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 5 }), (calls) => {
        expect(isExecuteBatchOf(encode(calls), calls)).toBe(true);
      }),
      { numRuns: 300, seed: 16 },
    );
  });

  it('refuses it once any one character, a byte more or a byte less is changed', () => {
    fc.assert(
      fc.property(
        fc.array(call, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.constantFrom('flip', 'append', 'drop'),
        (calls, where, how) => {
          const encoded = encode(calls);
          const at = 2 + (where % (encoded.length - 2));
          const flipped = encoded[at] === '0' ? '1' : '0';
          const changed =
            how === 'flip'
              ? encoded.slice(0, at) + flipped + encoded.slice(at + 1)
              : how === 'append'
                ? `${encoded}00`
                : encoded.slice(0, -2);
          expect(isExecuteBatchOf(changed, calls)).toBe(false);
        },
      ),
      { numRuns: 300, seed: 17 },
    );
  });

  it('refuses call data of other calls, or of the calls in another order', () => {
    fc.assert(
      fc.property(fc.array(call, { minLength: 2, maxLength: 4 }), (calls) => {
        fc.pre(encode(calls) !== encode([...calls].reverse()));
        expect(isExecuteBatchOf(encode([...calls].reverse()), calls)).toBe(false);
        expect(isExecuteBatchOf(encode(calls.slice(1)), calls)).toBe(false);
      }),
      { numRuns: 200, seed: 18 },
    );
  });

  it('refuses odd-length call data in a call', () => {
    const calls = [{ target: `0x${'11'.repeat(20)}`, value: 0n, data: '0x123' }];
    expect(isExecuteBatchOf(encode([{ ...calls[0]!, data: '0x1230' }]), calls)).toBe(false);
  });
});

describe('the bundle text kept to compare at signing', () => {
  it('holds every other field of the bundle and its user operation, in their order', () => {
    const key = fc.oneof(fc.string(), fc.constantFrom('__proto__', '#calls', '0', '10', 'constructor'));
    const fields = fc.dictionary(key, fc.jsonValue(), { maxKeys: 8 });
    const hash = 'ab'.repeat(32);
    fc.assert(
      fc.property(fields, fields, (bundle, userOp) => {
        // Through JSON, as a bundle arrives: an own `__proto__` is then a field like any other.
        const parsed = JSON.parse(
          JSON.stringify({ ...bundle, calls: [], userOp: { ...userOp, callData: '0x' } }),
        );
        const { calls: _calls, userOp: op, ...rest } = parsed;
        const { callData: _callData, ...opRest } = op;
        const expected = JSON.stringify({ ...rest, userOp: opRest, '#calls': hash, '#callData': hash });
        expect(bundleText(parsed, hash)).toBe(expected);
      }),
      { numRuns: 300, seed: 19 },
    );
  });
});
