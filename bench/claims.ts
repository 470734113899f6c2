/**
 * Claims per second of the tracker store on Postgres against a bare `FOR UPDATE SKIP LOCKED` claim
 * in the same run: 8 workers on an 8-connection `pg` pool drain the same number of due rows, each
 * claiming 50 at a time and completing each claim with a fenced update, once through
 * `createPostgresTrackerStore` and once with the two statements written by hand (no checks, no
 * JSON, no migrations step). Rounds interleave, the order rotating; the figure is the median of
 * the per-round ratios. Self-contained: it starts and stops its own PostgreSQL.
 */

import { createPostgresTrackerStore, migratePostgres } from 'partner-s2s-sdk/postgres';
import pg from 'pg';
import { POSTGRES_MISSING, POSTGRES_SERVER, startPostgres } from '../test/helpers/postgres-server.js';
import { context, fixed, median, pairedRatio, table } from './lib.js';

const ROWS = 5_000;
const WORKERS = 8;
const BATCH = 50;
const ROUNDS = 5;
const SCHEMA = 'bench_claims';

/** Makes every row of both tables due and unleased, outside the timed part. */
async function reset(pool: pg.Pool): Promise<void> {
  await pool.query(`truncate ${SCHEMA}.tracker_records, ${SCHEMA}.bare`);
  const now = Date.now();
  await pool.query(
    `insert into ${SCHEMA}.tracker_records (transfer_id, user_id, record, tracked_ms, updated_ms, due_at)
     select 'tr_' || i, 'user-' || (i % 50),
            json_build_object('transferId', 'tr_' || i, 'userId', 'user-' || (i % 50), 'final', false,
                              'observedRank', -1, 'trackedAt', $1::bigint, 'updatedAt', $1::bigint),
            $1, $1, now() - i * interval '1 millisecond'
       from generate_series(1, ${ROWS}) as i`,
    [now],
  );
  await pool.query(
    `insert into ${SCHEMA}.bare (transfer_id, due_at)
     select 'tr_' || i, now() - i * interval '1 millisecond' from generate_series(1, ${ROWS}) as i`,
  );
  await pool.query(`vacuum analyze ${SCHEMA}.tracker_records`);
  await pool.query(`vacuum analyze ${SCHEMA}.bare`);
}

/** Runs `worker` on WORKERS at once until each finds nothing due; answers claims per second. */
async function drain(worker: (id: number) => Promise<number>): Promise<number> {
  const started = performance.now();
  const counts = await Promise.all(
    Array.from({ length: WORKERS }, async (_, id) => {
      let claimed = 0;
      for (let got = await worker(id); got > 0; got = await worker(id)) claimed += got;
      return claimed;
    }),
  );
  const total = counts.reduce((a, b) => a + b, 0);
  if (total !== ROWS) throw new Error(`claimed ${total} rows of ${ROWS}`);
  return total / ((performance.now() - started) / 1000);
}

export async function claims(): Promise<void> {
  if (!POSTGRES_SERVER) {
    console.log(POSTGRES_MISSING);
    return;
  }
  const server = await startPostgres();
  const pool = new pg.Pool({ connectionString: server.url, max: WORKERS });
  // The server stops at the end while the pool lets its connections go.
  pool.on('error', () => {});
  try {
    await migratePostgres({ pool, schema: SCHEMA });
    await pool.query(
      `create table ${SCHEMA}.bare (transfer_id text primary key, due_at timestamptz not null,
         lease_owner text, lease_until timestamptz, fence bigint not null default 0)`,
    );
    await pool.query(`create index bare_due on ${SCHEMA}.bare (due_at)`);
    const store = createPostgresTrackerStore({ pool, schema: SCHEMA });
    const sdk = async (id: number) => {
      const leases = await store.claimDue({ owner: `w${id}`, leaseMs: 60_000, limit: BATCH });
      for (const lease of leases)
        await store.complete(lease, { record: lease.record, nextReadInMs: 3_600_000 });
      return leases.length;
    };
    const bare = async (id: number) => {
      const { rows } = await pool.query(
        `update ${SCHEMA}.bare set lease_owner = $1, lease_until = now() + interval '60 seconds', fence = fence + 1
          where transfer_id in (select transfer_id from ${SCHEMA}.bare
                                 where due_at <= now() and (lease_until is null or lease_until <= now())
                                 order by due_at limit $2 for update skip locked)
          returning transfer_id, fence`,
        [`w${id}`, BATCH],
      );
      for (const row of rows) {
        await pool.query(
          `update ${SCHEMA}.bare set lease_owner = null, lease_until = null, due_at = now() + interval '1 hour'
            where transfer_id = $1 and fence = $2`,
          [row.transfer_id, row.fence],
        );
      }
      return rows.length;
    };
    const perSecond = { sdk: [] as number[], bare: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 === 0 ? (['sdk', 'bare'] as const) : (['bare', 'sdk'] as const)) {
        await reset(pool);
        perSecond[name].push(await drain(name === 'sdk' ? sdk : bare));
      }
    }
    table(
      `Tracker claims on Postgres: ${WORKERS} workers over ${ROWS.toLocaleString('en')} due rows, ${BATCH} a claim, each completed (median of ${ROUNDS} rounds)`,
      ['claim', 'claims/s', '× bare'],
      [
        ['createPostgresTrackerStore', Math.round(median(perSecond.sdk)).toLocaleString('en'), ''],
        ['bare SKIP LOCKED + fenced update', Math.round(median(perSecond.bare)).toLocaleString('en'), '1.00'],
      ].map((row, i) =>
        i === 0 ? [row[0]!, row[1]!, fixed(pairedRatio(perSecond.sdk, perSecond.bare))] : row,
      ),
    );
    // Time per claim against the bare one's: the inverse of the throughput ratio. What the store's
    // work costs; its growth with the number of transfers is `trackerScale`'s row.
    context(
      'Postgres tracker claim time × bare SKIP LOCKED claim',
      `${fixed(pairedRatio(perSecond.bare, perSecond.sdk))}×`,
    );
  } finally {
    await pool.end();
    await server.stop();
  }
}
