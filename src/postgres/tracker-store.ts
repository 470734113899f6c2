import * as z from 'zod';
import { durationMs, nonEmptyString, parseArgs } from '../core/args.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import type {
  ClaimDueRequest,
  ClaimOneResult,
  TrackerLease,
  TrackerRecord,
  TrackerStore,
} from '../tracker/store.js';
import { connectionShape, type PostgresQueryable } from './client.js';
import { connectStore, type StoreConnection } from './migrations.js';

/** Options of `createPostgresTrackerStore`. */
export interface PostgresTrackerStoreOptions {
  /** A `pg` Pool (or anything with `query(text, values)` answering `{ rows }`). The store never ends it. */
  pool: PostgresQueryable;
  /** The schema of the stores' tables, created on first use. @default DEFAULTS.postgres.schema ('partner_s2s') */
  schema?: string;
  /** Each statement answers within this or fails. @default DEFAULTS.postgres.timeoutMs (10,000) */
  timeoutMs?: number;
}

const optionsSchema = z.lazy(() => z.looseObject(connectionShape));
const queryable = connectionShape.pool;
const rankSchema = z.lazy(() => z.number({ error: 'must be a number' }).finite());
const observedSchema = z.lazy(() => z.looseObject({}));
const epochMs = z.number({ error: 'must be a number of epoch ms' }).finite();
const delayMs = z
  .number({ error: 'must be a number of milliseconds' })
  .finite()
  .min(0, 'must not be negative');
const recordSchema = z.lazy(() =>
  z.looseObject({
    transferId: nonEmptyString,
    userId: nonEmptyString,
    observed: observedSchema.nullable(),
    observedRank: rankSchema,
    final: z.boolean({ error: 'must be true or false' }),
    trackedAt: epochMs,
    updatedAt: epochMs,
  }),
);
// A lease is the store's own answer handed back: what identifies it is checked, not the record again.
const leaseSchema = z.lazy(() =>
  z.looseObject({
    record: z.looseObject({ transferId: nonEmptyString }),
    fence: z.int({ error: 'must be an integer' }),
    owner: nonEmptyString,
  }),
);
const claimSchema = z.lazy(() =>
  z.looseObject({
    owner: nonEmptyString,
    leaseMs: durationMs,
    limit: z
      .int({ error: 'must be a whole number' })
      .positive('must be positive')
      .max(10_000, 'must be at most 10000'),
  }),
);
const listSchema = z.lazy(() =>
  z.looseObject({
    userId: nonEmptyString.optional(),
    open: z.boolean({ error: 'must be true or false' }).optional(),
    after: nonEmptyString.optional(),
    limit: z
      .int({ error: 'must be a whole number' })
      .positive('must be positive')
      .max(10_000, 'must be at most 10000'),
  }),
);
const claimOneSchema = z.lazy(() => claimSchema.unwrap().omit({ limit: true }));
const renewSchema = z.lazy(() => z.looseObject({ leaseMs: durationMs }));
const trackOptionsSchema = z.lazy(() => z.looseObject({ db: queryable.optional() }).optional());

/** Checks what the store relies on of a record; the rest is the tracker's, kept as given. */
function checkRecord(value: unknown, where: string): TrackerRecord {
  parseArgs(recordSchema, value, where);
  return value as TrackerRecord;
}

/** What a row answers for a record and its lease. */
const RETURNED =
  't.transfer_id, t.record::text as record, t.observed::text as observed, t.observed_rank, t.fence';

function toRecord(row: Record<string, unknown>): TrackerRecord {
  const kept = JSON.parse(String(row.record)) as Omit<TrackerRecord, 'observed' | 'observedRank'>;
  const observed = typeof row.observed === 'string' ? (JSON.parse(row.observed) as BridgeTransfer) : null;
  return { ...kept, observed, observedRank: Number(row.observed_rank) };
}

/** The record as a row keeps it: what the store merges on its own goes in columns of their own. */
function toColumns(record: TrackerRecord) {
  const { observed, observedRank, ...kept } = record;
  return {
    kept: JSON.stringify(kept),
    observed: observed === null ? null : JSON.stringify(observed),
    observedRank,
  };
}

/**
 * A transfer tracker's store on Postgres, one row per transfer in `<schema>.tracker_records`.
 * Claims are single statements: due rows are taken `FOR UPDATE SKIP LOCKED` and leased with a
 * fence one higher than before, so connections claiming at once never take the same row; a
 * `renew`, `complete` or `release` whose fence is no longer the row's writes nothing. Every lease time is
 * the database's `now()`, so the fleet needs no clock agreement. `track(record, { db })` inserts
 * through the partner's transaction client: the row commits or rolls back with the partner's own.
 * Works behind PgBouncer in transaction mode (no session state, no named statements).
 *
 * @throws ArgumentError for options that are not as documented.
 * @example
 * import pg from 'pg';
 * import { createPostgresTrackerStore } from 'partner-s2s-sdk/postgres';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const tracker = createTransferTracker({ client, store: createPostgresTrackerStore({ pool }) });
 */
