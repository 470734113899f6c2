import { describe, expect, it } from 'vitest';
import {
  type ExecuteProgress,
  QuoteChangedError,
  type RequoteReason,
  verifyBridgeBatch,
} from '../../src/index.js';
import { later, untilAborted } from '../helpers/clock.js';
import { requoteSetup, SHORT, type SignerCall, scriptedSigner } from '../helpers/requote.js';

const requoted = (progress: ExecuteProgress[]) =>
  progress.flatMap((p) => (p.step === 'requoted' ? [p] : [])) as Extract<
    ExecuteProgress,
    { step: 'requoted' }
  >[];

describe('bridge.execute compares every rebuild to the baseline', () => {
  it('refuses three small price moves at the one that crosses the tolerance against the baseline (no ratchet)', async () => {
    const run = await requoteSetup({ quoteTtlSec: 3 });
    // Each signing is late, and the provider fee moves 20 bps meanwhile: 10 → 30 → 50 → 70 bps.
    const moveThenLate = (bps: bigint) => async (call: SignerCall) => {
      run.sim.configureRoute(run.routeId, { providerFeeBps: bps });
      await untilAborted(call.context?.signal);
    };
    const { signer, calls } = scriptedSigner(run.wallet, [
      moveThenLate(30n),
      moveThenLate(50n),
      moveThenLate(70n),
    ]);
    const error = await run
      .execute(signer, { requote: { maxAttempts: 5, maxOutputDropBps: 50, maxFeeIncreaseBps: 10_000 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuoteChangedError);
    const changed = error as QuoteChangedError;
    expect(changed.code).toBe('QUOTE_CHANGED');
    // Each move is 20 bps from the one before (within 50); the third is 60 bps from the baseline.
    const steps = requoted(run.progress).map((p) => p.change.amountOut.deltaBps);
    expect(steps).toEqual([-21, -41, -61]);
    expect(changed.change.amountOut.deltaBps).toBe(-61);
    expect(changed.intentId).toBe(run.built()[3]!.intentId);
    expect(changed.message).toMatch(/nothing was signed or sent/);
    expect(calls).toHaveLength(3);
    expect(run.constructs()).toBe(4);
    expect(run.submits()).toBe(0);
  });

  it('a consent slower than the new quote never signs that quote: it rebuilds, and the agreed change is the baseline', async () => {
    const run = await requoteSetup({ quoteTtlSec: 3 });
    const { signer, calls } = scriptedSigner(run.wallet, [
      async (call) => {
        run.sim.configureRoute(run.routeId, { providerFeeBps: 90n });
        await untilAborted(call.context?.signal);
      },
      'fast',
    ]);
    const asked: bigint[] = [];
    const result = await run.execute(signer, {
      requote: {
        maxAttempts: 3,
        maxOutputDropBps: 50,
        maxFeeIncreaseBps: 10_000,
        // The approver takes longer than the 3 s quote lives.
        accept: async (change) => {
          asked.push(change.amountOut.deltaRaw);
          await later(3_500);
          return true;
        },
      },
    });
    const built = run.built();
    expect(asked).toHaveLength(1);
    expect(built).toHaveLength(3);
    expect(calls.map((c) => c.hash)).toEqual([built[0]!.bundle.userOpHash, built[2]!.bundle.userOpHash]);
    expect(result.transferId).toBe(built[2]!.transferId);
    expect(['pending', 'expired']).toContain(run.sim.transfer(built[1]!.transferId).status);
    const reasons: RequoteReason[] = requoted(run.progress).map((p) => p.reason);
    expect(reasons).toEqual(['signer-late', 'expiring']);
    expect(run.submits()).toBe(1);
  });

  it('an explicit baseline anchors the first batch too', async () => {
    const run = await requoteSetup();
    const routes = await run.client.bridge.routes();
    const agreed = verifyBridgeBatch(
      {
        route: routes.find((r) => r.routeId === run.routeId)!,
        construct: await run.client.bridge.construct({
          userId: run.userId,
          routeId: run.routeId,
          amount: '25',
        }),
        wallet: run.wallet.address,
        amount: '25',
      },
      SHORT.verify,
    );
    run.sim.configureRoute(run.routeId, { providerFeeBps: 80n });
    const { signer, calls } = scriptedSigner(run.wallet, []);
    const error = await run
      .execute(signer, { requote: { baseline: agreed, maxFeeIncreaseBps: 20 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuoteChangedError);
    expect((error as QuoteChangedError).baseline).toBe(agreed);
    expect((error as QuoteChangedError).change.providerFee.deltaBps).toBe(70);
    expect(calls).toHaveLength(0);
    expect(run.submits()).toBe(0);
  });

  it('minAmountOut is a floor whatever the baseline: below it, accept is asked and a no ends the call', async () => {
    const run = await requoteSetup();
    const { signer, calls } = scriptedSigner(run.wallet, []);
    let asked = 0;
    const error = await run
      .execute(signer, {
        requote: {
          minAmountOut: '24.99',
          accept: () => {
            asked++;
            return false;
          },
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuoteChangedError);
    expect((error as QuoteChangedError).reasons.join()).toMatch(/floor/);
    expect(asked).toBe(1);
    expect(calls).toHaveLength(0);
  });
});
