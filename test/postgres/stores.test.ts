import { inspect } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { ArgumentError, createTransferTracker, PartnerClient, TrackerError } from '../../src/index.js';
import {
  createPostgresCallbackStore,
  createPostgresTokenStore,
  createPostgresTrackerStore,
  migratePostgres,
  PostgresStoreError,
} from '../../src/postgres/index.js';
import type { StoredToken } from '../../src/stores/index.js';
import {
  callbackStoreConformance,
  createPartnerSimulator,
  trackerStoreConformance,
} from '../../src/testing/index.js';
import { deliverToFleet } from '../helpers/callback-fleet.js';
import {
  PGBOUNCER,
  PGBOUNCER_MISSING,
  type PgbouncerServer,
  POSTGRES_MISSING,
  POSTGRES_SERVER,
  type PostgresDatabase,
  sharedPgbouncer,
  sharedPostgres,
  startPostgres,
} from '../helpers/postgres-server.js';
import { skipOrFail } from '../helpers/shared.js';
import { freshSchema, record, sleep } from './records.js';

skipOrFail(POSTGRES_SERVER, POSTGRES_MISSING);
skipOrFail(PGBOUNCER, PGBOUNCER_MISSING);

const request = (status: string, rank: number, final = false, transferId = 'tr_1') => ({
  transferId,
  status,
  rank,
  final,
  ttlMs: 60_000,
});

const token = (accessToken = 'tok_abc'): StoredToken => ({
  accessToken,
  issuedAt: Date.now(),
  expiresAt: Date.now() + 60_000,
  scopes: ['bridge:read'],
});

let server: PostgresDatabase;
let bouncer: PgbouncerServer | undefined;
const pools: pg.Pool[] = [];
const poolOf = (url: string, max = 10) => {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  pools.push(pool);
  return pool;
};

beforeAll(async () => {
  if (!POSTGRES_SERVER) return;
  server = await sharedPostgres();
  if (PGBOUNCER) bouncer = await sharedPgbouncer(server);
}, 60_000);
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
  await bouncer?.stop();
  await server?.stop();
});

/** The suite each way a partner connects: straight to the server, and through PgBouncer in transaction mode. */
const targets = [
  { name: 'direct', url: () => server.url, available: POSTGRES_SERVER },
  {
    name: 'behind PgBouncer (pool_mode=transaction)',
    url: () => bouncer!.urlOf(),
    available: POSTGRES_SERVER && PGBOUNCER,
  },
];

for (const target of targets) {
  describe.runIf(target.available)(`Postgres stores, ${target.name}`, { timeout: 30_000 }, () => {
    const pool = () => poolOf(target.url());

    trackerStoreConformance({ describe, it }, () =>
      createPostgresTrackerStore({ pool: pool(), schema: freshSchema() }),
    );

    // Sixteen connections, so that the claims the suite makes at once meet in the database; each
    // test's pool ends with it, so the suite never holds more than one test's connections.
    const callbackPools = new WeakMap<object, pg.Pool>();
    callbackStoreConformance(
      { describe, it },
      () => {
        const callbackPool = poolOf(target.url(), 16);
        const store = createPostgresCallbackStore({ pool: callbackPool, schema: freshSchema() });
        callbackPools.set(store, callbackPool);
        return store;
      },
      { dispose: (store) => callbackPools.get(store)?.end() },
    );

    it('callback store: routers sharing it dispatch one delivery once', async () => {
      const store = createPostgresCallbackStore({ pool: pool(), schema: freshSchema() });
      const fleet = await deliverToFleet(store, transfer({ transferId: 'tr_fleet', status: 'delivered' }));
      expect(fleet.dispatched).toBe(1);
      expect(fleet.statuses.filter((status) => status === 500)).toEqual([]);
    });

    it('token store: get, set with expiry, delete, and a lock only one holder takes until released or expired', async () => {
      const store = createPostgresTokenStore({ pool: pool(), schema: freshSchema() });
      expect(await store.get('k')).toBeUndefined();
      const kept = token();
      await store.set('k', kept);
      expect(await store.get('k')).toEqual(kept);
      await store.set('k', { ...kept, expiresAt: Date.now() - 1 });
      expect(await store.get('k')).toEqual(kept);
      await store.set('short', { ...kept, expiresAt: Date.now() + 40 });
      await sleep(80);
      expect(await store.get('short')).toBeUndefined();
      await store.delete('k');
      expect(await store.get('k')).toBeUndefined();
      const first = await store.lock!('k', 10_000);
      const second = await store.lock!('k', 10_000);
      expect([first.acquired, second.acquired]).toEqual([true, false]);
      if (first.acquired) await first.release();
      const third = await store.lock!('k', 20);
      expect(third.acquired).toBe(true);
      await sleep(60);
      const fourth = await store.lock!('k', 10_000);
      expect(fourth.acquired).toBe(true);
      // The expired holder's release leaves the new holder's lock alone.
      if (third.acquired) await third.release();
      expect((await store.lock!('k', 10_000)).acquired).toBe(false);
    });
  });
}

