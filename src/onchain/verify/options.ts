// The verifier's bounds (gas ceilings, fill margins, limits room) and the reading of its options
// and clock, checked once before any batch is looked at.
import { DEFAULTS } from '../../core/defaults.js';
import { ArgumentError } from '../../errors/client-errors.js';
import { ADDRESS_PATTERN, type Address } from '../../schemas/common.js';
import { bridgeIndex, type KnownToken, type TokenIndex, tokenIndex } from '../tables.js';

import type { VerifyBridgeBatchOptions } from './types.js';

export const ZERO_WORD = '0'.repeat(64);
export const MAX_UINT32 = 0xffffffffn;
/** Before 2001-09-09 in milliseconds, or any time at all in seconds: never a real `now`. */
export const MIN_NOW_MS = 1e12;
export const MAX_DATE_MS = 8.64e15;
/**
 * Gas ceilings far above anything a bridge batch needs (approve, deposit and transfer take a few
 * hundred thousand gas) but low enough that no operation can name an unbounded prefund: each
 * execution or validation limit at most 15M gas (half an Ethereum block), preVerificationGas at
 * most 50M (on L2s it carries the L1 data cost in L2 gas: a few million in an L1 fee spike), and
 * fees at most 25,000 gwei (Polygon's worst spikes reached a few thousand).
 */
export const GAS_CEILINGS = Object.freeze({
  gasLimit: 15_000_000n,
  preVerificationGas: 50_000_000n,
  maxFeePerGas: 25_000n * 10n ** 9n,
  /**
   * What an unsponsored operation may make the wallet prefund in wei (all limits × maxFeePerGas):
   * one native unit, a thousand times an ordinary batch at 1,000 gwei. The ceilings above, each
   * sane alone, multiply to 2,000 ETH, and preVerificationGas is charged whether used or not.
   */
  walletPrefund: 10n ** 18n,
});
/**
 * The fill window a deposit must leave: its fill deadline at least this long after the quote
 * expires, and an exclusive relayer's exclusivity over at least this long before the deadline.
 * Across sets deadlines hours out (TV-1: 6 h) and exclusivity of seconds.
 */
export const FILL_MARGIN_SEC = 600n;
/**
 * The SpokePool takes a deposit until its quote timestamp is this old (`depositQuoteTimeBuffer`,
 * deployed as one hour): whoever holds the signed operation can land it that late, whatever the
 * quote's expiry says.
 */
export const QUOTE_TIME_BUFFER_SEC = 3600n;
/** How far ahead of `now` a quote timestamp may be: the partner's clock may lag the chain's. */
export const CLOCK_SKEW_SEC = 300n;
/** Limits move with relayer liquidity after the route was read: this much room either way. */
export const LIMITS_ROOM_DIVISOR = 4n;
export const MAX_DECIMALS = 77;
/** Across reads exclusivity parameters up to this as an offset from the deposit time. */
export const MAX_EXCLUSIVITY_PERIOD_SEC = 31_536_000n;

export interface ReadOptions {
  entryPoints: readonly string[];
  delegates: readonly string[];
  allowIntegratorSuffix: boolean;
  requirePaymaster: boolean;
  expiryMarginMs: number;
  maxFeeBps: number | undefined;
  bridges: ReadonlyMap<number, readonly string[]>;
  tokens: TokenIndex;
}

export const CHAIN_ID = /^[1-9]\d*$/;

export function isAddress(value: unknown): value is string {
  return typeof value === 'string' && ADDRESS_PATTERN.test(value);
}

