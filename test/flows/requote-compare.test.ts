import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { ArgumentError, compareQuotes, IntentNotFoundError } from '../../src/index.js';
import { account, bridgeService } from '../helpers/bridge-service.js';
import { leaping, useTestClock } from '../helpers/clock.js';
import { envelopeError, json, makeClient } from '../helpers/mock-fetch.js';

/** A batch's figures: 25 USDC (6 decimals) in, `out` raw of an 18-decimal token out. */
function batch(out: bigint, providerFee: bigint, gasFee: bigint) {
  const amount = (raw: bigint) => ({ amount: String(raw), amountRaw: raw });
  return {
    wallet: account.address,
    source: { chainId: 8453, token: '0xa', amountRaw: 25_000_000n, decimals: 6 },
    destination: { chainId: 56, token: '0xb', decimals: 18, ...amount(out) },
    providerFee: amount(providerFee),
    gasFee: amount(gasFee),
    fillDeadline: new Date(0),
    quoteExpiresAt: new Date(0),
  };
}

describe('compareQuotes', () => {
  it('measures each figure against the baseline, in whole bps rounded towards refusing', () => {
    const base = batch(10_000n, 25_000n, 120_000n);
    const change = compareQuotes(base, batch(9_999n, 25_001n, 120_000n));
    // A drop of 1 in 10,000 is exactly 1 bps; a fee rise of 1 raw in 25,000,000 rounds up to 1 bps.
    expect(change.amountOut).toMatchObject({ deltaRaw: -1n, deltaBps: -1 });
    expect(change.providerFee).toMatchObject({ deltaRaw: 1n, deltaBps: 1 });
    expect(change.gasFee).toMatchObject({ deltaRaw: 0n, deltaBps: 0 });
    // A rise of what is received rounds towards zero, never in the partner's favour.
    expect(compareQuotes(base, batch(10_001n, 25_000n, 120_000n)).amountOut.deltaBps).toBe(1);
    expect(compareQuotes(batch(30_000n, 0n, 0n), batch(30_001n, 0n, 0n)).amountOut.deltaBps).toBe(0);
    expect(compareQuotes(batch(30_000n, 0n, 0n), batch(29_999n, 0n, 0n)).amountOut.deltaBps).toBe(-1);
  });

  it('refuses what is not a batch with an ArgumentError naming each missing figure', () => {
    const error = (() => {
      try {
        compareQuotes({} as never, batch(1n, 0n, 0n));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as ArgumentError).issues.map((i) => i.path)).toContain('baseline.destination.amountRaw');
  });

  it('property: the bps never understate a drop or a fee rise', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 7n }),
        (baseOut, nextOut, fee) => {
          const change = compareQuotes(batch(baseOut, 0n, 0n), batch(nextOut, fee, 0n));
          // deltaBps / 10,000 ≤ exact ratio for the amount out, ≥ for the fee.
          expect(BigInt(change.amountOut.deltaBps) * baseOut <= (nextOut - baseOut) * 10_000n).toBe(true);
          expect(BigInt(change.providerFee.deltaBps) * 25_000_000n >= fee * 10_000n).toBe(true);
        },
      ),
    );
  });
});

describe('bridge.execute tells an expired intent by the transfer read, not the message', () => {
  it('INTENT_NOT_FOUND saying "expired" while the transfer reads pending is not rebuilt', async () => {
    const service = bridgeService({
      'POST /bridge/transaction/batch/send': () =>
        envelopeError(400, 'INTENT_NOT_FOUND', 'the intent expired'),
      'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'pending' }) }),
    });
    // The reads that look for the outcome are seconds apart: on the test's clock, no real wait.
    useTestClock();
    const error = await leaping(
      makeClient(service).bridge.execute({
        userId: 'user-1',
        routeId: 'base-usdc-to-bsc-usdc',
        amount: '25.5',
        signer: account,
        requote: { maxAttempts: 2 },
      }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IntentNotFoundError);
    expect(service.count('POST /bridge/construct/transaction/batch')).toBe(1);
  });
});
