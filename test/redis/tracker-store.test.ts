import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { ArgumentError } from '../../src/index.js';
import { createRedisTrackerStore, type RedisClientLike, RedisStoreError } from '../../src/redis/index.js';
import { trackerStoreConformance } from '../../src/testing/index.js';
import { newTrackerRecord } from '../../src/tracker/record.js';
import {
  REDIS_MISSING,
  REDIS_SERVER,
  type RedisServer,
  sharedRedis,
  startRedis,
} from '../helpers/redis-server.js';
import { skipOrFail } from '../helpers/shared.js';

skipOrFail(REDIS_SERVER, REDIS_MISSING);

type Raw = (...args: string[]) => Promise<unknown>;
interface Client {
  name: string;
  client: RedisClientLike;
  raw: Raw;
  close: () => Promise<unknown>;
}

const record = (transferId: string) =>
  newTrackerRecord({ transferId, userId: 'usr_1', source: 'track', now: Date.now() });
const quietLogger = () => ({ debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() });
const unique = (which: string) => `test:${which.replace(/ /g, '-')}:${Math.random().toString(36).slice(2)}:`;

describe.runIf(REDIS_SERVER)('Redis tracker store', { timeout: 30_000 }, () => {
  let server: RedisServer;
  let cluster: RedisServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    // A server of its own: the tests below set maxmemory-policy and pause every client, which
    // would reach the other files on the run's shared one. The cluster is the run's.
    [server, cluster] = await Promise.all([startRedis(), sharedRedis({ cluster: true })]);
    const nodeRedis = await createClient({ url: server.url }).connect();
    const ioredis = new Redis(server.port, '127.0.0.1');
    const ioCluster = new Cluster([{ host: '127.0.0.1', port: cluster.port }], { lazyConnect: true });
    await ioCluster.connect();
    const nodeCluster = await createCluster({ rootNodes: [{ url: cluster.url }] }).connect();
    clients.push(
      {
        name: 'node-redis',
        client: nodeRedis,
        raw: (...a) => nodeRedis.sendCommand(a),
        close: () => nodeRedis.quit(),
      },
      {
        name: 'ioredis',
        client: ioredis,
        raw: (c, ...a) => ioredis.call(c!, ...a),
        close: () => ioredis.quit(),
      },
      {
        name: 'ioredis Cluster',
        client: ioCluster,
        raw: (c, ...a) => ioCluster.call(c!, ...a),
        close: () => ioCluster.quit(),
      },
      {
        name: 'node-redis createCluster',
        client: nodeCluster,
        // Every key of the store shares the prefix's slot: route raw commands by that prefix.
        raw: (...a) => nodeCluster.sendCommand(a[1], false, a),
        close: () => nodeCluster.close(),
      },
    );
  });
  afterAll(async () => {
    for (const { close } of clients) await close().catch(() => {});
    await Promise.all([server?.stop(), cluster?.stop()]);
  });

  const each = (name: string, body: (c: Client, prefix: string) => Promise<void>) =>
    it.each(['node-redis', 'ioredis', 'ioredis Cluster', 'node-redis createCluster'])(
      `${name} (%s)`,
      async (which) => body(clients.find((c) => c.name === which)!, unique(which)),
    );

  for (const which of ['node-redis', 'ioredis', 'ioredis Cluster', 'node-redis createCluster']) {
    describe(which, () => {
      trackerStoreConformance({ describe, it }, () =>
        createRedisTrackerStore({
          client: clients.find((c) => c.name === which)!.client,
          prefix: unique(which),
          logger: quietLogger(),
        }),
      );
    });
  }

  each(
    'keys carry no TTL while a transfer is not final, all on one slot',
    async ({ client, raw }, prefix) => {
      const store = createRedisTrackerStore({ client, prefix, logger: quietLogger() });
      await store.track(record('tr_open'));
      const [claimed] = await store.claimDue({ owner: 'p', leaseMs: 60_000, limit: 10 });
      await store.observe('tr_open', transfer({ transferId: 'tr_open', status: 'submitted' }), 1);
      await store.complete(claimed!, { record: claimed!.record, nextReadInMs: 1_000 });
      const tag = `{${prefix}}`;
      const keys = (await raw('KEYS', `${tag.replace(/[{}*?[\]\\]/g, '\\$&')}*`)) as string[];
      expect(keys.length).toBeGreaterThanOrEqual(5);
      for (const key of keys) {
        expect(await raw('PTTL', key), key).toBe(-1);
        expect(key.startsWith(tag), key).toBe(true);
      }
      const slots = new Set(
        await Promise.all(keys.map((key) => raw('CLUSTER', 'KEYSLOT', key).catch(() => 0))),
      );
      expect(slots.size).toBe(1);
    },
  );

  each(
    'list finds records an earlier version wrote without the list keys; prune takes them out',
    async ({ client, raw }, prefix) => {
      const store = createRedisTrackerStore({ client, prefix, logger: quietLogger() });
      for (const id of ['tr_a', 'tr_b', 'tr_c']) await store.track(record(id));
      const claim = await store.claim('tr_b', { owner: 'p', leaseMs: 60_000 });
      if (claim.outcome !== 'claimed') throw new Error('not claimed');
      const done = { ...claim.lease.record, final: true, updatedAt: Date.now() - 60_000 };
      expect(await store.complete(claim.lease, { record: done, nextReadInMs: 0 })).toBe(true);
      // As an earlier version left them: records, no list keys.
      for (const name of ['list', 'list:state', 'list:user', 'list:user:state', 'list:indexed']) {
        await raw('DEL', `{${prefix}}${name}`);
      }
      const upgraded = createRedisTrackerStore({ client, prefix, logger: quietLogger() });
      const ids = async (request: Parameters<NonNullable<typeof store.list>>[0]) =>
        (await upgraded.list!(request)).map((r) => r.transferId);
      expect(await ids({ limit: 10 })).toEqual(['tr_a', 'tr_b', 'tr_c']);
      expect(await ids({ userId: 'usr_1', open: true, limit: 10 })).toEqual(['tr_a', 'tr_c']);
      expect(await ids({ open: false, limit: 10 })).toEqual(['tr_b']);
      expect(await raw('EXISTS', `{${prefix}}list:indexed`)).toBe(1);

      expect(await upgraded.prune(Date.now())).toBe(1);
      expect(await ids({ limit: 10 })).toEqual(['tr_a', 'tr_c']);
      expect(await ids({ userId: 'usr_1', open: false, limit: 10 })).toEqual([]);
      for (const name of ['list', 'list:state', 'list:user', 'list:user:state']) {
        expect(await raw('ZCARD', `{${prefix}}${name}`), name).toBe(2);
      }
    },
  );

  it('a prefix with its own hash tag keeps it; one that cannot make a hash tag is refused', async () => {
    const { client, raw } = clients.find((c) => c.name === 'ioredis')!;
    const prefix = `app:{${Math.random().toString(36).slice(2)}}:tracker:`;
    const store = createRedisTrackerStore({ client, prefix, logger: quietLogger() });
    await store.track(record('tr_tagged'));
    expect(await raw('ZSCORE', `${prefix}due`, 'tr_tagged')).not.toBeNull();
    for (const bad of ['', '}x', 7]) {
      expect(() => createRedisTrackerStore({ client, prefix: bad as string })).toThrow(ArgumentError);
    }
    expect(() => createRedisTrackerStore({ client: {} as RedisClientLike })).toThrow(ArgumentError);
    expect(() => createRedisTrackerStore({ client, timeoutMs: 0 })).toThrow(ArgumentError);
    expect(() => createRedisTrackerStore({ client, logger: {} as never })).toThrow(ArgumentError);
    await expect(store.track(record('tr_db'), { db: {} })).rejects.toThrow(ArgumentError);
  });

  it('warns once when Redis may evict keys, and once when it cannot tell', async () => {
    const { client, raw } = clients.find((c) => c.name === 'node-redis')!;
    const fine = quietLogger();
    const ok = createRedisTrackerStore({ client, prefix: unique('fine'), logger: fine });
    await ok.get('tr_x');
    await raw('PING');
    expect(fine.warn).not.toHaveBeenCalled();

    await raw('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const logger = quietLogger();
      const store = createRedisTrackerStore({ client, prefix: unique('lru'), logger });
      await store.get('tr_x');
      await store.users(0);
      await vi.waitFor(() => expect(logger.warn).toHaveBeenCalledTimes(1));
      expect(String(logger.warn.mock.calls[0]![0])).toMatch(/maxmemory-policy is allkeys-lru.*noeviction/);
    } finally {
      await raw('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    }

    // A user without the CONFIG command, as on managed Redis.
    await raw('ACL', 'SETUSER', 'limited', 'on', '>limited-pass', '~*', '+@all', '-config');
    const limited = await createClient({
      url: server.url,
      username: 'limited',
      password: 'limited-pass',
    }).connect();
    try {
      const logger = quietLogger();
      const store = createRedisTrackerStore({ client: limited, prefix: unique('acl'), logger });
      await store.track(record('tr_acl'));
      await store.get('tr_acl');
      await vi.waitFor(() => expect(logger.warn).toHaveBeenCalledTimes(1));
      expect(String(logger.warn.mock.calls[0]![0])).toMatch(/could not check Redis's maxmemory-policy/);
      expect((await store.get('tr_acl'))?.transferId).toBe('tr_acl');
    } finally {
      await limited.quit();
    }
  });

  it('an operation Redis does not answer in time fails with a RedisStoreError', async () => {
    const { client, raw } = clients.find((c) => c.name === 'ioredis')!;
    const store = createRedisTrackerStore({
      client,
      prefix: unique('paused'),
      timeoutMs: 100,
      logger: quietLogger(),
    });
    await store.track(record('tr_paused'));
    await raw('CLIENT', 'PAUSE', '600', 'ALL');
    const error = await store.claimDue({ owner: 'p', leaseMs: 1_000, limit: 5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisStoreError);
    expect((error as RedisStoreError).operation).toBe('tracker.claimDue');
    expect((error as Error).message).toMatch(/no answer within 100ms/);
    // Once Redis answers again, so does the store.
    await vi.waitFor(async () => expect((await store.get('tr_paused'))?.transferId).toBe('tr_paused'), {
      timeout: 5_000,
    });
  });

  it('a stopped server is a RedisStoreError', async () => {
    const own = await startRedis();
    const client = new Redis(own.port, '127.0.0.1', { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    client.on('error', () => {});
    const store = createRedisTrackerStore({ client, logger: quietLogger() });
    await own.stop();
    await expect(store.track(record('tr_down'))).rejects.toBeInstanceOf(RedisStoreError);
    client.disconnect();
  });
});
