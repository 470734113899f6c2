import { expect, it } from 'vitest';
import type { TrackerStore } from '../../src/tracker/store.js';
import { observed, record, sleep } from './records.js';

const LEASE = { owner: 'a', leaseMs: 30_000 };

/** The TrackerStore contract (src/tracker/store.ts), checked on a fresh, empty store per test. */
export function trackerContract(makeStore: () => Promise<TrackerStore>): void {
  it('track inserts once and get answers the record as written', async () => {
    const store = await makeStore();
    const written = record('tr_a', { context: { order: 7 } } as never);
    expect(await store.track(written)).toBe(true);
    expect(await store.track(record('tr_a', { userId: 'someone-else' }))).toBe(false);
    expect(await store.get('tr_a')).toEqual(written);
    expect(await store.get('tr_none')).toBeUndefined();
  });

  it('claimDue leases due records earliest first, each once, up to the limit, fence one higher', async () => {
    const store = await makeStore();
    for (const id of ['tr_1', 'tr_2', 'tr_3']) {
      await store.track(record(id));
      await sleep(5);
    }
    const first = await store.claimDue({ ...LEASE, limit: 2 });
    expect(first.map((lease) => lease.record.transferId)).toEqual(['tr_1', 'tr_2']);
    expect(first.map((lease) => [lease.fence, lease.owner])).toEqual([
      [1, 'a'],
      [1, 'a'],
    ]);
    const second = await store.claimDue({ owner: 'b', leaseMs: 30_000, limit: 10 });
    expect(second.map((lease) => lease.record.transferId)).toEqual(['tr_3']);
    expect(await store.claimDue({ ...LEASE, limit: 10 })).toEqual([]);
  });

  it('complete writes the record when the fence holds, and the transfer is due after nextReadInMs', async () => {
    const store = await makeStore();
    await store.track(record('tr_1'));
    const [lease] = await store.claimDue({ ...LEASE, limit: 1 });
    const next = { ...lease!.record, reads: 1, phase: 'submitted', observed: observed('tr_1', 'submitted') };
    expect(await store.complete(lease!, { record: { ...next, observedRank: 1 }, nextReadInMs: 60_000 })).toBe(
      true,
    );
    expect(await store.get('tr_1')).toEqual({ ...next, observedRank: 1 });
    expect(await store.claimDue({ ...LEASE, limit: 1 })).toEqual([]);
    const claimed = await store.claim('tr_1', LEASE);
    if (claimed.outcome !== 'claimed') throw new Error(`expected a claim, got ${claimed.outcome}`);
    const again = claimed.lease;
    expect(again!.fence).toBe(2);
    expect(await store.complete(again!, { record: again!.record, nextReadInMs: 0 })).toBe(true);
    expect((await store.claimDue({ ...LEASE, limit: 1 })).map((l) => l.fence)).toEqual([3]);
  });

  it('a lease that expired and was claimed again cannot complete or release: the fence moved on', async () => {
    const store = await makeStore();
    await store.track(record('tr_1'));
    const [stale] = await store.claimDue({ owner: 'a', leaseMs: 30, limit: 1 });
    await sleep(80);
    const [fresh] = await store.claimDue({ owner: 'b', leaseMs: 30_000, limit: 1 });
    expect(fresh!.fence).toBe(stale!.fence + 1);
    expect(await store.complete(stale!, { record: { ...stale!.record, reads: 99 }, nextReadInMs: 0 })).toBe(
      false,
    );
    await store.release(stale!, 0);
    expect((await store.claim('tr_1', LEASE)).outcome).toBe('busy');
    expect((await store.get('tr_1'))!.reads).toBe(0);
    expect(await store.complete(fresh!, { record: { ...fresh!.record, reads: 1 }, nextReadInMs: 0 })).toBe(
      true,
    );
  });

  it('release drops the lease and makes the transfer due after retryInMs', async () => {
    const store = await makeStore();
    await store.track(record('tr_1'));
    await store.track(record('tr_2'));
    const leases = await store.claimDue({ ...LEASE, limit: 2 });
    await store.release(leases[0]!, 0);
    await store.release(leases[1]!, 60_000);
    const again = await store.claimDue({ ...LEASE, limit: 5 });
    expect(again.map((lease) => [lease.record.transferId, lease.fence])).toEqual([
      [leases[0]!.record.transferId, 2],
    ]);
  });

  it('claim leases one record due or not: claimed, busy while held, unknown when untracked', async () => {
    const store = await makeStore();
    await store.track(record('tr_1'));
    const [lease] = await store.claimDue({ ...LEASE, limit: 1 });
    await store.complete(lease!, { record: lease!.record, nextReadInMs: 3_600_000 });
    const one = await store.claim('tr_1', LEASE);
    expect(one.outcome).toBe('claimed');
    expect((await store.claim('tr_1', { owner: 'b', leaseMs: 1_000 })).outcome).toBe('busy');
    expect(await store.claim('tr_other', LEASE)).toEqual({ outcome: 'unknown' });
  });

  it('observe keeps the newest state by rank and makes the record due at once', async () => {
    const store = await makeStore();
    await store.track(record('tr_1'));
    const [lease] = await store.claimDue({ ...LEASE, limit: 1 });
    await store.complete(lease!, { record: lease!.record, nextReadInMs: 3_600_000 });
    await store.observe('tr_1', observed('tr_1', 'source_confirmed'), 2);
    await store.observe('tr_1', observed('tr_1', 'submitted'), 1);
    expect((await store.get('tr_1'))!.observed!.status).toBe('source_confirmed');
    expect((await store.get('tr_1'))!.observedRank).toBe(2);
    expect((await store.claimDue({ ...LEASE, limit: 5 })).map((l) => l.record.transferId)).toEqual(['tr_1']);
    await store.observe('tr_unknown', observed('tr_unknown', 'submitted'), 1);
    expect(await store.get('tr_unknown')).toBeUndefined();
  });

  it('an observation during a lease survives the holder’s complete and leaves the record due', async () => {
    const store = await makeStore();
    await store.track(record('tr_1'));
    const [lease] = await store.claimDue({ ...LEASE, limit: 1 });
    await store.observe('tr_1', observed('tr_1', 'delivered'), 4);
    const read = { ...lease!.record, observed: observed('tr_1', 'submitted'), observedRank: 1, reads: 1 };
    expect(await store.complete(lease!, { record: read, nextReadInMs: 3_600_000 })).toBe(true);
    const after = await store.get('tr_1');
    expect([after!.observed!.status, after!.observedRank, after!.reads]).toEqual(['delivered', 4, 1]);
    expect((await store.claimDue({ ...LEASE, limit: 5 })).map((l) => l.record.transferId)).toEqual(['tr_1']);
  });

  it('final records are never due; prune deletes them once old enough; users lists recent users', async () => {
    const store = await makeStore();
    const old = Date.now() - 3_600_000;
    await store.track(record('tr_old', { userId: 'u-old', trackedAt: old, updatedAt: old }));
    await store.track(record('tr_new', { userId: 'u-new' }));
    expect(await store.users(Date.now() - 60_000)).toEqual(['u-new']);
    expect((await store.users(old - 1)).sort()).toEqual(['u-new', 'u-old']);
    const leases = await store.claimDue({ ...LEASE, limit: 5 });
    for (const lease of leases) {
      await store.complete(lease, { record: { ...lease.record, final: true }, nextReadInMs: 0 });
    }
    expect(await store.claimDue({ ...LEASE, limit: 5 })).toEqual([]);
    await store.observe('tr_new', observed('tr_new', 'delivered'), 4);
    expect(await store.claimDue({ ...LEASE, limit: 5 })).toEqual([]);
    expect(await store.prune(Date.now() - 60_000)).toBe(1);
    expect(await store.get('tr_old')).toBeUndefined();
    expect(await store.get('tr_new')).toBeDefined();
  });
}