export function createPostgresTrackerStore(options: PostgresTrackerStoreOptions): TrackerStore {
  const checked = parseArgs(optionsSchema, options ?? {}, 'createPostgresTrackerStore');
  const connection = connectStore(checked);
  return {
    ...recordOperations(connection),
    ...claimOperations(connection),
    ...fencedOperations(connection),
  };
}

type LeaseOperations = Pick<TrackerStore, 'claimDue' | 'claim' | 'renew' | 'complete' | 'release'>;

/** The claims: each takes rows with no live lease and raises their fence. */
function claimOperations({ s, run }: StoreConnection): Pick<LeaseOperations, 'claimDue' | 'claim'> {
  const lease = (row: Record<string, unknown>, owner: string): TrackerLease => ({
    record: toRecord(row),
    fence: Number(row.fence),
    owner,
  });
  const leaseSet = `lease_owner = $1, lease_until = now() + $2::double precision * interval '1 millisecond',
                    fence = t.fence + 1, woken = false`;
  return {
    async claimDue(input) {
      const request = parseArgs(claimSchema, input, 'PostgresTrackerStore.claimDue') as ClaimDueRequest;
      const rows = await run(
        'tracker.claimDue',
        // Materialized: the locked selection runs once, so the LIMIT bounds what the update takes.
        `with due as materialized (
           select transfer_id, due_at from ${s}.tracker_records
            where not final and due_at <= now() and (lease_until is null or lease_until <= now())
            order by due_at
            limit $3
            for update skip locked)
         update ${s}.tracker_records t set ${leaseSet}
           from due where t.transfer_id = due.transfer_id
         returning ${RETURNED}, extract(epoch from due.due_at)::double precision as due`,
        [request.owner, request.leaseMs, request.limit],
      );
      rows.sort((a, b) => Number(a.due) - Number(b.due));
      return rows.map((row) => lease(row, request.owner));
    },
    async claim(transferId, input): Promise<ClaimOneResult> {
      const id = parseArgs(nonEmptyString, transferId, 'PostgresTrackerStore.claim');
      const request = parseArgs(claimOneSchema, input, 'PostgresTrackerStore.claim');
      const [row] = await run(
        'tracker.claim',
        `with target as materialized (
           select transfer_id from ${s}.tracker_records
            where transfer_id = $3 and (lease_until is null or lease_until <= now())
            for update skip locked)
         update ${s}.tracker_records t set ${leaseSet}
           from target where t.transfer_id = target.transfer_id
         returning ${RETURNED}`,
        [request.owner, request.leaseMs, id],
      );
      if (row) return { outcome: 'claimed', lease: lease(row, request.owner) };
      const [found] = await run(
        'tracker.claim',
        `select 1 as found from ${s}.tracker_records where transfer_id = $1`,
        [id],
      );
      return found ? { outcome: 'busy' } : { outcome: 'unknown' };
    },
  };
}

/** What a lease's holder does with it, each only while its fence is the row's: renew, complete, release. */
function fencedOperations({
  s,
  run,
}: StoreConnection): Pick<LeaseOperations, 'renew' | 'complete' | 'release'> {
  return {
    async renew(input, renewal) {
      const held = parseArgs(leaseSchema, input, 'PostgresTrackerStore.renew');
      const { leaseMs } = parseArgs(renewSchema, renewal, 'PostgresTrackerStore.renew');
      // `complete` and `release` clear lease_until: a lease given back is not taken again here.
      const rows = await run(
        'tracker.renew',
        `update ${s}.tracker_records
            set lease_until = now() + $3::double precision * interval '1 millisecond'
          where transfer_id = $1 and fence = $2 and lease_until is not null
          returning 1 as renewed`,
        [held.record.transferId, held.fence, leaseMs],
      );
      return rows.length > 0;
    },
    async complete(input, completion) {
      const held = parseArgs(leaseSchema, input, 'PostgresTrackerStore.complete');
      const record = checkRecord(completion?.record, 'PostgresTrackerStore.complete');
      const nextReadInMs = parseArgs(delayMs, completion?.nextReadInMs, 'PostgresTrackerStore.complete');
      const { kept, observed, observedRank } = toColumns(record);
      // On the right of SET every column is the row as it was: a newer observation recorded during
      // the lease is kept, and (as any observation during it) leaves the transfer due at once.
      const rows = await run(
        'tracker.complete',
        `update ${s}.tracker_records set
           user_id = $3, record = $4::json,
           observed = case when $6::double precision > observed_rank then $5::json else observed end,
           observed_rank = greatest(observed_rank, $6::double precision),
           final = $7,
           due_at = case when woken or observed_rank > $6::double precision then now()
                         else now() + $8::double precision * interval '1 millisecond' end,
           woken = false, lease_owner = null, lease_until = null, updated_ms = $9
         where transfer_id = $1 and fence = $2
         returning 1 as done`,
        [
          held.record.transferId,
          held.fence,
          record.userId,
          kept,
          observed,
          observedRank,
          record.final,
          nextReadInMs,
          Math.round(record.updatedAt),
        ],
      );
      return rows.length > 0;
    },
    async release(input, retryInMs) {
      const held = parseArgs(leaseSchema, input, 'PostgresTrackerStore.release');
      const delay = parseArgs(delayMs, retryInMs, 'PostgresTrackerStore.release');
      await run(
        'tracker.release',
        `update ${s}.tracker_records set
           due_at = case when woken then now() else now() + $3::double precision * interval '1 millisecond' end,
           woken = false, lease_owner = null, lease_until = null
         where transfer_id = $1 and fence = $2`,
        [held.record.transferId, held.fence, delay],
      );
    },
  };
}

