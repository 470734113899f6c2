import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createCallbackRouter,
  MemoryTrackerStore,
  TrackerError,
  type TransferOverdue,
} from '../../src/index.js';
import { type Harness, harness, ROUTE, sleep, statesOf, until, wrapStore } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('createTransferTracker: store failures, stop, execute', () => {
  it('a store that fails for a while: error events, nothing lost, work resumes', async () => {
    let down = false;
    const store = wrapStore(new MemoryTrackerStore(), () => {
      if (down) throw new Error('ECONNREFUSED');
    });
    h = harness({ store });
    const ids = [await h.submitted(), await h.submitted(), await h.submitted()];
    for (const transferId of ids) await h.tracker.track({ userId: h.userId, transferId });
    await h.tracker.start();
    await until(() => h!.transitions.length === 3, 'submitted of each');
    down = true;
    for (const id of ids) {
      h.sim.advance(id, 'source_confirmed');
      h.sim.advance(id, 'delivered');
    }
    await until(() => h!.errors.length >= 5, 'errors while the store is down');
    expect(h.errors.every((error) => error instanceof TrackerError && error.stage === 'store')).toBe(true);
    down = false;
    await until(() => h!.finals.length === 3, 'every final once the store answers');
    expect(h.finals.map((t) => t.transferId).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(statesOf(h, id).at(-1)).toEqual(['delivered', 'submitted']);
  });

  it('stop() lets a dispatch under way finish and commit before it resolves', async () => {
    h = harness();
    const a = await h.submitted();
    let entered = false;
    let finished = false;
    h.tracker.on('transition', async () => {
      entered = true;
      await sleep(150);
      finished = true;
    });
    await h.tracker.track({ userId: h.userId, transferId: a });
    await h.tracker.start();
    await until(() => entered, 'the listener to start');
    await h.tracker.stop();
    expect(finished).toBe(true);
    expect((await h.store.get(a))?.dispatched).toBe('submitted');
    const reads = h.reads(a);
    await sleep(100);
    expect(h.reads(a)).toBe(reads);
  });

  it('execute({ tracker }) records the transfer before anything is signed; a failed record stops it unsigned', async () => {
    h = harness();
    const account = privateKeyToAccount(h.sim.demo.wallet.privateKey);
    const seenBySigner: (string | undefined)[] = [];
    const signer = {
      address: account.address,
      signMessage: async (args: Parameters<typeof account.signMessage>[0]) => {
        const records = await h!.store.users(0);
        seenBySigner.push(records[0]);
        return account.signMessage(args);
      },
      signAuthorization: (args: Parameters<typeof account.signAuthorization>[0]) =>
        account.signAuthorization(args),
    };
    const { transferId } = await h.client.bridge.execute({
      userId: h.userId,
      routeId: ROUTE,
      amount: '1',
      signer,
      tracker: h.tracker,
    });
    expect(seenBySigner).toEqual([h.userId]);
    expect((await h.store.get(transferId))?.source).toBe('execute');

    // A store that cannot record: nothing is signed, nothing sent.
    const failing = harness({
      store: wrapStore(new MemoryTrackerStore(), (m) => {
        if (m === 'track') throw new Error('disk full');
      }),
    });
    let signed = 0;
    const counting = {
      ...signer,
      signMessage: async (args: Parameters<typeof account.signMessage>[0]) => {
        signed++;
        return account.signMessage(args);
      },
    };
    const error = await failing.client.bridge
      .execute({
        userId: failing.userId,
        routeId: ROUTE,
        amount: '1',
        signer: counting,
        tracker: failing.tracker,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrackerError);
    expect((error as TrackerError).stage).toBe('track');
    expect(signed).toBe(0);
    expect(failing.sim.requests.some((r) => r.method === 'POST' && r.path.endsWith('/submit'))).toBe(false);
    await failing.close();
  });

  it('past a deadline overdue fires once for the phase, with since a Date', async () => {
    h = harness({ deadlines: { delivery: 100 } });
    const a = await h.submitted();
    const overdue: TransferOverdue[] = [];
    h.tracker.on('overdue', (o) => void overdue.push(o));
    await h.tracker.track({ userId: h.userId, transferId: a });
    h.sim.advance(a, 'source_confirmed');
    await h.tracker.start();
    await until(() => overdue.length === 1, 'overdue');
    await sleep(200);
    expect(overdue).toHaveLength(1);
    expect(overdue[0]?.phase).toBe('delivery');
    expect(overdue[0]?.since).toBeInstanceOf(Date);
    expect(overdue[0]?.transfer.transferId).toBe(a);
  });
});

describe('createTransferTracker with a callback router', () => {
  it('deliveries count as observations: each state once, few reads, and the router listeners see what they saw', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const routerSaw: string[] = [];
    router.on('transfer', (transfer) => void routerSaw.push(`${transfer.transferId}:${transfer.status}`));
    h = harness(
      // Reads only as a fallback, seconds apart: the deliveries carry the states.
      { router, schedule: { submitted: 5_000, source_confirmed: 5_000 } },
      {
        callbacks: (body) => router.dispatch(body).then(() => undefined),
        autoAdvance: { sourceConfirmedMs: 20, deliveredMs: 20 },
      },
    );
    await h.tracker.start();
    const ids = await h.executed(5);
    await until(() => h!.finals.length === 5, 'every final');
    for (const id of ids) {
      const states = statesOf(h, id).map(([status]) => status);
      expect(states.at(-1)).toBe('delivered');
      expect(new Set(states).size).toBe(states.length);
    }
    expect(routerSaw).toHaveLength(15);
    const reads = ids.reduce((sum, id) => sum + h!.reads(id), 0);
    // The figure: 1.2 reads per transfer on this run (a delivery wakes one read; the final needs none), two at most.
    expect(reads / ids.length).toBeLessThanOrEqual(2);
  });
});

describe('createTransferTracker: rounds without start', () => {
  it('runOnce works before start and after stop, for cron, a queue job or a Lambda', async () => {
    h = harness();
    const a = await h.submitted();
    await h.tracker.track({ userId: h.userId, transferId: a });
    expect(await h.tracker.runOnce({ limit: 10 })).toEqual({ read: 1, dispatched: 1 });
    await h.tracker.start();
    await h.tracker.stop();
    h.sim.advance(a, 'source_confirmed');
    h.sim.advance(a, 'delivered');
    await until(async () => (await h!.tracker.runOnce()).dispatched === 1, 'delivered by a round after stop');
    expect(statesOf(h, a).at(-1)).toEqual(['delivered', 'submitted']);
  });
});
