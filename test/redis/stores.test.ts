import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { ArgumentError, createCallbackRouter, type TransferStatus } from '../../src/index.js';
import {
  createRedisCallbackStore,
  createRedisTokenStore,
  type RedisClientLike,
  RedisStoreError,
} from '../../src/redis/index.js';
import type { StoredToken } from '../../src/stores/index.js';
import { callbackStoreConformance } from '../../src/testing/index.js';
import { deliverToFleet } from '../helpers/callback-fleet.js';
import {
  REDIS_MISSING,
  REDIS_SERVER,
  type RedisServer,
  sharedRedis,
  startRedis,
} from '../helpers/redis-server.js';
import { skipOrFail } from '../helpers/shared.js';

skipOrFail(REDIS_SERVER, REDIS_MISSING);

describe.runIf(REDIS_SERVER)('Redis stores on a real redis-server', () => {
  let server: RedisServer;
  const clients: {
    name: string;
    client: RedisClientLike;
    raw: (...args: string[]) => Promise<unknown>;
    quit: () => Promise<unknown>;
  }[] = [];

  beforeAll(async () => {
    server = await sharedRedis();
    const nodeRedis = await createClient({ url: server.url }).connect();
    const ioredis = new Redis(server.port, '127.0.0.1');
    const raw = {
      'node-redis': (...args: string[]) => nodeRedis.sendCommand(args),
      ioredis: (command: string, ...args: string[]) => ioredis.call(command, ...args),
    };
    clients.push({
      name: 'node-redis',
      client: nodeRedis,
      raw: raw['node-redis'],
      quit: () => nodeRedis.quit(),
    });
    clients.push({ name: 'ioredis', client: ioredis, raw: raw.ioredis, quit: () => ioredis.quit() });
  });
  afterAll(async () => {
    for (const { quit } of clients) await quit().catch(() => {});
    await server?.stop();
  });

  const each = (
    name: string,
    body: (
      client: RedisClientLike,
      prefix: string,
      raw: (...args: string[]) => Promise<unknown>,
    ) => Promise<void>,
  ) =>
    it.each(['node-redis', 'ioredis'])(`${name} (%s)`, async (which) => {
      const { client, raw } = clients.find((c) => c.name === which)!;
      await body(client, `test:${which}:${name.length}:${Math.random()}:`, raw);
    });

  each(
    'token store: get, set with expiry, delete, and a lock only one holder takes',
    async (client, prefix) => {
      const store = createRedisTokenStore({ client, prefix });
      const token: StoredToken = {
        accessToken: 'tok_abc',
        issuedAt: Date.now(),
        expiresAt: Date.now() + 60_000,
        scopes: ['bridge:read'],
      };
      expect(await store.get('k')).toBeUndefined();
      await store.set('k', token);
      expect(await store.get('k')).toEqual(token);
      await store.delete('k');
      expect(await store.get('k')).toBeUndefined();
      const first = await store.lock!('k', 10_000);
      const second = await store.lock!('k', 10_000);
      expect(first.acquired).toBe(true);
      expect(second.acquired).toBe(false);
      if (first.acquired) await first.release();
      expect((await store.lock!('k', 10_000)).acquired).toBe(true);
    },
  );

  for (const which of ['node-redis', 'ioredis']) {
    describe(`callback store (${which})`, () => {
      callbackStoreConformance({ describe, it }, () =>
        createRedisCallbackStore({
          client: clients.find((c) => c.name === which)!.client,
          prefix: `test:${which}:conformance:${Math.random()}:`,
        }),
      );
    });
  }

  each('routers sharing the store dispatch one delivery once', async (client, prefix) => {
    const fleet = await deliverToFleet(
      createRedisCallbackStore({ client, prefix }),
      transfer({ transferId: 'tr_fleet', status: 'delivered' }),
    );
    expect(fleet.dispatched).toBe(1);
    expect(fleet.statuses.filter((status) => status === 500)).toEqual([]);
  });

  each(
    'a state an earlier build recorded under <prefix>state:<id> is still honoured; new ones go to <prefix>{<id>}:state',
    async (client, prefix, raw) => {
      const record = (status: string, rank: number, final: boolean) =>
        JSON.stringify({ status, rank, final });
      await raw('SET', `${prefix}state:tr_done`, record('delivered', 4, true));
      await raw('SET', `${prefix}state:tr_mid`, record('submitted', 1, false));
      await raw('SET', `${prefix}state:tr_odd`, 'not json');
      const router = createCallbackRouter({
        authenticate: 'none',
        store: createRedisCallbackStore({ client, prefix }),
      });
      router.on('error', () => {});
      const seen: string[] = [];
      router.on('transfer', (t) => void seen.push(`${t.transferId} ${t.status}`));
      const deliver = async (transferId: string, status: TransferStatus) => {
        const response = await router.fetchHandler(
          new Request('https://partner.example/callbacks', {
            method: 'POST',
            body: JSON.stringify(transfer({ transferId, status })),
          }),
        );
        return { status: response.status, ...((await response.json()) as { outcome: string }) };
      };
      // Already delivered before the upgrade: its redelivery and an older state are not dispatched,
      // and the claim taken to look is let go (a second redelivery is not answered busy).
      for (const status of ['delivered', 'source_confirmed', 'delivered'] as const) {
        expect(await deliver('tr_done', status)).toMatchObject({ status: 200, outcome: 'ignored' });
      }
      // A state recorded before the upgrade orders what comes after it.
      expect(await deliver('tr_mid', 'submitted')).toMatchObject({ status: 200, outcome: 'ignored' });
      expect(await deliver('tr_mid', 'source_confirmed')).toMatchObject({
        status: 200,
        outcome: 'dispatched',
      });
      // An unreadable old record counts as none: at worst a state is dispatched once more.
      expect(await deliver('tr_odd', 'submitted')).toMatchObject({ status: 200, outcome: 'dispatched' });
      expect(seen).toEqual(['tr_mid source_confirmed', 'tr_odd submitted']);
      expect(JSON.parse(String(await raw('GET', `${prefix}{tr_mid}:state`)))).toEqual({
        status: 'source_confirmed',
        rank: 2,
        final: false,
      });
    },
  );

  it('refuses something that is not a Redis client', () => {
    expect(() => createRedisTokenStore({ client: {} as RedisClientLike })).toThrow(ArgumentError);
    expect(() => createRedisCallbackStore({ client: null as unknown as RedisClientLike })).toThrow(
      ArgumentError,
    );
    // An empty hash tag makes a cluster hash whole keys: a transfer's two keys on two slots.
    expect(() => createRedisCallbackStore({ client: clients[0]!.client, prefix: 'app{}:' })).toThrow(
      /prefix.*\{\}/,
    );
  });

  it('a stopped server is a RedisStoreError that names no token', async () => {
    const own = await startRedis();
    const client = new Redis(own.port, '127.0.0.1', { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    client.on('error', () => {});
    const store = createRedisTokenStore({ client });
    await own.stop();
    const token = {
      accessToken: 'tok_secret',
      issuedAt: Date.now(),
      expiresAt: Date.now() + 60_000,
      scopes: [],
    };
    const error = await store.set('k', token).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisStoreError);
    expect(JSON.stringify(error)).not.toContain('tok_secret');
    expect(String((error as Error).message)).not.toContain('tok_secret');
    client.disconnect();
  });
});
