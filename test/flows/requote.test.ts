import { describe, expect, it } from 'vitest';
import {
  ArgumentError,
  createTransferTracker,
  MemoryTrackerStore,
  PartnerClient,
  RequoteExhaustedError,
  SigningTooSlowError,
} from '../../src/index.js';
import { later } from '../helpers/clock.js';
import { CONSTRUCT, requoteSetup, SHORT, scriptedSigner } from '../helpers/requote.js';

describe('bridge.execute with a slow signer, over HTTP against the simulator', () => {
  it('aborts a signer slower than the quote at its deadline, never sends its late signature, and submits the rebuilt intent', async () => {
    const run = await requoteSetup();
    const { signer, calls } = scriptedSigner(run.wallet, ['late', 'fast']);
    const result = await run.execute(signer, { requote: { maxAttempts: 2 } });
    const [first, second] = run.built();
    expect(calls).toHaveLength(2);
    // The first signer was told, by its signal, that its time was up.
    expect(calls[0]!.context!.signal.aborted).toBe(true);
    expect(calls[0]!.hash).toBe(first!.bundle.userOpHash);
    // The summary it was shown is of the batch it was asked to sign.
    expect(calls[1]!.context!.summary).toMatchObject({ binding: { userOpHash: second!.bundle.userOpHash } });
    expect(calls[1]!.context!.summary.lines.length).toBeGreaterThan(0);
    expect(run.constructs()).toBeLessThanOrEqual(2);
    expect(run.submits()).toBe(1);
    expect(result.transferId).toBe(second!.transferId);
    expect(run.sim.transfer(second!.transferId).status).toBe('submitted');
    // The late signature reached nothing: the old intent's transfer was never submitted.
    expect(['pending', 'expired']).toContain(run.sim.transfer(first!.transferId).status);
    expect(run.progress.find((p) => p.step === 'requoted')).toMatchObject({
      attempt: 1,
      reason: 'signer-late',
      change: { amountOut: { deltaRaw: 0n } },
    });
  });

  it('does not call a signer whose learned budget (shared by withOptions) exceeds the time left, and rebuilds', async () => {
    const run = await requoteSetup();
    const slow = scriptedSigner(run.wallet, [() => later(600), () => later(600), () => later(600)]);
    for (let i = 0; i < 3; i++) {
      await run.client.bridge.execute({
        userId: run.userId,
        routeId: run.routeId,
        amount: '5',
        signer: slow.signer,
        ...SHORT,
      });
    }
    expect(slow.calls).toHaveLength(3);
    const derived = run.client.withOptions({ timeoutMs: 20_000 });
    const watched = scriptedSigner(run.wallet, []);
    const before = run.constructs();
    const error = await derived.bridge
      .execute({
        userId: run.userId,
        routeId: run.routeId,
        amount: '5',
        signer: watched.signer,
        verify: SHORT.verify,
        // About 400 ms left of a 4 s quote: less than the ~600 ms this signer is known to take.
        signing: { submitMarginMs: 3_600 },
        requote: { maxAttempts: 1 },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequoteExhaustedError);
    expect(error).toMatchObject({ attempts: 2, reasons: ['expiring', 'expiring'] });
    expect((error as RequoteExhaustedError).intents).toHaveLength(2);
    expect(watched.calls).toHaveLength(0);
    expect(run.constructs() - before).toBe(2);
  });

  it('without requote: a budget beyond the time left is SigningTooSlowError, the signer not called, nothing sent', async () => {
    const run = await requoteSetup();
    const { signer, calls } = scriptedSigner(run.wallet, []);
    const error = await run
      .execute(signer, { signing: { budgetMs: 60_000, submitMarginMs: 1_000 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SigningTooSlowError);
    expect(error).toMatchObject({ code: 'SIGNING_TOO_SLOW', budgetMs: 60_000, elapsedMs: 0 });
    expect((error as SigningTooSlowError).intentId).toBe(run.built()[0]!.intentId);
    expect((error as Error).message).toMatch(/nothing was sent/);
    expect(calls).toHaveLength(0);
    expect(run.constructs()).toBe(1);
    expect(run.submits()).toBe(0);
  });

  it('without requote: a signer that misses the deadline is SigningTooSlowError with its elapsed time, nothing sent', async () => {
    const run = await requoteSetup({ quoteTtlSec: 3 });
    const { signer, calls } = scriptedSigner(run.wallet, ['late']);
    const error = await run.execute(signer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SigningTooSlowError);
    expect((error as SigningTooSlowError).elapsedMs).toBeGreaterThan(0);
    expect(calls[0]!.context!.signal.aborted).toBe(true);
    expect(run.submits()).toBe(0);
  });

  it('backs off and rebuilds after construct answers 503 "quote expires too soon to sign", past the transport retries', async () => {
    const run = await requoteSetup();
    run.sim.configureRoute(run.routeId, { signWindowSec: 10 });
    let refused = 0;
    // The window closes once the transport has spent its own retry on it (2 refused constructs).
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const response = await globalThis.fetch(input, init);
      if (String(input).endsWith(CONSTRUCT) && response.status === 503 && ++refused === 2)
        run.sim.configureRoute(run.routeId, { signWindowSec: 0 });
      return response;
    };
    const client = new PartnerClient({
      baseUrl: (run.client as PartnerClient).baseUrl,
      ...run.sim.demo.credentials,
      fetch,
      maxRetries: 1,
      retry: { minDelayMs: 10, maxDelayMs: 20 },
    });
    const { signer } = scriptedSigner(run.wallet, []);
    const result = await run.execute(signer, { requote: { maxAttempts: 1 } }, client);
    expect(refused).toBe(2);
    expect(run.constructs()).toBe(3);
    expect(run.submits()).toBe(1);
    expect(run.progress.find((p) => p.step === 'requoted')).toMatchObject({
      attempt: 1,
      reason: 'service-503',
    });
    expect(result.transferId).toBe(run.built()[0]!.transferId);
  });

  it('rebuilds when the first send is refused INTENT_NOT_FOUND and the transfer reads expired', async () => {
    const run = await requoteSetup();
    // The service's clock runs ahead while the first signature is made: its intent is gone.
    const { signer, calls } = scriptedSigner(run.wallet, [() => run.sim.advanceClock(30_000), 'fast']);
    const result = await run.execute(signer, { requote: { maxAttempts: 1 } });
    const [first, second] = run.built();
    expect(calls).toHaveLength(2);
    expect(run.submits()).toBe(2);
    expect(run.sim.transfer(first!.transferId).status).toBe('expired');
    expect(result.transferId).toBe(second!.transferId);
    expect(run.progress.find((p) => p.step === 'requoted')).toMatchObject({ reason: 'intent-expired' });
  });

  it('checks requote and signing before any request', async () => {
    const run = await requoteSetup();
    const { signer } = scriptedSigner(run.wallet, []);
    const bad = [
      { requote: { maxAttempts: -1 } },
      { requote: { maxOutputDropBps: 1.5 } },
      { requote: { minAmountOut: '-3' } },
      { requote: { accept: true } },
      { requote: { baseline: { routeId: 'a look-alike' } } },
      { requote: { surprise: 1 } },
      { signing: { budgetMs: -1 } },
      { signing: { submitMarginMs: Number.NaN } },
    ];
    for (const options of bad) {
      const error = await run.client.bridge
        .execute({ userId: run.userId, routeId: run.routeId, amount: '25', signer, ...(options as object) })
        .catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).toBeInstanceOf(ArgumentError);
    }
    expect(run.sim.requests).toHaveLength(0);
  });
});

describe('bridge.execute with requote and a tracker', () => {
  it('records every intent it builds before signing it, so the one it replaced is followed to its end too', async () => {
    const run = await requoteSetup();
    const store = new MemoryTrackerStore();
    const tracker = createTransferTracker({ client: run.client, store, discover: false });
    const recordedBeforeSigning: boolean[] = [];
    const { signer } = scriptedSigner(run.wallet, ['late', 'fast']);
    const watched = {
      ...signer,
      signMessage: async (...args: Parameters<typeof signer.signMessage>) => {
        const [first, second] = run.built();
        const id = (second ?? first)!.transferId;
        recordedBeforeSigning.push((await store.get(id)) !== undefined);
        return signer.signMessage(...args);
      },
    };
    const result = await run.execute(watched, { requote: { maxAttempts: 2 }, tracker });
    const [first, second] = run.built();
    expect(result.transferId).toBe(second!.transferId);
    expect(recordedBeforeSigning).toEqual([true, true]);
    // The replaced intent is tracked as well: the tracker will see it expire.
    expect((await store.get(first!.transferId))?.source).toBe('execute');
    expect((await store.get(second!.transferId))?.source).toBe('execute');
  });
});
