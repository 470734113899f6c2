/**
 * The tracker at scale: what a store's claim of due work costs with 10,000, 100,000 and 1,000,000
 * tracked transfers, nine in ten of them final (a tracker that has run for a while: the newest
 * tenth still open), on Postgres and on Redis. The three sizes live side by side on one server (a schema or a key prefix each),
 * and the rounds rotate over them, so that the machine's moods fall on all three alike. One client
 * claims 50 due transfers at a time (`claimDue`, timed) and completes each lease due again at once
 * (untimed), so every size keeps its due work; a claim must cost the same however many transfers
 * the store holds: the indexes and the key layout find the due ones, never a scan.
 *
 * Loading is in bulk: on Postgres one `INSERT … SELECT … FROM generate_series` a 100,000 rows into
 * the store's own table (its migration made it), on Redis the store's own `track` script pipelined
 * 5,000 at a time; each size is then read back through the store, to hold the bulk load to what
 * the store writes. `TRACKER_SCALES=10000,100000` runs other sizes.
 */
import { isDeepStrictEqual } from 'node:util';
import { Redis } from 'ioredis';
import type { TrackerStore } from 'partner-s2s-sdk';
import { createPostgresTrackerStore, migratePostgres } from 'partner-s2s-sdk/postgres';
import { createRedisTrackerStore } from 'partner-s2s-sdk/redis';
import { newTrackerRecord, type TrackerRecord } from 'partner-s2s-sdk/stores';
import pg from 'pg';
import { transfer } from '../fixtures/wire.js';
import { TRACK, TRACKER_KEYS } from '../src/redis/tracker-scripts.js';
import { stateRank } from '../src/schemas/states.js';
import { POSTGRES_MISSING, POSTGRES_SERVER, startPostgres } from '../test/helpers/postgres-server.js';
import { REDIS_MISSING, REDIS_SERVER, startRedis } from '../test/helpers/redis-server.js';
import { bars, fixed, median, pairedRatio, ratioVerdict, table } from './lib.js';

const SCALES = (process.env.TRACKER_SCALES ?? '10000,100000,1000000').split(',').map(Number);
/** Transfers a claim takes, as the tracker's rounds take them. */
const LIMIT = 50;
/** Claims timed per size and round, and rounds. */
const CLAIMS = 20;
const ROUNDS = 15;
/** The tracker's clock when the transfers were tracked (informational for a store). */
const TRACKED_AT = Date.now() - 3_600_000;

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Where a size's open transfers start: the newest tenth. Final records stay until pruned
 * (`retentionMs`, 7 days) while a transfer ends within hours, so the open ones are the latest
 * tracked; the ids (and on Postgres the rows) are in the order they were tracked.
 */
const openFrom = (size: number) => size - size / 10 + 1;

/** Transfer `i` (1 to `size`) of a size: the newest tenth submitted and due, the others delivered and final. */
function recordOf(i: number, size: number): TrackerRecord {
  const open = i >= openFrom(size);
  const status = open ? 'submitted' : 'delivered';
  const ids = { transferId: `tr_${i}`, userId: `user-${i % 1_000}` };
  const rank = stateRank(status)!;
  return {
    ...newTrackerRecord({ ...ids, source: 'execute', now: TRACKED_AT }),
    observed: transfer({ ...ids, status }),
    observedRank: rank,
    dispatched: status,
    dispatchedRank: rank,
    final: !open,
    phase: status,
    phaseSince: TRACKED_AT,
    intervalMs: 15_000,
    reads: open ? 2 : 4,
  };
}

/** The record `track` would have stored for transfer `i`, checked against what the bulk load made. */
async function checkLoaded(store: TrackerStore, size: number, where: string): Promise<void> {
  for (const i of [1, openFrom(size) - 1, openFrom(size), size]) {
    if (!isDeepStrictEqual(await store.get(`tr_${i}`), recordOf(i, size)))
      throw new Error(`${where}: tr_${i} is not the record the store keeps for it`);
  }
}

/**
 * Every size's time per claim (µs), one sample per round: the median of `CLAIMS` claims of
 * `LIMIT` (a claim the shared machine stalled does not move it), each lease completed due again at
 * once, the sizes in rotating order.
 */
