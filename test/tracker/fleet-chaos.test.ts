import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresTrackerStore } from '../../src/postgres/index.js';
import { createRedisTrackerStore } from '../../src/redis/index.js';
import { POSTGRES_MISSING, POSTGRES_SERVER, sharedPostgres } from '../helpers/postgres-server.js';
import { REDIS_MISSING, REDIS_SERVER, sharedRedis } from '../helpers/redis-server.js';
import { skipOrFail, uniqueName } from '../helpers/shared.js';
import { type ChaosOptions, type ChaosResult, judge, runChaos } from '../helpers/tracker-fleet.js';

/**
 * A tracker fleet under chaos on each shared store: 3 worker processes with callbacks off follow
 * 300 transfers of 30 users through every ending while one worker is SIGKILLed and respawned every
 * second. Nothing is mocked: the simulator over HTTP, a real redis-server, a real PostgreSQL.
 * Only outcomes are asserted, never timings.
 */

skipOrFail(REDIS_SERVER, REDIS_MISSING);
skipOrFail(POSTGRES_SERVER, POSTGRES_MISSING);

const SCENARIO = {
  transfers: 300,
  users: 30,
  workers: 3,
  killEveryMs: 1_000,
  kills: 3,
  leaseMs: 5_000,
  deadlineMs: 40_000,
};

function expectKept(result: ChaosResult) {
  const problems = judge(result);
  const dispatched = result.dispatches.filter((d) => d.event !== 'error');
  const twice = dispatched.filter((d) => d.event === 'final').length - result.fates.size;
  console.info(
    `fleet chaos: ${result.fates.size} transfers, ${result.killed.size} workers killed of ${result.spawned} started, ` +
      `${dispatched.length} dispatches, ${twice} final dispatched twice, ${result.reads} reads; ` +
      `moved for ${result.drivenMs} ms, all final ${result.settledMs} ms later`,
  );
  if (problems.length > 0) {
    // What the first broken transfer saw, and what the workers reported on `error`.
    const id = problems[0]!.split(':')[0];
    console.info(result.dispatches.filter((d) => d.id === id || d.event === 'error').slice(0, 40));
  }
  expect(problems.slice(0, 20)).toEqual([]);
  // The chaos happened: workers were killed while transfers were in flight.
  expect(result.killed.size).toBeGreaterThanOrEqual(SCENARIO.kills);
  expect(new Set(result.fates.values())).toEqual(new Set(['delivered', 'refunded', 'failed', 'expired']));
}

/** The chaos on one store: `open` starts its server and answers the parent's store and the workers' env. */
function chaosOn(
  name: string,
  available: boolean,
  open: (closers: (() => unknown)[]) => Promise<Pick<ChaosOptions, 'store' | 'storeEnv'>>,
) {
  describe.runIf(available)(`tracker fleet chaos on ${name}`, () => {
    const closers: (() => unknown)[] = [];
    afterAll(async () => {
      for (const close of closers.reverse()) await close();
    });

    it('every transfer ends in its true final state, nothing backwards, duplicates only from killed holders', {
      timeout: 120_000,
    }, async () => {
      expectKept(await runChaos({ ...SCENARIO, ...(await open(closers)) }));
    });
  });
}

chaosOn('Redis', REDIS_SERVER, async (closers) => {
  const server = await sharedRedis();
  closers.push(() => server.stop());
  const client = new Redis(server.port, '127.0.0.1');
  closers.push(() => client.disconnect());
  const prefix = `${uniqueName('chaos')}:tracker:`;
  return {
    store: createRedisTrackerStore({ client, prefix }),
    storeEnv: { FLEET_STORE: 'redis', FLEET_STORE_URL: server.url, FLEET_PREFIX: prefix },
  };
});

chaosOn('Postgres', POSTGRES_SERVER, async (closers) => {
  const server = await sharedPostgres();
  closers.push(() => server.stop());
  const pool = new pg.Pool({ connectionString: server.url, max: 4 });
  pool.on('error', () => {});
  closers.push(() => pool.end());
  const schema = 'chaos_tracker';
  return {
    store: createPostgresTrackerStore({ pool, schema }),
    storeEnv: { FLEET_STORE: 'postgres', FLEET_STORE_URL: server.url, FLEET_PREFIX: schema },
  };
});
