import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ArgumentError,
  createTransferTracker,
  MemoryTrackerStore,
  PartnerClient,
  SigningError,
} from '../../src/index.js';
import { createPartnerSimulator } from '../../src/testing/index.js';
import { type Harness, harness, sleep, statesOf, until, wrapStore } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('createTransferTracker: states in order, once each', () => {
  it('dispatches every observed state in rank order, the first one too, and final after it; a final transfer is no longer read', async () => {
    h = harness();
    const a = await h.submitted();
    await h.tracker.track({ userId: h.userId, transferId: a });
    await h.tracker.start();
    await until(() => statesOf(h!, a).length === 1, 'submitted');
    h.sim.advance(a, 'source_confirmed');
    await until(() => statesOf(h!, a).length === 2, 'source_confirmed');
    h.sim.advance(a, 'delivered');
    await until(() => h!.finals.length === 1, 'final');
    expect(statesOf(h, a)).toEqual([
      ['submitted', undefined],
      ['source_confirmed', 'submitted'],
      ['delivered', 'source_confirmed'],
    ]);
    expect(h.finals.map((t) => [t.transferId, t.status])).toEqual([[a, 'delivered']]);
    const reads = h.reads(a);
    await sleep(200); // ten schedules of 20 ms: none reads a final transfer
    expect(h.reads(a)).toBe(reads);
    expect((await h.store.get(a))?.final).toBe(true);
  });

  it('a jump from submitted to delivered between reads dispatches delivered with previous submitted', async () => {
    h = harness({ schedule: { submitted: 150 } });
    const a = await h.submitted();
    await h.tracker.track({ userId: h.userId, transferId: a });
    await h.tracker.start();
    await until(() => statesOf(h!, a).length === 1, 'submitted');
    h.sim.advance(a, 'source_confirmed');
    h.sim.advance(a, 'delivered');
    await until(() => h!.finals.length === 1, 'final');
    expect(statesOf(h, a)).toEqual([
      ['submitted', undefined],
      ['delivered', 'submitted'],
    ]);
  });

  it('a listener that throws or rejects gets the same state again later; it is never recorded as done', async () => {
    h = harness();
    const a = await h.submitted();
    let failSubmitted = 2;
    let failFinal = 1;
    h.tracker.on('transition', (transfer) => {
      if (transfer.status === 'submitted' && failSubmitted-- > 0) throw new Error('ledger down');
    });
    h.tracker.on('final', async () => {
      if (failFinal-- > 0) throw new Error('ledger down');
    });
    await h.tracker.track({ userId: h.userId, transferId: a });
    await h.tracker.start();
    await until(async () => (await h!.store.get(a))?.dispatched === 'submitted', 'submitted recorded');
    expect(statesOf(h, a)).toEqual([
      ['submitted', undefined],
      ['submitted', undefined],
      ['submitted', undefined],
    ]);
    h.sim.advance(a, 'source_confirmed');
    h.sim.advance(a, 'delivered');
    await until(async () => (await h!.store.get(a))?.final === true, 'final recorded');
    // The final listener rejected once: delivered (its transition and its final) came again.
    expect(statesOf(h, a).slice(3)).toEqual([
      ['delivered', 'submitted'],
      ['delivered', 'submitted'],
    ]);
    expect(h.finals).toHaveLength(2);
    expect(h.errors.length).toBeGreaterThanOrEqual(3);
  });

  it("an unsigned intent's expired is dispatched soon after its quote expires, with a read or two", async () => {
    h = harness({}, { quoteTtlSec: 1 });
    // A signer that dies: execute recorded the transfer before it was asked to sign.
    const signer = {
      address: h.sim.demo.wallet.address,
      signMessage: async () => {
        throw new Error('the signing process died');
      },
      signAuthorization: async () => {
        throw new Error('the signing process died');
      },
    };
    await h.tracker.start();
    const failed = h.client.bridge.execute({
      userId: h.userId,
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '1',
      signer,
      tracker: h.tracker,
      verify: { expiryMarginMs: 0 }, // a one-second quote, to see it expire
    });
    await expect(failed).rejects.toThrow(SigningError);
    await until(() => h!.finals.length === 1, 'expired', 10_000);
    const [final] = h.finals;
    expect(final?.status).toBe('expired');
    expect(statesOf(h, final!.transferId)).toEqual([
      ['pending', undefined],
      ['expired', 'pending'],
    ]);
    // One read at once (pending), one just after the expiry: the schedule does not poll a pending intent.
    expect(h.reads(final!.transferId)).toBeLessThanOrEqual(3);
  });
});

