import { Redis } from 'ioredis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { TrackerError, type TrackerStore } from '../../src/index.js';
import { createPostgresTrackerStore, PostgresStoreError } from '../../src/postgres/index.js';
import { createRedisTrackerStore, type RedisClientLike, RedisStoreError } from '../../src/redis/index.js';
import { createPartnerSimulator } from '../../src/testing/index.js';
import { POSTGRES_MISSING, POSTGRES_SERVER, startPostgres } from '../helpers/postgres-server.js';
import { REDIS_MISSING, REDIS_SERVER, startRedis } from '../helpers/redis-server.js';
import { skipOrFail } from '../helpers/shared.js';
import { type Harness, harness, sleep, statesOf, until } from './helpers.js';

/**
 * The tracker's store goes away for 10 s while transfers are in flight: the server process is
 * really stopped (SIGTERM for redis-server with its append-only file, the fast shutdown for
 * PostgreSQL) and started again on the same port with the same data, while the client's pool or
 * connection stays the one the store was given. Nothing is mocked: the simulator over HTTP, a real
 * redis-server, a real PostgreSQL. Only outcomes are asserted, never timings.
 */

skipOrFail(REDIS_SERVER, REDIS_MISSING);
skipOrFail(POSTGRES_SERVER, POSTGRES_MISSING);

const TRANSFERS = 30;
const OUTAGE_MS = 10_000;

/** The path each transfer takes at the simulator, by its index: every ending a read can see. */
const PATHS = [
  ['submitted', 'source_confirmed', 'delivered'],
  ['submitted', 'source_confirmed', 'refund_pending', 'refunded'],
  ['submitted', 'failed'],
] as const;

/** A store server that can be stopped and started again keeping its data. */
interface Outage {
  store: TrackerStore;
  /** The error class the store throws: what each `error` event of the outage carries as cause. */
  storeError: new (
    ...args: never[]
  ) => Error;
  halt(): Promise<void>;
  resume(): Promise<void>;
}

const closers: (() => unknown)[] = [];
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const close of closers.splice(0).reverse()) await close();
});

async function scenario(outage: Outage): Promise<void> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  closers.push(() => process.off('unhandledRejection', onUnhandled));

  const sim = createPartnerSimulator();
  const served = await sim.listen();
  closers.push(() => served.close());
  // Leases short enough that one taken just before the outage is taken again soon after it, and
  // long enough that a read (its share is half the lease) of the simulator on a loaded runner ends
  // in time: the only errors of the outage are then the store's.
  h = harness({ store: outage.store, leaseMs: 3_000 }, sim, served.url);
  const ids: string[] = [];
  for (let i = 0; i < TRANSFERS; i++) ids.push(await h.submitted());
  for (const transferId of ids) await h.tracker.track({ userId: h.userId, transferId });
  await h.tracker.start();
  await until(() => ids.every((id) => statesOf(h!, id).length > 0), 'the submitted of each');
  // In flight at different places when the store goes: some confirmed at the source already.
  for (const [i, id] of ids.entries())
    if (i % 2 === 0 && PATHS[i % 3]!.length > 2) sim.advance(id, 'source_confirmed');

  await outage.halt();
  const errorsBefore = h.errors.length;
  for (const [i, id] of ids.entries()) {
    for (const status of PATHS[i % 3]!.slice(1)) {
      if (sim.transfer(id).status === status) continue;
      sim.advance(id, status, status === 'failed' ? { failureReason: 'reverted' } : {});
    }
  }
  await sleep(OUTAGE_MS);
  const duringOutage = h.errors.slice(errorsBefore);
  await outage.resume();

  // The outage was seen, on `error`, as the store's failure.
  expect(duringOutage.length).toBeGreaterThan(0);
  for (const error of duringOutage) {
    expect(error).toBeInstanceOf(TrackerError);
    expect((error as TrackerError).stage).toBe('store');
    expect((error as TrackerError).cause).toBeInstanceOf(outage.storeError);
  }

  await until(
    () => ids.every((id) => h!.finals.some((t) => t.transferId === id)),
    'the final of every transfer once the store is back',
    20_000,
  );
  for (const [i, id] of ids.entries()) {
    const truth = sim.transfer(id);
    const finals = h.finals.filter((t) => t.transferId === id);
    for (const final of finals) {
      expect(final.status).toBe(truth.status);
      expect(final.transferId).toBe(truth.transferId);
    }
    // In rank order, never backwards: a state dispatched again (its commit lost with the store)
    // repeats the last one, and the last one dispatched is the final.
    const path: readonly string[] = PATHS[i % 3]!;
    const states = statesOf(h, id);
    const ranks = states.map(([status]) => path.indexOf(status));
    expect(ranks.every((rank, k) => rank >= 0 && (k === 0 || rank >= ranks[k - 1]!))).toBe(true);
    expect(states.at(-1)?.[0]).toBe(truth.status);
    for (const [status, previous] of states) {
      if (previous !== undefined) expect(path.indexOf(previous)).toBeLessThan(path.indexOf(status));
    }
  }
  // And the tracker committed them: nothing is left to dispatch, nothing read again after a final.
  for (const id of ids) await until(async () => (await outage.store.get(id))?.final === true, `${id} final`);
  expect(unhandled).toEqual([]);
}

/** A Redis client of each kind, connected to `port`, reconnecting by itself after the server is back. */
const REDIS_CLIENTS: {
  name: string;
  connect(port: number): Promise<{ client: RedisClientLike; close(): unknown }>;
}[] = [
  {
    // Its default retryStrategy reconnects and its offline queue holds commands meanwhile.
    name: 'ioredis',
    async connect(port) {
      const client = new Redis(port, '127.0.0.1');
      client.on('error', () => {});
      return { client, close: () => client.disconnect() };
    },
  },
  {
    // Its default reconnectStrategy reconnects (backing off to 2 s) unless a socket timeout ended it.
    name: 'node-redis',
    async connect(port) {
      const client = createClient({ url: `redis://127.0.0.1:${port}` });
      client.on('error', () => {});
      await client.connect();
      return { client, close: () => client.destroy() };
    },
  },
];

describe.runIf(REDIS_SERVER)('tracker store outage on Redis', () => {
  for (const kind of REDIS_CLIENTS) {
    it(`redis-server stopped for 10 s under ${kind.name}: error events, nothing lost, every final once it is back`, {
      timeout: 60_000,
    }, async () => {
      const server = await startRedis({ durable: true });
      closers.push(() => server.stop());
      const { client, close } = await kind.connect(server.port);
      closers.push(close);
      // The store's own timeout bounds each operation while the client waits for the server.
      await scenario({
        store: createRedisTrackerStore({ client, prefix: 'outage:tracker:' }),
        storeError: RedisStoreError,
        halt: () => server.halt(),
        resume: () => server.resume(),
      });
    });
  }
});

describe.runIf(POSTGRES_SERVER)('tracker store outage on Postgres', () => {
  it('PostgreSQL stopped for 10 s: error events, nothing lost, every final once it is back', {
    timeout: 60_000,
  }, async () => {
    const server = await startPostgres();
    closers.push(() => server.stop());
    const pool = new pg.Pool({ connectionString: server.url, max: 4 });
    // A stopping server ends idle connections: the pool drops them and connects anew later.
    pool.on('error', () => {});
    closers.push(() => pool.end());
    await scenario({
      store: createPostgresTrackerStore({ pool, schema: 'outage_tracker' }),
      storeError: PostgresStoreError,
      halt: () => server.halt(),
      resume: () => server.resume(),
    });
  });
});
