import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route, transfer } from '../../fixtures/wire.js';
import { createCallbackRouter, type TransferStatus } from '../../src/index.js';
import {
  createRedisCallbackStore,
  createRedisTokenStore,
  type RedisClientLike,
} from '../../src/redis/index.js';
import { callbackStoreConformance } from '../../src/testing/index.js';
import { deliverToFleet } from '../helpers/callback-fleet.js';
import { json, makeClient, mockService } from '../helpers/mock-fetch.js';
import { REDIS_MISSING, REDIS_SERVER, type RedisServer, sharedRedis } from '../helpers/redis-server.js';
import { skipOrFail } from '../helpers/shared.js';

skipOrFail(REDIS_SERVER, REDIS_MISSING);

const post = (body: unknown) =>
  new Request('https://partner.example/callbacks', { method: 'POST', body: JSON.stringify(body) });
const at = (status: TransferStatus, transferId: string) => transfer({ transferId, status });

/**
 * The stores on Redis in cluster mode (ElastiCache or MemoryDB with cluster mode on): a one-node
 * cluster holding every slot refuses a command whose keys hash to different slots (CROSSSLOT)
 * exactly as a cluster of many shards does, and each client routes every command by its key.
 */
describe.runIf(REDIS_SERVER)('Redis stores on a Redis Cluster', { timeout: 30_000 }, () => {
  let server: RedisServer;
  const clients: { name: string; client: RedisClientLike; close: () => Promise<unknown> }[] = [];

  beforeAll(async () => {
    server = await sharedRedis({ cluster: true });
    const ioredis = new Cluster([{ host: '127.0.0.1', port: server.port }], { lazyConnect: true });
    await ioredis.connect();
    const nodeRedis = await createCluster({ rootNodes: [{ url: server.url }] }).connect();
    clients.push({ name: 'ioredis Cluster', client: ioredis, close: () => ioredis.quit() });
    clients.push({ name: 'node-redis createCluster', client: nodeRedis, close: () => nodeRedis.close() });
  });
  afterAll(async () => {
    for (const { close } of clients) await close().catch(() => {});
    await server?.stop();
  });

  const each = (name: string, body: (client: RedisClientLike, prefix: string) => Promise<void>) =>
    it.each(['ioredis Cluster', 'node-redis createCluster'])(`${name} (%s)`, async (which) => {
      const { client } = clients.find((c) => c.name === which)!;
      await body(client, `cluster:${which}:${Math.random()}:`);
    });

  for (const which of ['ioredis Cluster', 'node-redis createCluster']) {
    describe(`callback store (${which})`, () => {
      callbackStoreConformance({ describe, it }, () =>
        createRedisCallbackStore({
          client: clients.find((c) => c.name === which)!.client,
          prefix: `cluster:${which}:conformance:${Math.random()}:`,
        }),
      );
    });
  }

  each(
    'a router delivers each state once: claimed, dispatched, committed; a redelivery, an older state and a failed listener as on one node',
    async (client, prefix) => {
      const router = createCallbackRouter({
        authenticate: 'none',
        store: createRedisCallbackStore({ client, prefix }),
      });
      const errors: unknown[] = [];
      router.on('error', (error) => void errors.push(error));
      const seen: string[] = [];
      let failNext = false;
      router.on('transfer', (t) => {
        if (failNext) {
          failNext = false;
          throw new Error('ledger down');
        }
        seen.push(`${t.transferId} ${t.status}`);
      });

      const first = await router.fetchHandler(post(at('source_confirmed', 'tr_a')));
      expect(first.status, String(errors[0])).toBe(200);
      expect(await first.json()).toMatchObject({ outcome: 'dispatched' });
      // Recorded: the redelivery and the older state are acknowledged without a dispatch.
      for (const again of [at('source_confirmed', 'tr_a'), at('submitted', 'tr_a')]) {
        const response = await router.fetchHandler(post(again));
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ outcome: 'ignored' });
      }
      // A failed listener releases the claim: answered 500, and the service's retry dispatches it.
      failNext = true;
      expect((await router.fetchHandler(post(at('delivered', 'tr_a')))).status).toBe(500);
      expect((await router.fetchHandler(post(at('delivered', 'tr_a')))).status).toBe(200);
      expect(seen).toEqual(['tr_a source_confirmed', 'tr_a delivered']);
      expect(errors.map((e) => (e as Error).message).join('\n')).not.toMatch(/CROSSSLOT|Redis/);
    },
  );

  each('routers sharing the store dispatch one delivery once', async (client, prefix) => {
    const store = createRedisCallbackStore({ client, prefix });
    const body = at('delivered', 'tr_fleet');
    const first = await deliverToFleet(store, body);
    expect(first.dispatched).toBe(1);
    // The others found it claimed (503, redelivered later) or already recorded (200): never a 500.
    for (const status of first.statuses) expect([200, 503]).toContain(status);
    expect((await deliverToFleet(store, body)).dispatched).toBe(0);
  });

  each(
    'a prefix with its own hash tag puts every key on one slot, and still works',
    async (client, prefix) => {
      const router = createCallbackRouter({
        authenticate: 'none',
        store: createRedisCallbackStore({ client, prefix: `{${prefix}}:callbacks:` }),
      });
      router.on('error', () => {});
      const seen: string[] = [];
      router.on('transfer', (t) => void seen.push(t.transferId));
      for (const id of ['tr_x', 'tr_y', 'tr_x'])
        expect((await router.fetchHandler(post(at('submitted', id)))).status).toBe(200);
      expect(seen).toEqual(['tr_x', 'tr_y']);
    },
  );

  each('a cold fleet sharing the token store fetches one token', async (client, prefix) => {
    const service = mockService({ routes: { 'GET /bridge/routes': () => json({ data: [route()] }) } });
    const tokenStore = createRedisTokenStore({ client, prefix });
    // Five clients stand for five processes: the store's lock lets one fetch, the others read it.
    const fleet = Array.from({ length: 5 }, () => makeClient(service, { tokenStore }));
    await Promise.all(fleet.map((c) => c.bridge.routes()));
    await makeClient(service, { tokenStore }).bridge.routes();
    expect(service.count('POST /auth/token')).toBe(1);
  });
});
