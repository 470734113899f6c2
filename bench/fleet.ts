/**
 * Callbacks through `nodeHandler` over real HTTP, 64 in flight: the Redis callback store (a real
 * redis-server, ioredis) against the memory store. Each delivery is a new (transfer, state), so
 * every one claims and commits; the p99 is of one delivery's round trip as the sender sees it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { CallbackStore, TransferStatus } from 'partner-s2s-sdk';
import { createRedisCallbackStore } from 'partner-s2s-sdk/redis';
import { transfer } from '../fixtures/wire.js';
import { REDIS_MISSING, REDIS_SERVER, startRedis } from '../test/helpers/redis-server.js';
import { fixed, median, table } from './lib.js';
import { sdk } from './sdk.js';

const N = 5_000;
const IN_FLIGHT = 64;
const STATES: TransferStatus[] = ['submitted', 'source_confirmed', 'delivered'];

async function round(store: CallbackStore, tag: string): Promise<{ perSecond: number; p99Ms: number }> {
  const router = sdk.createCallbackRouter({ authenticate: 'none', store });
  router.on('transfer', () => {});
  const server = createServer(router.nodeHandler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`;
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < N) {
        const i = next++;
        const body = JSON.stringify(
          transfer({ transferId: `${tag}_${Math.floor(i / 3)}`, status: STATES[i % 3]! }),
        );
        const t0 = performance.now();
        const response = await fetch(url, { method: 'POST', body });
        await response.arrayBuffer();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  server.closeAllConnections();
  server.close();
  latencies.sort((a, b) => a - b);
  return { perSecond: N / seconds, p99Ms: latencies[Math.floor(latencies.length * 0.99)]! };
}

export async function fleet(): Promise<void> {
  if (!REDIS_SERVER) {
    console.log(REDIS_MISSING);
    return;
  }
  const redis = await startRedis();
  const client = new Redis(redis.port, '127.0.0.1');
  const rows: Record<string, { perSecond: number[]; p99Ms: number[] }> = {
    memory: { perSecond: [], p99Ms: [] },
    redis: { perSecond: [], p99Ms: [] },
  };
  try {
    for (let r = 0; r < 5; r++) {
      const memory = await round(new sdk.MemoryCallbackStore(), `m${r}`);
      const shared = await round(createRedisCallbackStore({ client, prefix: `bench:${r}:` }), `r${r}`);
      rows.memory!.perSecond.push(memory.perSecond);
      rows.memory!.p99Ms.push(memory.p99Ms);
      rows.redis!.perSecond.push(shared.perSecond);
      rows.redis!.p99Ms.push(shared.p99Ms);
    }
  } finally {
    client.disconnect();
    await redis.stop();
  }
  const base = median(rows.memory!.perSecond);
  table(
    `Callbacks through nodeHandler, ${IN_FLIGHT} in flight, ${N.toLocaleString('en')} per round (median of 5 interleaved rounds)`,
    ['store', 'callbacks/s', 'p99 ms', '× memory'],
    Object.entries(rows).map(([name, row]) => [
      name,
      Math.round(median(row.perSecond)).toLocaleString('en'),
      fixed(median(row.p99Ms), 1),
      fixed(median(row.perSecond) / base, 2),
    ]),
  );
}
