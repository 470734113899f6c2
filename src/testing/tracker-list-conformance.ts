import { deepStrictEqual, equal, ok, rejects } from 'node:assert/strict';
import { DEFAULTS } from '../core/defaults.js';
import { ArgumentError } from '../errors/client-errors.js';
import type { TrackerClient } from '../tracker/options.js';
import {
  TRACKER_STORE_METHODS,
  type TrackerListRequest,
  type TrackerRecord,
  type TrackerStore,
} from '../tracker/store.js';
import { createTransferTracker } from '../tracker/tracker.js';
import type { StoreTest } from './conformance-runner.js';
import { advanced, fresh } from './tracker-fixtures.js';

type Register = StoreTest<TrackerStore>;

const OPERATIONS = [...TRACKER_STORE_METHODS, 'list'] as const;

/** `store` with each operation counted, so that a test can say nothing reached it. */
function counted(store: TrackerStore): { store: TrackerStore; calls: string[] } {
  const calls: string[] = [];
  const spy: Record<string, unknown> = {};
  for (const name of OPERATIONS) {
    const operation = (store as unknown as Record<string, unknown>)[name];
    if (typeof operation !== 'function') continue;
    spy[name] = (...args: unknown[]) => {
      calls.push(name);
      return operation.apply(store, args);
    };
  }
  return { store: spy as unknown as TrackerStore, calls };
}

/** The store's `list`, which the suite requires. */
function listOf(store: TrackerStore): (request: TrackerListRequest) => Promise<TrackerRecord[]> {
  ok(typeof store.list === 'function', 'the store has no list(request): tracker.list needs one');
  return (request) => store.list!(request);
}

/** Every page of a filter, `limit` at a time, by the last id seen; `between` runs after each page. */
async function walk(
  store: TrackerStore,
  filter: Omit<TrackerListRequest, 'limit' | 'after'>,
  limit: number,
  between: (page: number) => Promise<void> = async () => {},
): Promise<string[]> {
  const list = listOf(store);
  const seen: string[] = [];
  for (let page = 0; page < 10_000; page++) {
    const after = seen[seen.length - 1];
    const records = await list({ ...filter, limit, ...(after === undefined ? {} : { after }) });
    ok(records.length <= limit, `list answered ${records.length} records for a limit of ${limit}`);
    seen.push(...records.map((record) => record.transferId));
    if (records.length < limit) return seen;
    await between(page);
  }
  throw new Error('list never came to an end');
}

/** Tracks `count` records of each user, then makes the first `finals` of each final. */
async function seed(store: TrackerStore, users: string[], count: number, finals: number) {
  const records: TrackerRecord[] = [];
  for (const user of users) {
    for (let i = 0; i < count; i++) {
      const record = fresh('track', user);
      ok(await store.track(record));
      records.push(record);
    }
  }
  const final = new Set<string>();
  for (const user of users) {
    for (const record of records.filter((r) => r.userId === user).slice(0, finals)) {
      await finish(store, record.transferId);
      final.add(record.transferId);
    }
  }
  return { records, final };
}

/** Leases a record and completes it final, as the tracker does after dispatching `delivered`. */
async function finish(store: TrackerStore, transferId: string): Promise<void> {
  const claim = await store.claim(transferId, { owner: 'conformance-list', leaseMs: 60_000 });
  ok(claim.outcome === 'claimed', `could not claim ${transferId}`);
  ok(
    await store.complete(claim.lease, {
      record: advanced(claim.lease.record, 'delivered', true),
      nextReadInMs: 60_000,
    }),
  );
}

const sorted = (ids: Iterable<string>) => [...ids].sort();
const noRepeats = (ids: string[]) =>
  equal(new Set(ids).size, ids.length, `a record was listed twice: ${ids}`);

