import { createHash } from 'node:crypto';
import * as z from 'zod';
import { parseArgs } from '../core/args.js';
import { DEFAULTS, withDefaults } from '../core/defaults.js';
import { connectionShape, type PostgresQueryable, quoteIdentifier, runQuery } from './client.js';

/**
 * The schema's versions, in order, each applied once per schema. A migration is written for a
 * database that has every earlier one: `create table` without `if not exists`, so that applying
 * one twice would fail loudly instead of passing unseen. Never edit a published migration; add one.
 */
const MIGRATIONS: readonly { id: number; sql: (s: string) => string }[] = [
  {
    // Tokens and their fetch locks are a cache: unlogged, so that bearer tokens never reach the
    // write-ahead log, its archives, point-in-time backups or replicas. A crash empties them and
    // one token is fetched again.
    id: 1,
    sql: (s) => `
      create unlogged table ${s}.tokens (
        key text primary key,
        value text not null,
        expires_at timestamptz not null);
      create unlogged table ${s}.token_locks (
        key text primary key,
        owner text not null,
        until timestamptz not null);`,
  },
  {
    id: 2,
    sql: (s) => `
      create table ${s}.callback_states (
        transfer_id text primary key,
        status text,
        rank double precision,
        final boolean not null default false,
        claim_token text,
        claim_until timestamptz,
        updated_at timestamptz not null default now());
      create index callback_states_updated on ${s}.callback_states (updated_at);`,
  },
  {
    id: 3,
    sql: (s) => `
      create table ${s}.tracker_records (
        transfer_id text primary key,
        user_id text not null,
        record json not null,
        observed json,
        observed_rank double precision not null default -1,
        final boolean not null default false,
        due_at timestamptz not null default now(),
        woken boolean not null default false,
        lease_owner text,
        lease_until timestamptz,
        fence bigint not null default 0,
        tracked_ms bigint not null,
        updated_ms bigint not null);
      create index tracker_records_due on ${s}.tracker_records (due_at) where not final;
      create index tracker_records_users on ${s}.tracker_records (updated_ms, user_id);
      create index tracker_records_final on ${s}.tracker_records (updated_ms) where final;`,
  },
  {
    // `list` pages by transfer id after the last one shown (keyset), under each of its filters.
    id: 4,
    sql: (s) => `
      create index tracker_records_list_user on ${s}.tracker_records (user_id, transfer_id);
      create index tracker_records_list_open on ${s}.tracker_records (final, transfer_id);
      create index tracker_records_list_user_open on ${s}.tracker_records (user_id, final, transfer_id);`,
  },
];

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.id;

/** The advisory lock of one schema's migrations: 64 bits of a hash of its name, as a SQL literal. */
function lockKey(schema: string): string {
  return createHash('sha256')
    .update(`partner-s2s-sdk:migrate:${schema}`)
    .digest()
    .readBigInt64BE(0)
    .toString();
}

/**
 * Every migration in one simple-protocol string: one message runs on one server connection, so it
 * needs no transaction API from the driver and holds behind PgBouncer in transaction mode. The
 * lock is transaction-scoped (released by the commit, never left on a pooled connection); inside
 * it each missing migration inserts its id first, then its tables, so many processes starting
 * together apply each one once.
 */
export function migrationScript(schema: string, timeoutMs: number): string {
  const s = quoteIdentifier(schema);
  const steps = MIGRATIONS.map(
    ({ id, sql }) => `
do $migrate$ begin
  if not exists (select 1 from ${s}.migrations where id = ${id}) then
    insert into ${s}.migrations (id) values (${id});
    ${sql(s).trim()}
  end if;
end $migrate$;`,
  );
  return `begin;
set local lock_timeout = '${timeoutMs}ms';
set local statement_timeout = '${timeoutMs}ms';
select pg_advisory_xact_lock(${lockKey(schema)});
create schema if not exists ${s};
create table if not exists ${s}.migrations (
  id int primary key,
  applied_at timestamptz not null default now(),
  applied_by int not null default pg_backend_pid());
${steps.join('\n')}
commit;`;
}

/** The schema version found, without any DDL: a role without DDL rights may read it. */
async function installedVersion(db: PostgresQueryable, schema: string, timeoutMs: number): Promise<number> {
  const table = `${quoteIdentifier(schema)}.migrations`;
  const [found] = await runQuery(db, 'migrate', timeoutMs, 'select to_regclass($1) is not null as present', [
    table,
  ]);
  if (found?.present !== true) return 0;
  const [row] = await runQuery(
    db,
    'migrate',
    timeoutMs,
    `select coalesce(max(id), 0) as version from ${table}`,
    [],
  );
  return Number(row?.version ?? 0);
}

