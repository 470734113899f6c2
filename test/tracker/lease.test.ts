import { afterEach, describe, expect, it } from 'vitest';
import {
  ArgumentError,
  type BridgeTransfer,
  createTransferTracker,
  MemoryTrackerStore,
  PartnerClient,
  ServiceUnavailableError,
  TimeoutError,
  TrackerError,
  type TrackerStore,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { type Harness, harness, ROUTE, statesOf, until } from './helpers.js';

/**
 * A tracker dispatches only while it holds the transfer's lease, and each part of a step fits in
 * it: the read within its own share of `leaseMs` whatever the client's settings, each listener
 * within `listenerTimeoutMs`. The store's clock is moved by hand where a lease must run out.
 */

let h: Harness | undefined;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const READ = /\/bridge\/transfers\/[^/]+$/;
const isRead = (input: Request | URL | string, init?: RequestInit) =>
  (init?.method ?? 'GET').toUpperCase() === 'GET' && READ.test(new URL(String(input)).pathname);

/** A transfer the simulator moved to `delivered`, not tracked yet. */
async function deliveredTransfer(sim: PartnerSimulator): Promise<{ userId: string; transferId: string }> {
  const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
  const { transferId } = await client.bridge.construct({
    userId: sim.demo.userId,
    routeId: ROUTE,
    amount: '1',
  });
  for (const status of ['submitted', 'source_confirmed', 'delivered'] as const)
    sim.advance(transferId, status);
  return { userId: sim.demo.userId, transferId };
}

/** Two trackers on one memory store whose clock the test moves; `fetchA` is tracker A's. */
function twoTrackers(sim: PartnerSimulator, store: TrackerStore, fetchA: typeof fetch) {
  const finals: [string, BridgeTransfer][] = [];
  const transitions: [string, string][] = [];
  const errors: unknown[] = [];
  const make = (name: string, fetch: typeof globalThis.fetch) => {
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch });
    const tracker = createTransferTracker({ client, store, discover: false });
    tracker.on('transition', (transfer) => void transitions.push([name, transfer.status]));
    tracker.on('final', (transfer) => void finals.push([name, transfer]));
    tracker.on('error', (error) => void errors.push(error));
    return tracker;
  };
  return { a: make('a', fetchA), b: make('b', sim.fetch), finals, transitions, errors };
}

describe('a step dispatches only while it holds its lease', () => {
  it('a read that outlived the lease, the transfer taken over meanwhile, dispatches nothing', async () => {
    const sim = createPartnerSimulator();
    cleanups.push(() => sim.close());
    let clock = Date.now();
    const store = new MemoryTrackerStore({ now: () => clock });
    let arrived!: () => void;
    const reading = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let answer!: () => void;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    // Tracker A's read arrives, then waits until tracker B has taken the transfer over and finished.
    const slow = (async (input: Request | URL | string, init?: RequestInit) => {
      if (isRead(input, init)) {
        arrived();
        await held;
      }
      return sim.fetch(input, init);
    }) as typeof fetch;
    const t = twoTrackers(sim, store, slow);
    const transfer = await deliveredTransfer(sim);
    await t.a.track(transfer);
    const roundA = t.a.runOnce();
    await reading;
    clock += 31_000; // A's lease (30 s) ran out on the store's clock
    expect(await t.b.runOnce()).toEqual({ read: 1, dispatched: 1 });
    answer();
    expect(await roundA).toEqual({ read: 1, dispatched: 0 });
    expect(t.finals.map(([name, f]) => [name, f.status])).toEqual([['b', 'delivered']]);
    expect(t.transitions).toEqual([['b', 'delivered']]);
    expect((await store.get(transfer.transferId))?.final).toBe(true);
  });

  it('a holder that lost its lease between two listeners of one state calls none after', async () => {
    const sim = createPartnerSimulator();
    cleanups.push(() => sim.close());
    let clock = Date.now();
    const store = new MemoryTrackerStore({ now: () => clock });
    const t = twoTrackers(sim, store, sim.fetch);
    // A stalls past its lease inside its transition listener; B takes the transfer and finishes it.
    let stalled = false;
    t.a.on('transition', async () => {
      if (stalled) return;
      stalled = true;
      clock += 31_000;
      await t.b.runOnce();
    });
    const transfer = await deliveredTransfer(sim);
    await t.a.track(transfer);
    expect(await t.a.runOnce()).toEqual({ read: 1, dispatched: 0 });
    expect(t.finals.map(([name, f]) => [name, f.status])).toEqual([['b', 'delivered']]);
  });

  it('a renewal that came back too late for a listener to end within the lease calls none', async () => {
    const sim = createPartnerSimulator();
    cleanups.push(() => sim.close());
    const memory = new MemoryTrackerStore();
    let slow = true;
    // The store answers a renewal after 1.2 s of a 1.5 s lease: a listener of 0.5 s could outlive it.
    const store = new Proxy(memory, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (name !== 'renew') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<TrackerStore['renew']>) => {
          if (slow) await new Promise((resolve) => setTimeout(resolve, 1_200));
          return target.renew(...args);
        };
      },
    });
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    const tracker = createTransferTracker({
      client,
      store,
      leaseMs: 1_500,
      schedule: { submitted: 50 }, // an undispatched state is tried again this soon
      discover: false,
    });
    const finals: BridgeTransfer[] = [];
    const errors: unknown[] = [];
    tracker.on('final', (transfer) => void finals.push(transfer));
    tracker.on('error', (error) => void errors.push(error));
    const transfer = await deliveredTransfer(sim);
    await tracker.track(transfer);
    expect(await tracker.runOnce()).toEqual({ read: 1, dispatched: 0 });
    expect(finals).toEqual([]);
    expect(errors.some((e) => e instanceof TrackerError && e.stage === 'store')).toBe(true);
    slow = false;
    await until(async () => (await tracker.runOnce()).dispatched === 1, 'dispatched once the store is quick');
    expect(finals.map((f) => f.status)).toEqual(['delivered']);
  });

  it('a store written before renew is refused at construction, naming what it lacks', () => {
    const sim = createPartnerSimulator();
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    const memory = new MemoryTrackerStore();
    const old = Object.fromEntries(
      ['track', 'claimDue', 'claim', 'complete', 'release', 'observe', 'get', 'users', 'prune'].map(
        (name) => [
          name,
          (memory as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!.bind(memory),
        ],
      ),
    );
    expect(() => createTransferTracker({ client, store: old as never })).toThrow(ArgumentError);
    expect(() => createTransferTracker({ client, store: old as never })).toThrow(/renew/);
  });
});