export function registerList(test: Register): void {
  test('list filters by user and by open or final, and pages of any size give one order', async (store) => {
    // One user's id starts another's, and one is not ASCII: each user's records stay apart.
    const users = ['usr_list_a', 'usr_list_a:b', 'usr_list_ü'];
    const { records, final } = await seed(store, users, 3, 1);
    const list = listOf(store);
    for (const userId of [undefined, ...users]) {
      for (const open of [undefined, true, false]) {
        const filter = {
          ...(userId === undefined ? {} : { userId }),
          ...(open === undefined ? {} : { open }),
        };
        const expected = records
          .filter((r) => userId === undefined || r.userId === userId)
          .filter((r) => open === undefined || final.has(r.transferId) !== open)
          .map((r) => r.transferId);
        const whole = await list({ ...filter, limit: 100 });
        const label = JSON.stringify(filter);
        deepStrictEqual(sorted(whole.map((r) => r.transferId)), sorted(expected), label);
        for (const record of whole) {
          deepStrictEqual(
            record,
            await store.get(record.transferId),
            `a listed record is the stored one (${label})`,
          );
          equal(record.final, final.has(record.transferId), label);
        }
        // Pages of 3, then of 1, each from the last id seen: the same records in the same order.
        deepStrictEqual(
          await walk(store, filter, 3),
          whole.map((r) => r.transferId),
          label,
        );
        deepStrictEqual(
          await walk(store, filter, 1),
          whole.map((r) => r.transferId),
          label,
        );
      }
    }
    deepStrictEqual(await list({ userId: 'usr_list_nobody', limit: 10 }), []);
  });

  test('paging by id repeats and skips nothing while records change state between pages', async (store) => {
    const users = ['usr_list_c', 'usr_list_d'];
    const { records, final } = await seed(store, users, 15, 3);
    const open = records.filter((r) => !final.has(r.transferId));
    // Between pages, records on both sides of the page boundary become final.
    let next = 0;
    const churn = async () => {
      for (const record of [open[next], open[open.length - 1 - next]]) {
        if (record && !final.has(record.transferId)) {
          await finish(store, record.transferId);
          final.add(record.transferId);
        }
      }
      next++;
    };
    const all = await walk(store, {}, 4, churn);
    noRepeats(all);
    deepStrictEqual(sorted(all), sorted(records.map((r) => r.transferId)));

    const before = new Set(final);
    const userOpen = await walk(store, { userId: 'usr_list_c', open: true }, 2, churn);
    noRepeats(userOpen);
    const stayedOpen = records.filter((r) => r.userId === 'usr_list_c' && !final.has(r.transferId));
    for (const record of stayedOpen)
      ok(userOpen.includes(record.transferId), `${record.transferId} was skipped`);
    for (const id of userOpen) ok(!before.has(id), `${id} was final before the list began`);
  });

  registerTrackerList(test);
}

/** `tracker.list` over the store: its pages, and its checks before the store is asked. */
function registerTrackerList(test: Register): void {
  const client = {
    bridge: { transfers: { get: () => Promise.reject(new Error('no reads')), list: () => [] } },
  } as unknown as TrackerClient;

  test('tracker.list pages the store with opaque cursors to the last page, and refuses a changed one', async (given) => {
    const { store, calls } = counted(given);
    const { records } = await seed(store, ['usr_list_e'], 12, 0);
    const tracker = createTransferTracker({ client, store, discover: false });
    const first = await tracker.list({ userId: 'usr_list_e', limit: 5 });
    equal(first.data.length, 5);
    ok(typeof first.nextCursor === 'string');
    const second = await tracker.list({ userId: 'usr_list_e', limit: 5, cursor: first.nextCursor! });
    const third = await second.getNextPage();
    equal(third.data.length, 2);
    equal(third.nextCursor, null);
    const paged = [...first.data, ...second.data, ...third.data].map((r) => r.transferId);
    noRepeats(paged);
    deepStrictEqual(sorted(paged), sorted(records.map((r) => r.transferId)));
    const iterated: string[] = [];
    for await (const record of await tracker.list({ limit: 4 })) iterated.push(record.transferId);
    deepStrictEqual(iterated, paged);

    const cursor = first.nextCursor!;
    const flipped = `${cursor.slice(0, 3)}${cursor[3] === 'A' ? 'B' : 'A'}${cursor.slice(4)}`;
    const before = calls.filter((name) => name === 'list').length;
    for (const bad of [flipped, cursor.slice(0, -2), `${cursor}x`, 'not-a-cursor', `x${cursor}`]) {
      await rejects(tracker.list({ userId: 'usr_list_e', cursor: bad }), ArgumentError, bad);
    }
    // A cursor continues the list it came from, with its filters.
    await rejects(tracker.list({ userId: 'usr_list_other', cursor }), ArgumentError);
    await rejects(tracker.list({ userId: 'usr_list_e', open: true, cursor }), ArgumentError);
    await rejects(tracker.list({ cursor }), ArgumentError);
    equal(calls.filter((name) => name === 'list').length, before, 'a refused cursor reached the store');
  });

  test('tracker.list refuses a bad limit or userId before the store is asked', async (given) => {
    const { store, calls } = counted(given);
    const tracker = createTransferTracker({ client, store, discover: false });
    const max = DEFAULTS.tracker.list.maxLimit;
    for (const bad of [{ limit: 0 }, { limit: -1 }, { limit: 1.5 }, { limit: max + 1 }, { userId: '' }]) {
      await rejects(tracker.list(bad), ArgumentError, JSON.stringify(bad));
    }
    await rejects(tracker.list({ open: 'yes' } as never), ArgumentError);
    await rejects(tracker.list({ after: 'x' } as never), ArgumentError);
    deepStrictEqual(calls, []);
    equal((await tracker.list({ limit: max })).data.length, 0);
  });
}
