import { describe, expect, it } from 'vitest';
import { ArgumentError, fromRawAmount, toRawAmount } from '../src/index.js';

describe('amount helpers', () => {
  it('converts decimals to base units per token side', () => {
    expect(toRawAmount('25.5', { decimals: 6 })).toBe(25_500_000n);
    expect(toRawAmount('25.5', 18)).toBe(25_500_000_000_000_000_000n);
    expect(toRawAmount('0.000001', 6)).toBe(1n);
    expect(toRawAmount('7', 0)).toBe(7n);
    expect(toRawAmount('1.10', 1)).toBe(11n);
    expect(toRawAmount(0.1, 18)).toBe(100_000_000_000_000_000n);
    expect(toRawAmount('123456789012345678901234567890.123456789012345678', 18)).toBe(
      123456789012345678901234567890123456789012345678n,
    );
  });

  it('never rounds', () => {
    expect(() => toRawAmount('0.0000001', 6)).toThrow(ArgumentError);
    expect(() => toRawAmount('abc', 6)).toThrow(ArgumentError);
    expect(() => toRawAmount('1', -1)).toThrow(ArgumentError);
  });

  it('converts base units back without trailing zeros', () => {
    expect(fromRawAmount(25_500_000n, 6)).toBe('25.5');
    expect(fromRawAmount('25450000000000000000', { decimals: 18 })).toBe('25.45');
    expect(fromRawAmount(1n, 6)).toBe('0.000001');
    expect(fromRawAmount(0n, 6)).toBe('0');
    expect(fromRawAmount(1_000_000n, 6)).toBe('1');
    expect(fromRawAmount(-1_500_000n, 6)).toBe('-1.5');
    expect(fromRawAmount(42n, 0)).toBe('42');
    expect(() => fromRawAmount('1.5', 6)).toThrow(ArgumentError);
  });

  it('round-trips', () => {
    for (const [amount, decimals] of [
      ['0.000001', 6],
      ['999999.999999', 6],
      ['1', 18],
      ['0.123456789012345678', 18],
    ] as const) {
      expect(fromRawAmount(toRawAmount(amount, decimals), decimals)).toBe(amount);
    }
  });
});