describe('stop() and the reads under way', () => {
  it('stop() abandons a read under way: no error, and the lease goes back for another tracker', async () => {
    const sim = createPartnerSimulator();
    cleanups.push(() => sim.close());
    const store = new MemoryTrackerStore();
    let arrived!: () => void;
    const reading = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const hanging = (async (input: Request | URL | string, init?: RequestInit) => {
      if (!isRead(input, init)) return sim.fetch(input, init);
      arrived();
      return new Promise<Response>((_, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }),
      );
    }) as typeof fetch;
    const t = twoTrackers(sim, store, hanging);
    const transfer = await deliveredTransfer(sim);
    await t.a.track(transfer);
    await t.a.start();
    await reading;
    await t.a.stop();
    expect(t.errors).toEqual([]);
    expect(await t.b.runOnce()).toEqual({ read: 1, dispatched: 1 });
    expect(t.finals.map(([name, f]) => [name, f.status])).toEqual([['b', 'delivered']]);
  });
});

describe('every part of a step fits in the lease', () => {
  it("a read that hangs is cut within the read's share of the lease, whatever the client's timeoutMs", async () => {
    const sim = createPartnerSimulator();
    cleanups.push(() => sim.close());
    let reads = 0;
    const hanging = (async (input: Request | URL | string, init?: RequestInit) => {
      if (!isRead(input, init)) return sim.fetch(input, init);
      reads++;
      return new Promise<Response>((_, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }),
      );
    }) as typeof fetch;
    const client = new PartnerClient({
      baseUrl: sim.baseUrl,
      ...sim.demo.credentials,
      fetch: hanging,
      timeoutMs: 600_000,
      maxRetries: 5,
    });
    const tracker = createTransferTracker({ client, leaseMs: 1_500, discover: false });
    tracker.on('error', () => {});
    const transfer = await deliveredTransfer(sim);
    await tracker.track(transfer);
    await expect(tracker.pollOnce(transfer.transferId)).rejects.toBeInstanceOf(TimeoutError);
    expect(reads).toBeGreaterThanOrEqual(1);
  });

  it('a Retry-After longer than what is left of the read ends it at once, without waiting', async () => {
    const sim = createPartnerSimulator();
    cleanups.push(() => sim.close());
    let reads = 0;
    const busy = (async (input: Request | URL | string, init?: RequestInit) => {
      if (!isRead(input, init)) return sim.fetch(input, init);
      reads++;
      return new Response(JSON.stringify({ statusCode: 503, error: 'x', code: 'BUSY', message: 'busy' }), {
        status: 503,
        headers: { 'content-type': 'application/json', 'retry-after': '45' },
      });
    }) as typeof fetch;
    const client = new PartnerClient({
      baseUrl: sim.baseUrl,
      ...sim.demo.credentials,
      fetch: busy,
      maxRetries: 5,
    });
    const tracker = createTransferTracker({ client, discover: false });
    tracker.on('error', () => {});
    const transfer = await deliveredTransfer(sim);
    await tracker.track(transfer);
    const error = await tracker.pollOnce(transfer.transferId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as ServiceUnavailableError).retryAfterMs).toBe(45_000);
    expect(reads).toBe(1);
  });

  it('each listener is bound by listenerTimeoutMs, a third of leaseMs unless given: past it the state comes again', async () => {
    for (const [options, bound] of [
      [{ leaseMs: 1_500 }, 500],
      [{ leaseMs: 3_000, listenerTimeoutMs: 200 }, 200],
    ] as const) {
      h = harness(options);
      const id = await h.submitted();
      let first = true;
      h.tracker.on('transition', async () => {
        if (!first) return;
        first = false;
        await new Promise((resolve) => setTimeout(resolve, bound + 300));
      });
      await h.tracker.track({ userId: h.userId, transferId: id });
      await h.tracker.start();
      await until(async () => (await h!.store.get(id))?.dispatched === 'submitted', 'submitted recorded');
      expect(statesOf(h, id)).toEqual([
        ['submitted', undefined],
        ['submitted', undefined],
      ]);
      const late = h.errors.find((e) => e instanceof TrackerError && e.stage === 'listener') as TrackerError;
      expect(late?.message).toContain(`within ${bound} ms`);
      await h.close();
      h = undefined;
    }
  });

  it('refuses a leaseMs that cannot hold a read and a listener, naming both', () => {
    const sim = createPartnerSimulator();
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    const refused = (() => {
      try {
        createTransferTracker({ client, leaseMs: 30_000, listenerTimeoutMs: 20_000 });
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(ArgumentError);
    for (const figure of ['30000', '15000', '20000']) expect((refused as Error).message).toContain(figure);
    expect(() => createTransferTracker({ client, listenerTimeoutMs: 0 })).toThrow(ArgumentError);
    expect(() => createTransferTracker({ client, leaseMs: 30_000, listenerTimeoutMs: 15_000 })).not.toThrow();
  });
});
