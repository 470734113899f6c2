import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresTrackerStore, migratePostgres } from '../../src/postgres/index.js';
import { bundled } from '../helpers/bundle.js';
import {
  POSTGRES_MISSING,
  POSTGRES_SERVER,
  type PostgresServer,
  sharedPostgres,
} from '../helpers/postgres-server.js';
import { skipOrFail, uniqueName } from '../helpers/shared.js';
import { freshSchema } from './records.js';

skipOrFail(POSTGRES_SERVER, POSTGRES_MISSING);

let server: PostgresServer;
beforeAll(async () => {
  if (POSTGRES_SERVER) server = await sharedPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

interface Migrator {
  /** Resolves once the process is connected and loaded, waiting for `go`. */
  ready: Promise<void>;
  go(): void;
  /** Its exit code and what it printed after `ready`. */
  done: Promise<{ code: number | null; out: string }>;
}

/** One process of the fleet: the worker bundled (test/helpers/bundle.ts), run by plain node. */
async function migrateInChild(url: string, schema: string): Promise<Migrator> {
  const worker = await bundled(join(import.meta.dirname, 'migrate-worker.ts'));
  const child = spawn(process.execPath, [worker, url, schema], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let ready!: () => void;
  const readyOnce = new Promise<void>((resolve) => {
    ready = resolve;
  });
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk;
    if (out.startsWith('ready\n')) ready();
  });
  child.stderr.on('data', (chunk: Buffer) => void (out += chunk));
  const done = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, out: out.replace(/^ready\n/, '') })),
  );
  return {
    ready: Promise.race([readyOnce, done.then(({ out }) => Promise.reject(new Error(`not ready: ${out}`)))]),
    go: () => child.stdin.write('go\n'),
    done,
  };
}

describe.runIf(POSTGRES_SERVER)('Postgres stores in a fleet', { timeout: 120_000 }, () => {
  it('4 processes migrating an empty database at once apply each migration exactly once', async () => {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    const database = uniqueName('fleet_migrate');
    await admin.query(`create database ${database}`);
    await admin.end();
    const url = server.urlOf(database);
    const fleet = await Promise.all(Array.from({ length: 4 }, () => migrateInChild(url, 'partner_s2s')));
    // All connected and loaded before any starts: they migrate at once, as a deploy's processes do.
    await Promise.all(fleet.map((migrator) => migrator.ready));
    for (const migrator of fleet) migrator.go();
    const runs = await Promise.all(fleet.map((migrator) => migrator.done));
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