async function measure(stores: Map<number, TrackerStore>, rounds: number): Promise<Map<number, number[]>> {
  const samples = new Map<number, number[]>([...stores.keys()].map((size) => [size, []]));
  const sizes = [...stores.keys()];
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < sizes.length; k++) {
      const size = sizes[(round + k) % sizes.length]!;
      const store = stores.get(size)!;
      const times: number[] = [];
      for (let claim = 0; claim < CLAIMS; claim++) {
        const started = performance.now();
        const leases = await store.claimDue({ owner: 'bench', leaseMs: 60_000, limit: LIMIT });
        times.push((performance.now() - started) * 1000);
        if (leases.length !== LIMIT) throw new Error(`${size}: claimed ${leases.length} of ${LIMIT} due`);
        const done = await Promise.all(
          leases.map((lease) => store.complete(lease, { record: lease.record, nextReadInMs: 0 })),
        );
        if (done.includes(false))
          throw new Error(`${size}: a fenced complete was refused with no other owner`);
      }
      samples.get(size)!.push(median(times));
    }
  }
  return samples;
}

/** The curve of one store: time per claim at each size, and the verdict on the largest over the smallest. */
function report(name: string, samples: Map<number, number[]>): void {
  const sizes = [...samples.keys()].sort((a, b) => a - b);
  const smallest = samples.get(sizes[0]!)!;
  const label = (size: number) => `${size.toLocaleString('en')} tracked`;
  table(
    `${name}: claimDue of ${LIMIT} with nine in ten transfers final (${ROUNDS} rotating rounds of ${CLAIMS} claims; medians, ratios of the same round)`,
    ['transfers', 'µs per claim', `× ${sizes[0]!.toLocaleString('en')}`],
    sizes.map((size) => [
      label(size),
      fixed(median(samples.get(size)!), 0),
      fixed(pairedRatio(samples.get(size)!, smallest)),
    ]),
  );
  bars(
    `${name}, µs per claim`,
    sizes.map((size) => [
      label(size),
      median(samples.get(size)!),
      `${fixed(median(samples.get(size)!), 0)} µs`,
    ]),
  );
  const largest = sizes[sizes.length - 1]!;
  ratioVerdict(
    `${name} claim of due work, ${largest.toLocaleString('en')} × ${sizes[0]!.toLocaleString('en')} tracked transfers`,
    pairedRatio(samples.get(largest)!, smallest),
    1.5,
  );
}

/** Fills `<schema>.tracker_records` with `size` transfers in bulk, in the columns the store writes. */
async function loadPostgres(pool: pg.Pool, schema: string, size: number): Promise<void> {
  // Templates of an open and a final record (its columns, as the store splits it), their ids put
  // in by the statement.
  const template = (i: number) => {
    const { observed, observedRank, ...kept } = recordOf(i, size);
    const ids = (text: string) =>
      text.replaceAll(`"${kept.transferId}"`, '"tr_@"').replaceAll(`"${kept.userId}"`, '"user-@"');
    return [ids(JSON.stringify(kept)), ids(JSON.stringify(observed))];
  };
  const [openKept, openObserved] = template(size);
  const [finalKept, finalObserved] = template(1);
  const ids = (text: string) =>
    `replace(replace(${text}, '"tr_@"', '"tr_' || i || '"'), '"user-@"', '"user-' || (i % 1000) || '"')::json`;
  for (let from = 1; from <= size; from += 100_000) {
    await pool.query(
      `insert into ${schema}.tracker_records
         (transfer_id, user_id, record, observed, observed_rank, final, due_at, tracked_ms, updated_ms)
       select 'tr_' || i, 'user-' || (i % 1000),
              ${ids('case when i >= $10 then $1 else $2 end')},
              ${ids('case when i >= $10 then $3 else $4 end')},
              case when i >= $10 then $5::double precision else $6::double precision end,
              i < $10,
              now() - interval '1 hour' + (i % 3600) * interval '1 second',
              $7, $7
         from generate_series($8::int, $9::int) as i`,
      [
        openKept,
        finalKept,
        openObserved,
        finalObserved,
        stateRank('submitted'),
        stateRank('delivered'),
        TRACKED_AT,
        from,
        Math.min(size, from + 99_999),
        openFrom(size),
      ],
    );
  }
  // As a table that has been live a while is: its statistics known, its pages visible to all.
  await pool.query(`vacuum analyze ${schema}.tracker_records`);
}

