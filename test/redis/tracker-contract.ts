import { expect } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import type { TrackerRecord, TrackerStore } from '../../src/tracker/store.js';

/** A fresh record as the tracker writes it on `track`. */
export function record(transferId: string, overrides: Partial<TrackerRecord> = {}): TrackerRecord {
  const now = Date.now();
  return {
    transferId,
    userId: 'user-1',
    observed: null,
    observedRank: -1,
    dispatched: null,
    dispatchedRank: -1,
    final: false,
    phase: null,
    phaseSince: null,
    overdue: [],
    intervalMs: 0,
    failures: 0,
    reads: 0,
    source: 'track',
    trackedAt: now,
    updatedAt: now,
    ...overrides,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const lease = { owner: 'p1', leaseMs: 60_000 };

/**
 * The TrackerStore contract, run against one store: what the tracker relies on of every store,
 * written as one sequence of steps (each `id` names its own transfers, so stores may be shared).
 */
export async function trackerStoreContract(store: TrackerStore, id: (name: string) => string) {
  const a = id('a');
  const b = id('b');
  // track is idempotent and makes the record due at once.
  expect(await store.track(record(a))).toBe(true);
  expect(await store.track(record(a, { userId: 'someone-else' }))).toBe(false);
  expect((await store.get(a))?.userId).toBe('user-1');
  expect(await store.get(id('missing'))).toBeUndefined();

  // Claims take due work once, with a fence one higher each time.
  const [first, ...rest] = await store.claimDue({ ...lease, limit: 100 });
  const mine = [first, ...rest].filter((l) => l?.record.transferId === a);
  expect(mine).toHaveLength(1);
  const claimed = mine[0]!;
  expect(claimed.fence).toBe(1);
  expect(claimed.owner).toBe('p1');
  expect(claimed.record).toEqual(
    record(a, { trackedAt: claimed.record.trackedAt, updatedAt: claimed.record.updatedAt }),
  );
  expect((await store.claimDue({ ...lease, limit: 100 })).some((l) => l.record.transferId === a)).toBe(false);
  expect(await store.claim(a, lease)).toEqual({ outcome: 'busy' });
  expect(await store.claim(id('missing'), lease)).toEqual({ outcome: 'unknown' });

  // A fenced complete writes the record and schedules the next read.
  const observed = transfer({ transferId: a, status: 'submitted' });
  const read = {
    ...claimed.record,
    observed,
    observedRank: 1,
    dispatched: 'submitted',
    dispatchedRank: 1,
    reads: 1,
  };
  expect(await store.complete(claimed, { record: read, nextReadInMs: 60_000 })).toBe(true);
  expect(await store.get(a)).toEqual(read);
  expect((await store.claimDue({ ...lease, limit: 100 })).some((l) => l.record.transferId === a)).toBe(false);

  // claim takes a record that is not due; a lease that ran out is taken over, and the old
  // holder's complete and release are refused.
  const short = await store.claim(a, { owner: 'p1', leaseMs: 30 });
  if (short.outcome !== 'claimed') throw new Error(`expected a claim, got ${short.outcome}`);
  expect(short.lease.fence).toBe(2);
  await sleep(80);
  const over = await store.claim(a, { owner: 'p2', leaseMs: 60_000 });
  if (over.outcome !== 'claimed') throw new Error(`expected a takeover, got ${over.outcome}`);
  expect(over.lease.fence).toBe(3);
  expect(over.lease.record).toEqual(read);
  expect(await store.complete(short.lease, { record: { ...read, reads: 99 }, nextReadInMs: 0 })).toBe(false);
  await store.release(short.lease, 0);
  expect(await store.claim(a, lease)).toEqual({ outcome: 'busy' });
  expect((await store.get(a))?.reads).toBe(1);

  // observe during a lease: a higher rank is kept over the holder's older one, and the record is
  // due at once after the complete; a lower rank changes nothing but still wakes it.
  await store.observe(a, transfer({ transferId: a, status: 'source_confirmed' }), 2);
  await store.observe(a, transfer({ transferId: a, status: 'pending' }), 0);
  expect((await store.get(a))?.observed?.status).toBe('source_confirmed');
  expect(await store.complete(over.lease, { record: { ...read, reads: 2 }, nextReadInMs: 3_600_000 })).toBe(
    true,
  );
  const merged = await store.get(a);
  expect(merged).toMatchObject({ reads: 2, observedRank: 2, observed: { status: 'source_confirmed' } });
  const woken = (await store.claimDue({ ...lease, limit: 100 })).find((l) => l.record.transferId === a);
  expect(woken?.fence).toBe(4);
  expect(woken?.record.observedRank).toBe(2);

  // release drops the lease and makes it due after the retry; observe wakes a record not leased.
  await store.release(woken!, 3_600_000);
  expect((await store.claimDue({ ...lease, limit: 100 })).some((l) => l.record.transferId === a)).toBe(false);
  await store.observe(a, transfer({ transferId: a, status: 'source_confirmed' }), 2);
  const again = (await store.claimDue({ ...lease, limit: 100 })).find((l) => l.record.transferId === a)!;
  expect(again.fence).toBe(5);

  // A final record is no longer due, nor woken; users and prune see it.
  const done = {
    ...again.record,
    final: true,
    dispatched: 'delivered',
    dispatchedRank: 4,
    updatedAt: Date.now() - 10_000,
  };
  expect(await store.complete(again, { record: done, nextReadInMs: 0 })).toBe(true);
  await store.observe(a, transfer({ transferId: a, status: 'delivered' }), 4);
  expect((await store.claimDue({ ...lease, limit: 100 })).some((l) => l.record.transferId === a)).toBe(false);
  expect((await store.get(a))?.final).toBe(true);
  await store.observe(id('missing'), transfer({ transferId: id('missing') }), 1);
  expect(await store.get(id('missing'))).toBeUndefined();

  // Earliest due first, at most `limit`.
  expect(await store.track(record(b, { userId: 'user-2', trackedAt: Date.now() + 1_000 }))).toBe(true);
  const limited = await store.claimDue({ ...lease, limit: 1 });
  expect(limited).toHaveLength(1);

  expect(await store.users(Date.now() - 60_000)).toEqual(expect.arrayContaining(['user-1', 'user-2']));
  expect(await store.users(Date.now() + 500)).toContain('user-2');
  expect(await store.prune(Date.now() - 20_000)).toBe(0);
  expect(await store.prune(Date.now())).toBeGreaterThanOrEqual(1);
  expect(await store.get(a)).toBeUndefined();
  expect((await store.get(b))?.userId).toBe('user-2');
}