/** Runs the script, and on failure ends a transaction a single connection would otherwise stay in. */
async function applyMigrations(db: PostgresQueryable, schema: string, timeoutMs: number): Promise<void> {
  const script = migrationScript(schema, timeoutMs);
  // PGlite's `query` takes one statement; its `exec` takes a script.
  const exec = (db as { exec?: unknown }).exec;
  const runner: PostgresQueryable =
    typeof exec === 'function' ? { query: (text) => exec.call(db, text) as never } : db;
  try {
    // A little more than the server's own bounds, which end the transaction first.
    await runQuery(runner, 'migrate', timeoutMs + 1_000, script);
  } catch (error) {
    await runQuery(db, 'migrate', timeoutMs, 'rollback').catch(() => {});
    throw error;
  }
}

const migrated = new WeakMap<object, Map<string, Promise<void>>>();

/**
 * Brings `schema` up to this build's version once per connection object and schema: later calls
 * share the first one's promise, and a failed one is tried again by the next call.
 */
export function ensureMigrated(db: PostgresQueryable, schema: string, timeoutMs: number): Promise<void> {
  let bySchema = migrated.get(db);
  if (!bySchema) migrated.set(db, (bySchema = new Map()));
  let pending = bySchema.get(schema);
  if (!pending) {
    pending = (async () => {
      if ((await installedVersion(db, schema, timeoutMs)) >= SCHEMA_VERSION) return;
      await applyMigrations(db, schema, timeoutMs);
    })();
    bySchema.set(schema, pending);
    pending.catch(() => bySchema.delete(schema));
  }
  return pending;
}

/** Options of `migratePostgres`. */
export interface MigratePostgresOptions {
  /** A `pg` Pool or Client (or anything with `query(text, values)` answering `{ rows }`) of a role with DDL rights. */
  pool: PostgresQueryable;
  /** The schema the stores keep their tables in. @default DEFAULTS.postgres.schema ('partner_s2s') */
  schema?: string;
  /** How long the migration may wait for the lock and run. @default DEFAULTS.postgres.timeoutMs (10,000) */
  timeoutMs?: number;
}

const migrateOptionsSchema = z.lazy(() => z.looseObject(connectionShape));

/**
 * Creates or updates the stores' tables now, as the stores otherwise do on first use: for a deploy
 * step run by a role with DDL rights, so that the application's role needs none (a store finding
 * every migration applied sends no DDL). Safe to run from many processes at once: each migration
 * is applied exactly once.
 *
 * @throws ArgumentError for options that are not as documented; PostgresStoreError when it fails.
 * @example
 * import pg from 'pg';
 * import { migratePostgres } from 'partner-s2s-sdk/postgres';
 * const pool = new pg.Pool({ connectionString: process.env.MIGRATION_DATABASE_URL });
 * await migratePostgres({ pool, schema: 'partner_s2s' });
 * await pool.end();
 */
export async function migratePostgres(options: MigratePostgresOptions): Promise<void> {
  const checked = parseArgs(migrateOptionsSchema, options ?? {}, 'migratePostgres');
  const { schema, timeoutMs } = withDefaults(DEFAULTS.postgres, checked);
  await ensureMigrated(checked.pool, schema, timeoutMs);
}

/** A store's way to its tables: the quoted schema, and queries bounded in time after the migrations. */
export interface StoreConnection {
  /** The schema, quoted: put before every table name. */
  readonly s: string;
  /**
   * Runs one statement, on `via` when given (a partner's transaction client) and on the pool
   * otherwise; the migrations always run on the pool first.
   */
  run(
    operation: string,
    text: string,
    values: unknown[],
    via?: PostgresQueryable,
  ): Promise<Record<string, unknown>[]>;
}

export function connectStore(checked: {
  pool: PostgresQueryable;
  schema?: string | undefined;
  timeoutMs?: number | undefined;
}): StoreConnection {
  const { schema, timeoutMs } = withDefaults(DEFAULTS.postgres, checked);
  let ready = false;
  return {
    s: quoteIdentifier(schema),
    async run(operation, text, values, via) {
      if (!ready) {
        await ensureMigrated(checked.pool, schema, timeoutMs);
        ready = true;
      }
      return runQuery(via ?? checked.pool, operation, timeoutMs, text, values);
    },
  };
}