async function onPostgres(): Promise<void> {
  if (!POSTGRES_SERVER) {
    console.log(POSTGRES_MISSING);
    return;
  }
  const server = await startPostgres();
  const pool = new pg.Pool({ connectionString: server.url, max: 8 });
  // The server stops at the end while the pool lets its connections go.
  pool.on('error', () => {});
  try {
    const stores = new Map<number, TrackerStore>();
    for (const size of SCALES) {
      const schema = `bench_scale_${size}`;
      const started = performance.now();
      await migratePostgres({ pool, schema });
      await loadPostgres(pool, schema, size);
      const store = createPostgresTrackerStore({ pool, schema });
      await checkLoaded(store, size, `Postgres ${schema}`);
      console.log(
        `  Postgres: ${size.toLocaleString('en')} transfers loaded in ${fixed((performance.now() - started) / 1000, 1)} s`,
      );
      stores.set(size, store);
    }
    // What the loads left to write goes to disk before the clock starts, not during the claims.
    await pool.query('checkpoint');
    await measure(stores, 1);
    report('Postgres', await measure(stores, ROUNDS));
  } finally {
    await pool.end();
    await server.stop();
  }
}

/**
 * Tracks `size` transfers under `prefix` (its own hash tag, so it is every key's start) with the
 * store's own script, as `track` runs it, pipelined: the store's JavaScript per call is what a
 * million calls would spend their time in, and it is not what is measured.
 */
async function loadRedis(client: Redis, prefix: string, size: number): Promise<void> {
  const keys = TRACKER_KEYS.map((name) => prefix + name);
  const sha = String(await client.script('LOAD', TRACK));
  for (let from = 1; from <= size; from += 5_000) {
    const pipeline = client.pipeline();
    for (let i = from; i < Math.min(size + 1, from + 5_000); i++) {
      const { observed, observedRank, ...stored } = recordOf(i, size);
      // ARGV as the store's `track` sends them: id, record, observation, rank, final, user, time.
      pipeline.evalsha(
        sha,
        keys.length,
        ...keys,
        ...[stored.transferId, JSON.stringify(stored), JSON.stringify(observed), observedRank],
        ...[stored.final ? '1' : '0', stored.userId, Math.max(stored.trackedAt, stored.updatedAt)],
      );
    }
    for (const [error, inserted] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      if (inserted !== 1) throw new Error(`${prefix}: a transfer was tracked twice`);
    }
  }
}

async function onRedis(): Promise<void> {
  if (!REDIS_SERVER) {
    console.log(REDIS_MISSING);
    return;
  }
  const redis = await startRedis();
  const client = new Redis(redis.port, '127.0.0.1');
  try {
    const stores = new Map<number, TrackerStore>();
    for (const size of SCALES) {
      const started = performance.now();
      const prefix = `bench:{scale:${size}}:`;
      await loadRedis(client, prefix, size);
      // No warning about the eviction policy: the benchmark's server holds nothing else.
      const store = createRedisTrackerStore({ client, prefix, logger: QUIET });
      await checkLoaded(store, size, `Redis ${prefix}`);
      console.log(
        `  Redis: ${size.toLocaleString('en')} transfers loaded in ${fixed((performance.now() - started) / 1000, 1)} s`,
      );
      stores.set(size, store);
    }
    await measure(stores, 1);
    report('Redis', await measure(stores, ROUNDS));
    const memory = String(await client.call('INFO', 'memory')).match(/used_memory_human:(\S+)/)?.[1];
    console.log(`  Redis memory used by the ${SCALES.length} sizes: ${memory}`);
  } finally {
    client.disconnect();
    await redis.stop();
  }
}

export async function trackerScale(): Promise<void> {
  await onPostgres();
  await onRedis();
}
