import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { TrackerStore } from '../../src/index.js';
import { createPostgresTrackerStore } from '../../src/postgres/index.js';
import { createRedisTrackerStore } from '../../src/redis/index.js';
import { POSTGRES_MISSING, POSTGRES_SERVER, sharedPostgres } from '../helpers/postgres-server.js';
import { REDIS_MISSING, REDIS_SERVER, sharedRedis } from '../helpers/redis-server.js';
import { skipOrFail, uniqueName } from '../helpers/shared.js';
import { judge } from '../helpers/tracker-fleet.js';
import { type LiveFleetOptions, runLiveFleet } from '../helpers/tracker-live-fleet.js';

/**
 * Two live trackers on one store, nobody killed, nothing thrown: every read of a transfer in turn
 * is slowed past the lease, answered 503 with a `Retry-After` longer than a read may take, or
 * answered at once, and every listener takes just under its bound. A step that outlives its
 * lease must not dispatch what the tracker that took the transfer over dispatches too: every
 * `final` comes once. Real redis-server and PostgreSQL, the simulator behind a fetch that injects
 * the faults. Only outcomes are asserted, never timings.
 */

skipOrFail(REDIS_SERVER, REDIS_MISSING);
skipOrFail(POSTGRES_SERVER, POSTGRES_MISSING);

const LEASE_MS = 3_000;
const LISTENER_TIMEOUT_MS = 1_000;

const SCENARIO: Omit<LiveFleetOptions, 'store' | 'stores'> = {
  transfers: 20,
  users: 4,
  leaseMs: LEASE_MS,
  listenerTimeoutMs: LISTENER_TIMEOUT_MS,
  listenerMs: LISTENER_TIMEOUT_MS - 200,
  slowReadMs: LEASE_MS + 500,
  retryAfterSec: 2,
  deadlineMs: 60_000,
};

function liveOn(
  name: string,
  available: boolean,
  open: (closers: (() => unknown)[]) => Promise<() => TrackerStore>,
) {
  describe.runIf(available)(`two live trackers on ${name}`, () => {
    const closers: (() => unknown)[] = [];
    afterAll(async () => {
      for (const close of closers.reverse()) await close();
    });

    it('slow reads, 503s with Retry-After and slow listeners: every final dispatched once', {
      timeout: 120_000,
    }, async () => {
      const makeStore = await open(closers);
      const result = await runLiveFleet({
        ...SCENARIO,
        store: makeStore(),
        stores: [makeStore(), makeStore()],
      });
      const problems = judge(result);
      const finals = result.dispatches.filter((d) => d.event === 'final');
      const listenerErrors = result.dispatches.filter((d) => d.event === 'error' && d.stage === 'listener');
      console.info(
        `live fleet on ${name}: ${result.fates.size} transfers, ${finals.length} finals dispatched, ` +
          `${listenerErrors.length} listener errors, ${result.reads} reads answered`,
      );
      expect(problems.slice(0, 20)).toEqual([]);
      // Both trackers did work: the transfers were not all taken by one of them.
      expect(new Set(finals.map((d) => d.pid))).toEqual(new Set([1, 2]));
    });
  });
}

liveOn('Redis', REDIS_SERVER, async (closers) => {
  const server = await sharedRedis();
  closers.push(() => server.stop());
  const prefix = `${uniqueName('live')}:tracker:`;
  return () => {
    const client = new Redis(server.port, '127.0.0.1');
    closers.push(() => client.disconnect());
    return createRedisTrackerStore({ client, prefix });
  };
});

liveOn('Postgres', POSTGRES_SERVER, async (closers) => {
  const server = await sharedPostgres();
  closers.push(() => server.stop());
  return () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 4 });
    pool.on('error', () => {});
    closers.push(() => pool.end());
    return createPostgresTrackerStore({ pool, schema: 'live_tracker' });
  };
});