describe.runIf(POSTGRES_SERVER)('Postgres stores, on the server itself', { timeout: 30_000 }, () => {
  it('track(record, { db }) runs on the partner’s transaction: rolled back, no row; committed, the row', async () => {
    const pool = poolOf(server.url);
    const store = createPostgresTrackerStore({ pool, schema: freshSchema() });
    await pool.query('create table if not exists orders (id text primary key)');
    const db = await pool.connect();
    try {
      await db.query('begin');
      await db.query('insert into orders (id) values ($1)', ['order-1']);
      expect(await store.track(record('tr_rolled_back'), { db })).toBe(true);
      await db.query('rollback');
      await db.query('begin');
      await db.query('insert into orders (id) values ($1)', ['order-2']);
      expect(await store.track(record('tr_committed'), { db })).toBe(true);
      // Not visible outside the transaction until it commits.
      expect(await store.get('tr_committed')).toBeUndefined();
      await db.query('commit');
    } finally {
      db.release();
    }
    expect(await store.get('tr_rolled_back')).toBeUndefined();
    expect(await store.get('tr_committed')).toMatchObject({ transferId: 'tr_committed' });
    await expect(store.track(record('tr_x'), { db: {} })).rejects.toThrow(ArgumentError);
  });

  it('list reads a page through the index of its filters, never a scan of the table', async () => {
    const pool = poolOf(server.url);
    const schema = freshSchema();
    const sent: { text: string; values: unknown[] }[] = [];
    const seen = {
      query: (text: string, values?: unknown[]) => {
        sent.push({ text, values: values ?? [] });
        return pool.query(text, values);
      },
    };
    const store = createPostgresTrackerStore({ pool: seen, schema });
    await migratePostgres({ pool, schema });
    await pool.query(
      `insert into ${schema}.tracker_records (transfer_id, user_id, record, final, tracked_ms, updated_ms)
       select id, user_id, json_build_object('transferId', id, 'userId', user_id), i % 20 <> 0, 0, 0
         from generate_series(1, 20000) i,
              lateral (select 'tr_' || lpad(i::text, 6, '0') as id, 'usr_' || (i % 499) as user_id) v`,
    );
    await pool.query(`analyze ${schema}.tracker_records`);
    // Most records are final, as in a store that keeps them for retentionMs: open ones are few.
    const cases = [
      { filter: {}, index: 'tracker_records_pkey' },
      { filter: { open: true }, index: 'tracker_records_list_open' },
      { filter: { userId: 'usr_7' }, index: 'tracker_records_list_user' },
      { filter: { userId: 'usr_20', open: true }, index: 'tracker_records_list_user_open' },
    ];
    for (const { filter, index } of cases) {
      const page = await store.list!({ ...filter, after: 'tr_001000', limit: 5 });
      expect(page.length, JSON.stringify(filter)).toBeGreaterThan(0);
      const { text, values } = sent[sent.length - 1]!;
      const { rows } = await pool.query(`explain (format json) ${text}`, values);
      const nodes: string[] = [];
      const indexes: string[] = [];
      const walk = (plan: { 'Node Type': string; 'Index Name'?: string; Plans?: unknown[] }) => {
        nodes.push(plan['Node Type']);
        if (plan['Index Name']) indexes.push(plan['Index Name']);
        for (const inner of plan.Plans ?? []) walk(inner as never);
      };
      walk(rows[0]['QUERY PLAN'][0].Plan);
      expect(nodes, JSON.stringify(filter)).not.toContain('Seq Scan');
      expect(indexes, JSON.stringify(filter)).toEqual([index]);
    }
  });

  it('tokens and token locks sit in UNLOGGED tables; the tracker and callback tables are logged', async () => {
    const pool = poolOf(server.url);
    const schema = freshSchema();
    await migratePostgres({ pool, schema });
    const { rows } = await pool.query(
      `select c.relname, c.relpersistence from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = $1 and c.relkind = 'r' order by c.relname`,
      [schema],
    );
    expect(Object.fromEntries(rows.map((row) => [row.relname, row.relpersistence]))).toEqual({
      callback_states: 'p',
      migrations: 'p',
      token_locks: 'u',
      tokens: 'u',
      tracker_records: 'p',
    });
  });

  it('a statement the server refuses is a PostgresStoreError naming no value: no token in message, JSON or inspect', async () => {
    const pool = poolOf(server.url);
    const schema = freshSchema();
    const store = createPostgresTokenStore({ pool, schema });
    await store.get('k');
    // A column the token cannot go into: the server's message quotes the value it refused.
    await pool.query(`alter table ${schema}.tokens alter column value type int using 0`);
    const error = await store.set('k', token('tok_secret_value')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PostgresStoreError);
    expect(error).toMatchObject({ operation: 'token.set', sqlstate: '22P02' });
    for (const shown of [(error as Error).message, JSON.stringify(error), inspect(error, { depth: 5 })]) {
      expect(shown).not.toContain('tok_secret_value');
    }
    expect((error as Error).cause).toBeUndefined();
  });

  it('a stopped server is a PostgresStoreError, and a statement that cannot run in time fails within timeoutMs', async () => {
    const own = await startPostgres();
    const pool = poolOf(own.url);
    const store = createPostgresTokenStore({ pool, schema: 'partner_s2s', timeoutMs: 300 });
    await store.set('k', token());
    // Another session holds the table: the store's statement waits, and the store gives up.
    const holder = new pg.Client({ connectionString: own.url });
    await holder.connect();
    await holder.query('begin; lock table partner_s2s.tokens in access exclusive mode');
    const blocked = await store.get('k').catch((e: unknown) => e);
    expect(blocked).toBeInstanceOf(PostgresStoreError);
    expect(String((blocked as Error).message)).toMatch(/no answer within 300 ms/);
    await holder.end();
    await own.stop();
    const error = await store.set('k', token('tok_secret')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PostgresStoreError);
    expect(String((error as Error).message)).not.toContain('tok_secret');
  });

  /**
   * A migrated schema of its own and a pool of a login role that may read and write its tables but
   * not change them, less every privilege on `revoked` (a table of the schema) when named.
   */
  async function appRole(revoked?: string) {
    const admin = poolOf(server.url);
    const schema = freshSchema();
    await migratePostgres({ pool: admin, schema });
    await admin.query(`create role ${schema}_app login`);
    await admin.query(`grant usage on schema ${schema} to ${schema}_app`);
    await admin.query(
      `grant select, insert, update, delete on all tables in schema ${schema} to ${schema}_app`,
    );
    if (revoked) await admin.query(`revoke all on ${schema}.${revoked} from ${schema}_app`);
    return { schema, app: poolOf(server.url.replace('sdk@', `${schema}_app@`)) };
  }

  it('a role without DDL rights uses the stores once migratePostgres has run', async () => {
    const { schema, app } = await appRole();
    await expect(app.query(`create table ${schema}.nope (id int)`)).rejects.toThrow(/permission denied/);
    const tracker = createPostgresTrackerStore({ pool: app, schema });
    expect(await tracker.track(record('tr_1'))).toBe(true);
    const tokens = createPostgresTokenStore({ pool: app, schema });
    await tokens.set('k', token());
    expect((await tokens.get('k'))?.accessToken).toBe('tok_abc');
    const callbacks = createPostgresCallbackStore({ pool: app, schema });
    expect((await callbacks.claim(request('submitted', 1))).outcome).toBe('claimed');
  });

  it("a role that lost the table privilege: the tracker's error says why, down to the SQLSTATE, and keeps the chain", async () => {
    const { schema, app } = await appRole('tracker_records');
    const sim = createPartnerSimulator();
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    const tracker = createTransferTracker({
      client,
      store: createPostgresTrackerStore({ pool: app, schema }),
      discover: false,
    });
    const errors: unknown[] = [];
    tracker.on('error', (error) => void errors.push(error));
    await tracker.runOnce();
    const error = errors[0] as TrackerError;
    expect(error).toBeInstanceOf(TrackerError);
    expect(error.message).toMatch(
      /^the tracker's store failed: PostgresStoreError: Postgres tracker\.\w+ failed: SQLSTATE 42501: permission denied for table tracker_records$/,
    );
    expect(error.cause).toBeInstanceOf(PostgresStoreError);
    expect(error.cause).toMatchObject({ sqlstate: '42501' });
    expect((error.cause as Error).message).toMatch(
      /SQLSTATE 42501: permission denied for table tracker_records$/,
    );
    // Recording a transfer fails the same way, thrown to the caller.
    const tracked = await tracker
      .track({ userId: sim.demo.userId, transferId: 'tr_1' })
      .catch((e: unknown) => e);
    expect(tracked).toBeInstanceOf(TrackerError);
    expect((tracked as Error).message).toMatch(
      /^could not record tr_1 in the tracker's store: Postgres tracker\.track failed: SQLSTATE 42501: permission denied for table tracker_records$/,
    );
    sim.close();
  });

  it('refuses options that are not as documented, before any statement', () => {
    const pool = poolOf(server.url);
    expect(() => createPostgresTrackerStore({ pool: {} as pg.Pool })).toThrow(ArgumentError);
    expect(() => createPostgresTokenStore({ pool: null as unknown as pg.Pool })).toThrow(ArgumentError);
    for (const schema of ['Partner', 'pg_x', 'a-b', 'x"; drop table y; --', '', '1abc']) {
      expect(() => createPostgresCallbackStore({ pool, schema }), schema).toThrow(ArgumentError);
    }
    expect(() => createPostgresCallbackStore({ pool, timeoutMs: 0 })).toThrow(ArgumentError);
  });
});