/** The options with their defaults; a value of the wrong kind is an error, never a looser check. */
export function readVerifyOptions(options: VerifyBridgeBatchOptions | undefined): ReadOptions {
  const problems: { path: string; message: string }[] = [];
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new ArgumentError({
      where: 'verifyBridgeBatch',
      issues: [{ path: 'options', message: 'must be an object' }],
    });
  }
  const addresses = (name: 'entryPoints' | 'delegates', fallback: readonly Address[]) => {
    const value = options?.[name];
    if (value === undefined) return fallback;
    if (!Array.isArray(value) || !value.every(isAddress)) {
      problems.push({ path: name, message: 'must be an array of 20-byte hex addresses' });
      return [];
    }
    return [...value];
  };
  const flag = (name: 'allowIntegratorSuffix' | 'requirePaymaster', fallback: boolean) => {
    const value = options?.[name];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') problems.push({ path: name, message: 'must be true or false' });
    return value === true;
  };
  const defaults = DEFAULTS.verifier;
  const read: ReadOptions = {
    entryPoints: addresses('entryPoints', defaults.entryPoints),
    delegates: addresses('delegates', defaults.delegates),
    allowIntegratorSuffix: flag('allowIntegratorSuffix', defaults.allowIntegratorSuffix),
    requirePaymaster: flag('requirePaymaster', defaults.requirePaymaster),
    expiryMarginMs: options?.expiryMarginMs ?? defaults.expiryMarginMs,
    maxFeeBps: options?.maxFeeBps,
    bridges: bridgeIndex(readBridges(options?.bridges, problems)),
    tokens: tokenIndex(readTokens(options?.tokens, problems)),
  };
  if (
    typeof read.expiryMarginMs !== 'number' ||
    !(read.expiryMarginMs >= 0) ||
    !Number.isFinite(read.expiryMarginMs)
  ) {
    problems.push({ path: 'expiryMarginMs', message: 'must be a non-negative number of milliseconds' });
  }
  const bps = read.maxFeeBps;
  if (bps !== undefined && !(Number.isInteger(bps) && bps >= 0 && bps <= 10_000)) {
    problems.push({ path: 'maxFeeBps', message: 'must be a whole number of basis points from 0 to 10000' });
  }
  if (problems.length > 0) throw new ArgumentError({ where: 'verifyBridgeBatch', issues: problems });
  return read;
}

export function readBridges(
  value: VerifyBridgeBatchOptions['bridges'],
  problems: { path: string; message: string }[],
): Map<number, readonly string[]> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push({ path: 'bridges', message: 'must be an object of chain id → SpokePool address(es)' });
    return undefined;
  }
  const map = new Map<number, readonly string[]>();
  for (const [key, entry] of Object.entries(value)) {
    const list: unknown[] = Array.isArray(entry) ? entry : [entry];
    if (
      !CHAIN_ID.test(key) ||
      !Number.isSafeInteger(Number(key)) ||
      list.length === 0 ||
      !list.every(isAddress)
    ) {
      problems.push({
        path: `bridges.${key}`,
        message: 'must map a positive chain id to a 20-byte hex address or an array of them',
      });
      continue;
    }
    map.set(Number(key), list as string[]);
  }
  return map;
}

export function readTokens(
  value: VerifyBridgeBatchOptions['tokens'],
  problems: { path: string; message: string }[],
): KnownToken[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    problems.push({ path: 'tokens', message: 'must be an array of { chainId, address, symbol, decimals }' });
    return undefined;
  }
  const tokens: KnownToken[] = [];
  value.forEach((entry: unknown, index) => {
    const token = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const { chainId, address, symbol, decimals, also } = token;
    if (
      !(Number.isSafeInteger(chainId) && (chainId as number) > 0) ||
      !isAddress(address) ||
      typeof symbol !== 'string' ||
      symbol.trim() === '' ||
      !(Number.isInteger(decimals) && (decimals as number) >= 0 && (decimals as number) <= 255) ||
      (also !== undefined && !(Array.isArray(also) && also.every((item) => typeof item === 'string')))
    ) {
      problems.push({
        path: `tokens.${index}`,
        message: 'must be { chainId: positive integer, address, symbol, decimals: 0–255, also?: string[] }',
      });
      return;
    }
    tokens.push({
      chainId: chainId as number,
      address: address as Address,
      symbol,
      decimals: decimals as number,
      ...(also ? { also: [...(also as string[])] } : {}),
    });
  });
  return tokens;
}

export function toMs(now: Date | number | undefined): number {
  if (now === undefined) return Date.now();
  if (typeof now === 'number') return now;
  return now instanceof Date ? now.getTime() : Number.NaN;
}