/** Inserting, observing, reading and pruning records: nothing here takes a lease. */
function recordOperations({ s, run }: StoreConnection): Omit<TrackerStore, keyof LeaseOperations> {
  return {
    async track(input, trackOptions) {
      const record = checkRecord(input, 'PostgresTrackerStore.track');
      const db = parseArgs(trackOptionsSchema, trackOptions, 'PostgresTrackerStore.track')?.db;
      const { kept, observed, observedRank } = toColumns(record);
      const rows = await run(
        'tracker.track',
        `insert into ${s}.tracker_records
           (transfer_id, user_id, record, observed, observed_rank, final, tracked_ms, updated_ms)
         values ($1, $2, $3::json, $4::json, $5, $6, $7, $8)
         on conflict (transfer_id) do nothing
         returning 1 as inserted`,
        [
          record.transferId,
          record.userId,
          kept,
          observed,
          observedRank,
          record.final,
          Math.round(record.trackedAt),
          Math.round(record.updatedAt),
        ],
        db,
      );
      return rows.length > 0;
    },
    async observe(transferId, observed, rank) {
      const id = parseArgs(nonEmptyString, transferId, 'PostgresTrackerStore.observe');
      const state = parseArgs(observedSchema, observed, 'PostgresTrackerStore.observe');
      const newRank = parseArgs(rankSchema, rank, 'PostgresTrackerStore.observe');
      await run(
        'tracker.observe',
        `update ${s}.tracker_records set
           observed = case when $3::double precision > observed_rank then $2::json else observed end,
           observed_rank = greatest(observed_rank, $3::double precision),
           due_at = case when final then due_at else least(due_at, now()) end,
           woken = woken or not final
         where transfer_id = $1`,
        [id, JSON.stringify(state), newRank],
      );
    },
    async get(transferId) {
      const id = parseArgs(nonEmptyString, transferId, 'PostgresTrackerStore.get');
      const [row] = await run(
        'tracker.get',
        `select ${RETURNED} from ${s}.tracker_records t where transfer_id = $1`,
        [id],
      );
      return row ? toRecord(row) : undefined;
    },
    async users(since) {
      const from = parseArgs(epochMs, since, 'PostgresTrackerStore.users');
      const rows = await run(
        'tracker.users',
        `select distinct user_id from ${s}.tracker_records where updated_ms >= $1 or tracked_ms >= $1`,
        [Math.ceil(from)],
      );
      return rows.map((row) => String(row.user_id));
    },
    async list(input) {
      const request = parseArgs(listSchema, input, 'PostgresTrackerStore.list');
      // One statement per combination of filters, each answered by its index in transfer id order
      // (migration 4; the primary key without filters): a keyset page, never a scan.
      const where: string[] = [];
      const values: unknown[] = [request.limit];
      const bind = (value: unknown) => `$${values.push(value)}`;
      if (request.userId !== undefined) where.push(`user_id = ${bind(request.userId)}`);
      if (request.open !== undefined) where.push(`final = ${bind(!request.open)}`);
      if (request.after !== undefined) where.push(`transfer_id > ${bind(request.after)}`);
      const rows = await run(
        'tracker.list',
        `select ${RETURNED} from ${s}.tracker_records t
          ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
          order by transfer_id limit $1`,
        values,
      );
      return rows.map(toRecord);
    },
    async prune(before) {
      const until = parseArgs(epochMs, before, 'PostgresTrackerStore.prune');
      const [row] = await run(
        'tracker.prune',
        `with gone as (delete from ${s}.tracker_records where final and updated_ms < $1 returning 1)
         select count(*)::int as pruned from gone`,
        [Math.ceil(until)],
      );
      return Number(row?.pruned ?? 0);
    },
  };
}
