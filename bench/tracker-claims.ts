/**
 * Claims per second of the Redis tracker store against a bare claim on the same redis-server in
 * the same run: 8 clients drain 10,000 due transfers, each claiming 50 at a time and completing
 * every lease (final) before claiming again. The bare claim is the research's ZSET + Lua, with
 * no records: `ZRANGEBYSCORE -inf now LIMIT` → re-score to the lease → `HINCRBY` fence, and a
 * fenced `ZREM` as its complete. The store adds records (JSON), observations, users and the
 * final set on top: the ratio is what those cost.
 */
import { Redis } from 'ioredis';
import { createRedisTrackerStore } from 'partner-s2s-sdk/redis';
import { newTrackerRecord } from '../src/tracker/record.js';
import type { TrackerStore } from '../src/tracker/store.js';
import { REDIS_MISSING, REDIS_SERVER, startRedis } from '../test/helpers/redis-server.js';
import { context, fixed, median, pairedRatio, table } from './lib.js';

const TRANSFERS = 10_000;
const CLIENTS = 8;
const LIMIT = 50;
const ROUNDS = 5;

const BARE_CLAIM = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
  out[#out + 1] = id
  out[#out + 1] = redis.call('HINCRBY', KEYS[2], id, 1)
end
return out`;
const BARE_COMPLETE = `
if tonumber(redis.call('HGET', KEYS[2], ARGV[1])) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
return 1`;

/** Runs `work` on `clients` side by side until each finds nothing more; answers claims per second. */
async function drain(clients: Redis[], work: (client: Redis) => Promise<number>): Promise<number> {
  const started = performance.now();
  const counts = await Promise.all(
    clients.map(async (client) => {
      let claimed = 0;
      for (let got = await work(client); got > 0; got = await work(client)) claimed += got;
      return claimed;
    }),
  );
  const total = counts.reduce((a, b) => a + b, 0);
  if (total !== TRANSFERS) throw new Error(`claimed ${total} of ${TRANSFERS}: a claim was lost or doubled`);
  return TRANSFERS / ((performance.now() - started) / 1000);
}

async function storeRound(clients: Redis[], round: number): Promise<number> {
  const prefix = `bench:store:${round}:`;
  const stores = clients.map((client) => createRedisTrackerStore({ client, prefix }));
  const now = Date.now();
  for (let i = 0; i < TRANSFERS; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, TRANSFERS - i) }, (_, k) =>
        stores[k % CLIENTS]!.track(
          newTrackerRecord({
            transferId: `tr_${i + k}`,
            userId: `usr_${(i + k) % 50}`,
            source: 'track',
            now,
          }),
        ),
      ),
    );
  }
  const byClient = new Map<Redis, TrackerStore>(clients.map((client, i) => [client, stores[i]!]));
  return drain(clients, async (client) => {
    const store = byClient.get(client)!;
    const leases = await store.claimDue({ owner: 'bench', leaseMs: 60_000, limit: LIMIT });
    const done = await Promise.all(
      leases.map((lease) =>
        store.complete(lease, {
          record: { ...lease.record, final: true, dispatched: 'delivered', dispatchedRank: 4, reads: 1 },
          nextReadInMs: 0,
        }),
      ),
    );
    if (done.includes(false)) throw new Error('a fenced complete was refused with no other owner');
    return leases.length;
  });
}

async function bareRound(clients: Redis[], round: number): Promise<number> {
  const due = `{bench:bare:${round}}:due`;
  const fences = `{bench:bare:${round}}:fences`;
  for (let i = 0; i < TRANSFERS; i += 1_000) {
    const members = Array.from({ length: 1_000 }, (_, k) => ['0', `tr_${i + k}`]).flat();
    await clients[0]!.call('ZADD', due, ...members);
  }
  return drain(clients, async (client) => {
    const reply = (await client.call(
      'EVAL',
      BARE_CLAIM,
      '2',
      due,
      fences,
      String(LIMIT),
      '60000',
    )) as string[];
    const completes: Promise<unknown>[] = [];
    for (let i = 0; i < reply.length; i += 2) {
      completes.push(client.call('EVAL', BARE_COMPLETE, '2', due, fences, reply[i]!, String(reply[i + 1])));
    }
    await Promise.all(completes);
    return reply.length / 2;
  });
}

export async function trackerClaims(): Promise<void> {
  if (!REDIS_SERVER) {
    console.log(REDIS_MISSING);
    return;
  }
  const redis = await startRedis();
  const clients = Array.from({ length: CLIENTS }, () => new Redis(redis.port, '127.0.0.1'));
  const store: number[] = [];
  const bare: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // The order alternates, so neither side always runs on the warmer server.
      if (round % 2 === 0) {
        store.push(await storeRound(clients, round));
        bare.push(await bareRound(clients, round));
      } else {
        bare.push(await bareRound(clients, round));
        store.push(await storeRound(clients, round));
      }
    }
  } finally {
    for (const client of clients) client.disconnect();
    await redis.stop();
  }
  table(
    `Tracker claims on Redis: ${CLIENTS} clients drain ${TRANSFERS.toLocaleString('en')} due transfers, ${LIMIT} per claim, each completed (median of ${ROUNDS} alternating rounds)`,
    ['claim', 'claims/s', '× bare'],
    [
      [
        'createRedisTrackerStore',
        Math.round(median(store)).toLocaleString('en'),
        fixed(pairedRatio(store, bare)),
      ],
      ['bare ZSET + Lua', Math.round(median(bare)).toLocaleString('en'), '1.00'],
    ],
  );
  // Records, observations, users and the final set cost more than the bare claim's ids. What the
  // store's work costs; its growth with the number of transfers is `trackerScale`'s row.
  context('Redis tracker claim time × bare ZSET + Lua claim', `${fixed(pairedRatio(bare, store))}×`);
}
