import { deepStrictEqual, equal, ok } from 'node:assert/strict';
import type { TrackerLease, TrackerStore } from '../tracker/store.js';
import { type ConformanceRunner, conformanceSuite, type StoreTest } from './conformance-runner.js';
import { advanced, conformanceTransfer, fresh } from './tracker-fixtures.js';
import { registerList } from './tracker-list-conformance.js';

export type { ConformanceRunner } from './conformance-runner.js';
export { conformanceTransfer } from './tracker-fixtures.js';

/** How the suite treats the store under test. */
export interface TrackerStoreConformanceOptions {
  /**
   * The lease the suite takes where it waits for one to expire. Long enough for one store call to
   * come back well within it; the suite sleeps a few of them.
   * @default 150
   */
  leaseMs?: number;
  /** Called after each test with the store it made, e.g. to close a connection. */
  dispose?: (store: TrackerStore) => unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const owner = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}`;

const ids = (leases: readonly TrackerLease[]) => leases.map((lease) => lease.record.transferId);

/**
 * Registers tests that check a `TrackerStore` keeps every rule of the contract the transfer
 * tracker relies on: idempotent `track`, `claimDue` order, limit and lease exclusion, fences that
 * refuse a `complete` after the lease passed to another owner, `renew` extending a held lease and
 * refusing a stale or given-back one, `observe` merged by rank (during a lease too), final records
 * never due, `prune`, `users(since)`, `claim`'s three outcomes, and `list` (its filters, pages by
 * id while records change state, and `tracker.list`'s cursors over it).
 * `makeStore` must return an empty store (a fresh key prefix or schema per call is enough).
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { trackerStoreConformance } from 'partner-s2s-sdk/testing';
 * trackerStoreConformance({ describe, it }, () => new MemoryTrackerStore());
 */
export function trackerStoreConformance(
  runner: ConformanceRunner,
  makeStore: () => TrackerStore | Promise<TrackerStore>,
  options: TrackerStoreConformanceOptions = {},
): void {
  const {
    describe,
    test,
    options: read,
  } = conformanceSuite('trackerStoreConformance', runner, makeStore, () => ({
    leaseMs: options?.leaseMs ?? 150,
    dispose: options?.dispose,
  }));
  const { leaseMs } = read;
  describe('TrackerStore conformance', () => {
    registerTrackAndClaim(test, leaseMs);
    registerFences(test, leaseMs);
    registerRenew(test, leaseMs);
    registerObserve(test, leaseMs);
    registerHousekeeping(test);
    registerList(test);
  });
}

type Register = StoreTest<TrackerStore>;

function registerTrackAndClaim(test: Register, leaseMs: number): void {
  test('track inserts once: a second track of the transfer changes nothing and resolves false', async (store) => {
    const record = fresh();
    equal(await store.track(record), true);
    deepStrictEqual(await store.get(record.transferId), record);
    equal(await store.track({ ...record, userId: 'usr_other', source: 'discovered' }), false);
    deepStrictEqual(await store.get(record.transferId), record);
    equal(await store.get('brt_conf_never_tracked'), undefined);
  });

  test('claimDue leases due records earliest due first, at most limit, each once', async (store) => {
    const [a, b, c] = [fresh(), fresh(), fresh()];
    for (const record of [a, b, c]) await store.track(record);
    const first = await store.claimDue({ owner: owner('w'), leaseMs: 60_000, limit: 10 });
    deepStrictEqual(ids(first).sort(), [a.transferId, b.transferId, c.transferId].sort());
    for (const lease of first)
      deepStrictEqual(
        lease.record,
        [a, b, c].find((r) => r.transferId === lease.record.transferId),
      );
    // Due again in the order b, c, a.
    const delays = new Map([
      [a.transferId, leaseMs * 3],
      [b.transferId, leaseMs],
      [c.transferId, leaseMs * 2],
    ]);
    for (const lease of first) {
      ok(
        await store.complete(lease, {
          record: lease.record,
          nextReadInMs: delays.get(lease.record.transferId)!,
        }),
      );
    }
    deepStrictEqual(await store.claimDue({ owner: owner('w'), leaseMs: 60_000, limit: 10 }), []);
    await sleep(leaseMs * 3 + 100);
    const two = await store.claimDue({ owner: owner('w'), leaseMs: 60_000, limit: 2 });
    deepStrictEqual(ids(two), [b.transferId, c.transferId]);
    deepStrictEqual(ids(await store.claimDue({ owner: owner('w'), leaseMs: 60_000, limit: 2 })), [
      a.transferId,
    ]);
  });

  test('a leased record is not claimed again until its lease expires; then with a higher fence', async (store) => {
    const record = fresh();
    await store.track(record);
    const [lease] = await store.claimDue({ owner: owner('a'), leaseMs, limit: 5 });
    ok(lease);
    deepStrictEqual(await store.claimDue({ owner: owner('b'), leaseMs, limit: 5 }), []);
    await sleep(leaseMs + 100);
    const [again] = await store.claimDue({ owner: owner('b'), leaseMs, limit: 5 });
    equal(again?.record.transferId, record.transferId);
    ok(again!.fence > lease.fence);
  });

  test('concurrent claimDue calls never lease one record twice', async (store) => {
    const records = Array.from({ length: 20 }, () => fresh());
    for (const record of records) await store.track(record);
    const batches = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        store.claimDue({ owner: owner(`c${i}`), leaseMs: 60_000, limit: 6 }),
      ),
    );
    const claimed = batches.flatMap(ids);
    equal(new Set(claimed).size, claimed.length);
    equal(claimed.length, 20);
  });

  test('claim leases one record due or not; busy under another lease; unknown without a record', async (store) => {
    const record = fresh();
    await store.track(record);
    const [first] = await store.claimDue({ owner: owner('a'), leaseMs: 60_000, limit: 1 });
    ok(await store.complete(first!, { record: advanced(first!.record, 'submitted'), nextReadInMs: 60_000 }));
    const one = await store.claim(record.transferId, { owner: owner('p'), leaseMs: 60_000 });
    equal(one.outcome, 'claimed');
    if (one.outcome !== 'claimed') return;
    ok(one.lease.fence > first!.fence);
    equal(one.lease.record.dispatched, 'submitted');
    deepStrictEqual(await store.claim(record.transferId, { owner: owner('q'), leaseMs: 60_000 }), {
      outcome: 'busy',
    });
    deepStrictEqual(await store.claim('brt_conf_unknown', { owner: owner('q'), leaseMs: 60_000 }), {
      outcome: 'unknown',
    });
  });
}

function registerFences(test: Register, leaseMs: number): void {
  test('complete writes the record whole, drops the lease and makes it due after nextReadInMs', async (store) => {
    const record = fresh('execute');
    await store.track(record);
    const [lease] = await store.claimDue({ owner: owner('a'), leaseMs: 60_000, limit: 1 });
    const written = advanced(lease!.record, 'submitted');
    equal(await store.complete(lease!, { record: written, nextReadInMs: leaseMs }), true);
    deepStrictEqual(await store.get(record.transferId), written);
    deepStrictEqual(await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 1 }), []);
    await sleep(leaseMs + 100);
    deepStrictEqual(ids(await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 1 })), [
      record.transferId,
    ]);
  });

  test('a complete or release with a fence that is no longer the latest is refused and writes nothing', async (store) => {
    const record = fresh();
    await store.track(record);
    const [stale] = await store.claimDue({ owner: owner('a'), leaseMs, limit: 1 });
    await sleep(leaseMs + 100);
    const [current] = await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 1 });
    ok(current);
    equal(
      await store.complete(stale!, { record: advanced(stale!.record, 'delivered', true), nextReadInMs: 0 }),
      false,
    );
    await store.release(stale!, 0);
    deepStrictEqual(await store.get(record.transferId), record);
    // The current holder's lease is untouched by the stale calls.
    deepStrictEqual(await store.claim(record.transferId, { owner: owner('c'), leaseMs: 60_000 }), {
      outcome: 'busy',
    });
    equal(
      await store.complete(current, { record: advanced(current.record, 'submitted'), nextReadInMs: 60_000 }),
      true,
    );
    equal((await store.get(record.transferId))?.dispatched, 'submitted');
  });

  test('release drops the lease without writing, due again after retryInMs', async (store) => {
    const record = fresh();
    await store.track(record);
    const [lease] = await store.claimDue({ owner: owner('a'), leaseMs: 60_000, limit: 1 });
    await store.release(lease!, leaseMs);
    deepStrictEqual(await store.get(record.transferId), record);
    deepStrictEqual(await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 1 }), []);
    await sleep(leaseMs + 100);
    const [again] = await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 1 });
    ok(again && again.fence > lease!.fence);
  });

  test('a final record is never due, whatever nextReadInMs or observe say', async (store) => {
    const record = fresh();
    await store.track(record);
    const [lease] = await store.claimDue({ owner: owner('a'), leaseMs: 60_000, limit: 1 });
    ok(await store.complete(lease!, { record: advanced(lease!.record, 'delivered', true), nextReadInMs: 0 }));
    await store.observe(
      record.transferId,
      conformanceTransfer(record.transferId, record.userId, 'delivered'),
      4,
    );
    await sleep(20);
    deepStrictEqual(await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 5 }), []);
    equal((await store.get(record.transferId))?.final, true);
  });
}

function registerRenew(test: Register, leaseMs: number): void {
  test('renew extends a held lease: nobody else claims the transfer until its new end, then with a higher fence', async (store) => {
    const record = fresh();
    await store.track(record);
    const [lease] = await store.claimDue({ owner: owner('a'), leaseMs, limit: 1 });
    ok(lease);
    // Renewed for three leases from now: past the first lease's end it is still held.
    equal(await store.renew(lease, { leaseMs: leaseMs * 3 }), true);
    await sleep(leaseMs + 100);
    deepStrictEqual(await store.claimDue({ owner: owner('b'), leaseMs, limit: 1 }), []);
    deepStrictEqual(await store.claim(record.transferId, { owner: owner('b'), leaseMs }), {
      outcome: 'busy',
    });
    await sleep(leaseMs * 2 + 100);
    const [again] = await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 1 });
    equal(again?.record.transferId, record.transferId);
    ok(again!.fence > lease.fence);
  });

  test('renew of a lease that ran out, nobody having claimed the transfer since, takes it again', async (store) => {
    const record = fresh();
    await store.track(record);
    const [lease] = await store.claimDue({ owner: owner('a'), leaseMs, limit: 1 });
    await sleep(leaseMs + 100);
    equal(await store.renew(lease!, { leaseMs: 60_000 }), true);
    deepStrictEqual(await store.claimDue({ owner: owner('b'), leaseMs, limit: 1 }), []);
    equal(
      await store.complete(lease!, { record: advanced(lease!.record, 'submitted'), nextReadInMs: 60_000 }),
      true,
    );
  });

  test('renew with a fence that is no longer the latest is refused and writes nothing', async (store) => {
    const record = fresh();
    await store.track(record);
    const [stale] = await store.claimDue({ owner: owner('a'), leaseMs, limit: 1 });
    await sleep(leaseMs + 100);
    const [current] = await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 1 });
    ok(current && current.fence > stale!.fence);
    // Were it written, this would end the current holder's lease at once.
    equal(await store.renew(stale!, { leaseMs: 1 }), false);
    await sleep(50);
    deepStrictEqual(await store.claim(record.transferId, { owner: owner('c'), leaseMs: 60_000 }), {
      outcome: 'busy',
    });
    equal(
      await store.complete(stale!, { record: advanced(stale!.record, 'delivered', true), nextReadInMs: 0 }),
      false,
    );
    equal(await store.renew(current, { leaseMs: 60_000 }), true);
    ok(
      await store.complete(current, { record: advanced(current.record, 'submitted'), nextReadInMs: 60_000 }),
    );
    equal((await store.get(record.transferId))?.dispatched, 'submitted');
  });

  test('renew of a lease already completed or released is refused and leases nothing', async (store) => {
    const [done, given] = [fresh(), fresh()];
    for (const record of [done, given]) await store.track(record);
    const leases = await store.claimDue({ owner: owner('a'), leaseMs: 60_000, limit: 2 });
    const byId = new Map(leases.map((lease) => [lease.record.transferId, lease]));
    const completed = byId.get(done.transferId)!;
    const released = byId.get(given.transferId)!;
    ok(await store.complete(completed, { record: advanced(completed.record, 'submitted'), nextReadInMs: 0 }));
    await store.release(released, 0);
    equal(await store.renew(completed, { leaseMs: 60_000 }), false);
    equal(await store.renew(released, { leaseMs: 60_000 }), false);
    await sleep(20);
    deepStrictEqual(
      ids(await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 5 })).sort(),
      [done.transferId, given.transferId].sort(),
    );
  });
}

function registerObserve(test: Register, leaseMs: number): void {
  test('observe keeps the newer state by rank and makes the record due at once', async (store) => {
    const record = fresh();
    await store.track(record);
    const [lease] = await store.claimDue({ owner: owner('a'), leaseMs: 60_000, limit: 1 });
    ok(
      await store.complete(lease!, { record: advanced(lease!.record, 'submitted'), nextReadInMs: 3_600_000 }),
    );
    const confirmed = conformanceTransfer(record.transferId, record.userId, 'source_confirmed');
    await store.observe(record.transferId, confirmed, 2);
    await store.observe(
      record.transferId,
      conformanceTransfer(record.transferId, record.userId, 'submitted'),
      1,
    );
    const stored = await store.get(record.transferId);
    deepStrictEqual(stored?.observed, confirmed);
    equal(stored?.observedRank, 2);
    equal(stored?.dispatched, 'submitted');
    deepStrictEqual(ids(await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 1 })), [
      record.transferId,
    ]);
  });

  test("an observation during a lease survives the holder's complete, which leaves the record due", async (store) => {
    const record = fresh();
    await store.track(record);
    const [lease] = await store.claimDue({ owner: owner('a'), leaseMs: 60_000, limit: 1 });
    const delivered = conformanceTransfer(record.transferId, record.userId, 'delivered');
    await store.observe(record.transferId, delivered, 4);
    // The holder read `submitted` before the delivery came in.
    ok(
      await store.complete(lease!, { record: advanced(lease!.record, 'submitted'), nextReadInMs: 3_600_000 }),
    );
    const stored = await store.get(record.transferId);
    deepStrictEqual(stored?.observed, delivered);
    equal(stored?.observedRank, 4);
    equal(stored?.dispatched, 'submitted');
    await sleep(Math.min(leaseMs, 50));
    deepStrictEqual(ids(await store.claimDue({ owner: owner('b'), leaseMs: 60_000, limit: 1 })), [
      record.transferId,
    ]);
  });

  test('observe of a transfer without a record is ignored', async (store) => {
    await store.observe('brt_conf_nobody', conformanceTransfer('brt_conf_nobody', 'usr_x', 'submitted'), 1);
    equal(await store.get('brt_conf_nobody'), undefined);
    deepStrictEqual(await store.claimDue({ owner: owner('a'), leaseMs: 60_000, limit: 5 }), []);
  });
}

function registerHousekeeping(test: Register): void {
  test('prune deletes final records updated before the cut only, and says how many', async (store) => {
    const [old, recent, open] = [fresh(), fresh(), fresh()];
    for (const record of [old, recent, open]) await store.track(record);
    const leases = await store.claimDue({ owner: owner('a'), leaseMs: 60_000, limit: 3 });
    const cut = Date.now();
    for (const lease of leases) {
      const id = lease.record.transferId;
      const written =
        id === open.transferId
          ? { ...advanced(lease.record, 'submitted'), updatedAt: cut - 10_000 }
          : {
              ...advanced(lease.record, 'delivered', true),
              updatedAt: id === old.transferId ? cut - 10_000 : cut + 10_000,
            };
      ok(await store.complete(lease, { record: written, nextReadInMs: 60_000 }));
    }
    equal(await store.prune(cut), 1);
    equal(await store.get(old.transferId), undefined);
    equal((await store.get(recent.transferId))?.final, true);
    equal((await store.get(open.transferId))?.final, false);
  });

  test('users(since) names each user with a record tracked or updated since then, once', async (store) => {
    const now = Date.now();
    const oldA = { ...fresh('track', 'usr_old'), trackedAt: now - 100_000, updatedAt: now - 100_000 };
    const newA = { ...fresh('track', 'usr_new'), trackedAt: now, updatedAt: now };
    const newB = { ...fresh('discovered', 'usr_new'), trackedAt: now, updatedAt: now };
    const touched = { ...fresh('track', 'usr_touched'), trackedAt: now - 100_000, updatedAt: now + 5 };
    for (const record of [oldA, newA, newB, touched]) await store.track(record);
    deepStrictEqual((await store.users(now - 1_000)).sort(), ['usr_new', 'usr_touched']);
    deepStrictEqual((await store.users(now - 200_000)).sort(), ['usr_new', 'usr_old', 'usr_touched']);
  });
}
