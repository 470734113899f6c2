/**
 * One process of a fleet, forked by test/callbacks/fleet.test.ts with IPC. `tokens` mode makes API calls
 * through a shared Redis token store; `callbacks` mode serves nodeHandler with the Redis callback
 * store and reports every state its listener handled.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { createCallbackRouter, PartnerClient } from '../../src/index.js';
import {
  createRedisCallbackStore,
  createRedisTokenStore,
  type RedisClientLike,
} from '../../src/redis/index.js';

const mode = process.env.FLEET_MODE;
const redisPort = Number(process.env.FLEET_REDIS_PORT);
const send = (message: unknown) => process.send?.(message);

async function connect(): Promise<{ client: RedisClientLike; close: () => void }> {
  // Half the fleet on each client, so both are exercised side by side on one Redis.
  if (process.env.FLEET_CLIENT === 'node-redis') {
    const client = createClient({
      url: `redis://127.0.0.1:${redisPort}`,
      socket: { reconnectStrategy: false },
      disableOfflineQueue: true,
    });
    client.on('error', () => {});
    await client.connect();
    return {
      client,
      close: () => {
        // Already closed when the server went away (no reconnects): nothing left to close.
        if (client.isOpen) client.destroy();
      },
    };
  }
  const client = new Redis(redisPort, '127.0.0.1', {
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
  return { client, close: () => client.disconnect() };
}

async function tokens(): Promise<void> {
  const redis = await connect();
  const client = new PartnerClient({
    baseUrl: process.env.FLEET_API!,
    clientId: 'fleet',
    clientSecret: 'fleet-secret',
    tokenStore: createRedisTokenStore({ client: redis.client }),
    maxRetries: 0,
  });
  const calls = Number(process.env.FLEET_CALLS);
  const go = async () => {
    let ok = 0;
    for (let i = 0; i < calls; i++) {
      await client.bridge.routes();
      ok++;
    }
    return ok;
  };
  send({ type: 'ready' });
  await new Promise((resolve) => process.once('message', resolve));
  const first = await go();
  send({ type: 'done', ok: first });
  if (process.env.FLEET_AFTER_STOP) {
    // Redis is stopped by the parent now: the calls go on with the process's own token.
    await new Promise((resolve) => process.once('message', resolve));
    const second = await go();
    send({ type: 'done', ok: second });
  }
  redis.close();
  process.disconnect();
}

async function callbacks(): Promise<void> {
  const redis = await connect();
  const failRate = Number(process.env.FLEET_FAIL_RATE ?? 0);
  const router = createCallbackRouter({
    authenticate: 'none',
    store: createRedisCallbackStore({ client: redis.client, prefix: process.env.FLEET_PREFIX ?? 'fleet:' }),
    listenerTimeoutMs: 5_000,
  });
  router.on('error', () => {});
  router.on('transfer', (transfer) => {
    if (Math.random() < failRate) throw new Error('ledger write failed');
    // One clock for every process on the machine: the fleet's handlings of one transfer are put in
    // order by it (the claim serializes them, so they never overlap).
    const at = performance.timeOrigin + performance.now();
    send({ type: 'handled', transferId: transfer.transferId, status: transfer.status, at });
  });
  const server = createServer(router.nodeHandler);
  server.keepAliveTimeout = 1_000;
  server.listen(0, '127.0.0.1', () => {
    send({ type: 'ready', port: (server.address() as AddressInfo).port });
  });
  process.once('message', () => {
    server.close(() => {
      redis.close();
      // Not process.exit: the IPC channel drains first, so the parent sees every report.
      process.disconnect();
    });
    server.closeAllConnections();
  });
}

if (mode === 'tokens') await tokens();
else if (mode === 'callbacks') await callbacks();
else throw new Error(`unknown FLEET_MODE ${mode}`);
