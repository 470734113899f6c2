import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresTrackerStore, migratePostgres } from '../../src/postgres/index.js';
import {
  POSTGRES_MISSING,
  POSTGRES_SERVER,
  type PostgresServer,
  skipOrFail,
  startPostgres,
} from '../helpers/postgres-server.js';
import { freshSchema } from './records.js';

skipOrFail(POSTGRES_SERVER, POSTGRES_MISSING);

let server: PostgresServer;
beforeAll(async () => {
  if (POSTGRES_SERVER) server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

function migrateInChild(
  url: string,
  schema: string,
  startAt: number,
): Promise<{ code: number | null; out: string }> {
  const worker = join(import.meta.dirname, 'migrate-worker.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', worker, url, schema, String(startAt)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => void (out += chunk));
  child.stderr.on('data', (chunk: Buffer) => void (out += chunk));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

describe.runIf(POSTGRES_SERVER)('Postgres stores in a fleet', { timeout: 120_000 }, () => {
  it('4 processes migrating an empty database at once apply each migration exactly once', async () => {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query('create database fleet_migrate');
    await admin.end();
    const url = server.urlOf('fleet_migrate');
    // Far enough ahead for four processes to load on a busy machine.
    const startAt = Date.now() + 8_000;
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => migrateInChild(url, 'partner_s2s', startAt)),
    );
    expect(runs.map((run) => [run.code, run.out.trim()])).toEqual(Array(4).fill([0, 'migrated']));
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query('select id from partner_s2s.migrations order by id');
      // Each migration creates its tables without `if not exists`: applied twice, one process would have failed.
      expect(rows.map((row) => row.id)).toEqual([1, 2, 3, 4]);
      const tables = await db.query(
        `select count(*)::int as n from pg_tables where schemaname = 'partner_s2s'`,
      );
      expect(tables.rows[0].n).toBe(5);
    } finally {
      await db.end();
    }
  });

  it('8 connections claiming over 20,000 due rows never claim a row twice, and claim every one', async () => {
    const schema = freshSchema();
    const pool = new pg.Pool({ connectionString: server.url, max: 8 });
    // An idle connection still closing when the server stops reports it on the pool.
    pool.on('error', () => {});
    try {
      await migratePostgres({ pool, schema });
      const now = Date.now();
      await pool.query(
        `insert into ${schema}.tracker_records (transfer_id, user_id, record, tracked_ms, updated_ms, due_at)
         select 'tr_' || i, 'user-' || (i % 50),
                json_build_object('transferId', 'tr_' || i, 'userId', 'user-' || (i % 50), 'final', false,
                                  'trackedAt', $1::bigint, 'updatedAt', $1::bigint),
                $1, $1, now() - (i % 997) * interval '1 millisecond'
           from generate_series(1, 20000) as i`,
        [now],
      );
      const stores = Array.from({ length: 8 }, () => createPostgresTrackerStore({ pool, schema }));
      const claimed: string[] = [];
      await Promise.all(
        stores.map(async (store, worker) => {
          for (;;) {
            const leases = await store.claimDue({ owner: `w${worker}`, leaseMs: 60_000, limit: 50 });
            if (leases.length === 0) return;
            for (const lease of leases) {
              claimed.push(lease.record.transferId);
              expect(
                await store.complete(lease, {
                  record: { ...lease.record, reads: 1 },
                  nextReadInMs: 3_600_000,
                }),
              ).toBe(true);
            }
          }
        }),
      );
      expect(claimed.length).toBe(20_000);
      expect(new Set(claimed).size).toBe(20_000);
    } finally {
      await pool.end();
    }
  });
});

describe('Postgres stores behind a transaction-mode pooler', () => {
  const sources = readdirSync('src/postgres').map((file) => ({
    file,
    text: readFileSync(join('src/postgres', file), 'utf8'),
  }));

  it('take no session advisory lock, LISTEN to nothing and name no prepared statement', () => {
    const found = sources.flatMap(({ file, text }) =>
      [
        /pg_(try_)?advisory_lock(_shared)?\s*\(/i,
        /pg_advisory_unlock/i,
        /\blisten\s+["a-z_]/i,
        /\bprepare\s+["a-z_]/i,
        // A named prepared statement needs a query config object ({ name, text }): only strings are sent.
        /\.query\(\s*\{/,
        // Session settings would stay on a pooled server connection: only SET LOCAL, inside a transaction.
        /(;|`)\s*set\s+(?!local\b)/i,
      ].flatMap((pattern) => (pattern.test(text) ? [`${file}: ${pattern}`] : [])),
    );
    expect(found).toEqual([]);
    // The migrations' lock is the transaction-scoped one, released by the commit.
    expect(sources.some(({ text }) => text.includes('pg_advisory_xact_lock('))).toBe(true);
  });
});