describe('createTransferTracker: discovery', () => {
  it('adopts transfers never passed to track, of users it saw, across several pages', async () => {
    h = harness({ discover: { everyMs: 60_000, pageSize: 2 } });
    const known = await h.submitted();
    await h.tracker.track({ userId: h.userId, transferId: known });
    const strangers = [
      await h.submitted(),
      await h.unsigned(),
      await h.submitted(),
      await h.unsigned(),
      await h.unsigned(),
    ];
    const discovered: string[] = [];
    h.tracker.on('discovered', (transfer) => void discovered.push(transfer.transferId));
    const round = await h.tracker.runOnce({ limit: 50 });
    expect(discovered.sort()).toEqual([...strangers].sort());
    const pages = h.sim.requests.filter((r) => r.method === 'GET' && r.path === '/bridge/transfers').length;
    expect(pages).toBe(3);
    // Their states came from the list: dispatched without a read of each.
    for (const id of strangers) {
      expect(statesOf(h, id)).toHaveLength(1);
      expect(h.reads(id)).toBe(0);
      expect((await h.store.get(id))?.source).toBe('discovered');
    }
    expect(round.dispatched).toBe(6);
    expect(round.read).toBe(4); // three list pages and the tracked transfer
  });
});

describe('createTransferTracker: arguments', () => {
  it('refuses bad input with an ArgumentError before anything is stored or read', async () => {
    const sim = createPartnerSimulator();
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    let stored = 0;
    const store = new MemoryTrackerStore();
    const counting = wrapStore(store, (method) => {
      if (method === 'track') stored++;
    });
    expect(() => createTransferTracker({} as never)).toThrow(ArgumentError);
    expect(() => createTransferTracker({ client, leaseMs: 0 })).toThrow(ArgumentError);
    expect(() => createTransferTracker({ client, discover: { everyMs: -1 } })).toThrow(ArgumentError);
    const tracker = createTransferTracker({ client, store: counting, discover: false });
    await expect(tracker.track({ userId: '', transferId: 'brt_1' })).rejects.toThrow(ArgumentError);
    await expect(tracker.track({ userId: 'usr_1' } as never)).rejects.toThrow(ArgumentError);
    await expect(tracker.pollOnce('brt_never_tracked')).rejects.toThrow(ArgumentError);
    expect(() => tracker.on('finished' as never, (() => {}) as never)).toThrow(ArgumentError);
    await expect(tracker.runOnce({ limit: 0 })).rejects.toThrow(ArgumentError);
    const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
    await expect(
      client.bridge.execute({
        userId: sim.demo.userId,
        routeId: 'base-usdc-to-bsc-usdc',
        amount: '1',
        signer,
        tracker: {} as never,
      }),
    ).rejects.toThrow(ArgumentError);
    expect(stored).toBe(0);
    expect(sim.requests).toEqual([]);
    sim.close();
  });

  it('track is idempotent, and pollOnce reads a tracked transfer now and dispatches what is new', async () => {
    h = harness();
    const a = await h.submitted();
    expect(await h.tracker.track({ userId: h.userId, transferId: a })).toBe(true);
    expect(await h.tracker.track({ userId: h.userId, transferId: a })).toBe(false);
    const transfer = await h.tracker.pollOnce(a);
    expect(transfer.status).toBe('submitted');
    expect(statesOf(h, a)).toEqual([['submitted', undefined]]);
    h.sim.advance(a, 'source_confirmed');
    expect((await h.tracker.pollOnce(a)).status).toBe('source_confirmed');
    expect(statesOf(h, a)).toEqual([
      ['submitted', undefined],
      ['source_confirmed', 'submitted'],
    ]);
  });
});
