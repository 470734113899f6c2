import { afterEach, describe, expect, it } from 'vitest';
import {
  ArgumentError,
  createTransferTracker,
  DEFAULTS,
  MemoryTrackerStore,
  TrackerError,
  type TrackerStore,
} from '../../src/index.js';
import { newTrackerRecord } from '../../src/stores/index.js';
import { type Harness, harness } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const client = { bridge: { transfers: { get: async () => ({}), list: () => [] } } } as never;

/** A memory store without the operations named: a store written before them. */
function without(names: string[]): TrackerStore {
  const store = new MemoryTrackerStore();
  const kept: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(MemoryTrackerStore.prototype)) {
    const operation = (store as unknown as Record<string, (...a: unknown[]) => unknown>)[name];
    if (name !== 'constructor' && !names.includes(name)) kept[name] = operation!.bind(store);
  }
  return kept as unknown as TrackerStore;
}

describe('tracker.list', () => {
  it('lists what the tracker follows: open until the final state is dispatched, then final, per user', async () => {
    h = harness();
    const [a, b] = await h.executed(2);
    const page = await h.tracker.list({ userId: h.userId });
    expect(page.data.map((r) => r.transferId).sort()).toEqual([a, b].sort());
    expect(page.nextCursor).toBeNull();
    expect((await h.tracker.list({ open: false })).data).toEqual([]);

    await h.tracker.runOnce();
    h.sim.advance(a!, 'source_confirmed');
    h.sim.advance(a!, 'delivered');
    await h.tracker.pollOnce(a!);
    const open = await h.tracker.list({ userId: h.userId, open: true });
    expect(open.data.map((r) => [r.transferId, r.observed?.status])).toEqual([[b, 'submitted']]);
    const final = await h.tracker.list({ open: false });
    expect(final.data.map((r) => [r.transferId, r.observed?.status, r.final])).toEqual([
      [a, 'delivered', true],
    ]);
    expect((await h.tracker.list({ userId: 'usr_nobody' })).data).toEqual([]);
  });

  it('pages by limit, DEFAULTS.tracker.list.limit when none is given', async () => {
    const store = new MemoryTrackerStore();
    const tracker = createTransferTracker({ client, store, discover: false });
    const count = DEFAULTS.tracker.list.limit + 3;
    for (let i = 0; i < count; i++) {
      const transferId = `brt_${String(i).padStart(4, '0')}`;
      await store.track(newTrackerRecord({ userId: 'usr_1', transferId, source: 'track', now: Date.now() }));
    }
    const first = await tracker.list();
    expect(first.data).toHaveLength(DEFAULTS.tracker.list.limit);
    const rest = await first.getNextPage();
    expect(rest.data.map((r) => r.transferId)).toEqual(['brt_0100', 'brt_0101', 'brt_0102']);
    expect(rest.hasNextPage()).toBe(false);
    let seen = 0;
    for await (const _ of await tracker.list({ limit: 7 })) seen++;
    expect(seen).toBe(count);
    // A cursor carries any user id whole.
    for (const transferId of ['brt_ü1', 'brt_ü2']) {
      await store.track(
        newTrackerRecord({ userId: 'usr_ü 日本', transferId, source: 'track', now: Date.now() }),
      );
    }
    const one = await tracker.list({ userId: 'usr_ü 日本', limit: 1 });
    const two = await tracker.list({ userId: 'usr_ü 日本', limit: 1, cursor: one.nextCursor! });
    expect([...one.data, ...two.data].map((r) => r.transferId)).toEqual(['brt_ü1', 'brt_ü2']);
  });

  it('a store without list tracks as before; list rejects with a TrackerError saying so, after checking its arguments', async () => {
    const store = without(['list']);
    const tracker = createTransferTracker({ client, store, discover: false });
    expect(await tracker.track({ userId: 'usr_1', transferId: 'brt_1' })).toBe(true);
    await expect(tracker.list({ limit: 0 })).rejects.toBeInstanceOf(ArgumentError);
    const error = await tracker.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrackerError);
    expect(error).toMatchObject({ stage: 'store' });
    expect((error as Error).message).toMatch(/no list operation/);
  });

  it("a store's failure or an answer that is not records is a TrackerError, the cause kept", async () => {
    const store = new MemoryTrackerStore();
    const tracker = createTransferTracker({ client, store, discover: false });
    const down = new Error('connection reset');
    store.list = async () => {
      throw down;
    };
    const failed = await tracker.list().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(TrackerError);
    expect((failed as TrackerError).cause).toBe(down);
    for (const answer of [
      undefined,
      [{ userId: 'usr_1' }],
      Array(DEFAULTS.tracker.list.limit + 2).fill(null),
    ]) {
      store.list = async () => answer as never;
      await expect(tracker.list()).rejects.toBeInstanceOf(TrackerError);
    }
  });
});
