import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import {
  type CallbackStore,
  type ClaimResult,
  checkClaimRequest,
  checkClaimToken,
  compareClaim,
} from '../callbacks/store.js';
import { durationMs, parseArgs } from '../core/args.js';
import { connectionShape, type PostgresQueryable } from './client.js';
import { connectStore } from './migrations.js';

/** Options of `createPostgresCallbackStore`. */
export interface PostgresCallbackStoreOptions {
  /** A `pg` Pool (or anything with `query(text, values)` answering `{ rows }`). The store never ends it. */
  pool: PostgresQueryable;
  /** The schema of the stores' tables, created on first use. @default DEFAULTS.postgres.schema ('partner_s2s') */
  schema?: string;
  /** Each statement answers within this or fails. @default DEFAULTS.postgres.timeoutMs (10,000) */
  timeoutMs?: number;
  /** How long a claim holds, overriding the router's `claimTtlMs`. @default the router's */
  claimTtlMs?: number;
}

/** The callback store on Postgres, with a way to drop the states of transfers long settled. */
export interface PostgresCallbackStore extends CallbackStore {
  /**
   * Deletes the recorded state of every transfer not updated since `before` (epoch ms) and not
   * held by a live claim; resolves how many. A state delivered again after that is dispatched again.
   *
   * @example
   * await store.prune(Date.now() - 30 * 86_400_000); // from a daily job
   */
  prune(before: number): Promise<number>;
}

const optionsSchema = z.lazy(() => z.looseObject({ ...connectionShape, claimTtlMs: durationMs.optional() }));
const pruneSchema = z.lazy(() => z.number({ error: 'must be a number of epoch ms' }).finite());

/**
 * A callback store on Postgres: the router's claim is one `INSERT … ON CONFLICT … DO UPDATE …
 * WHERE … RETURNING` statement, which takes the transfer only when nobody holds a live claim and
 * the state is newer than the recorded one (the comparison of `compareClaim`), so a fleet behind a
 * load balancer dispatches each `(transferId, status)` once. Commit and release are fenced by the
 * claim's token; claims expire on the database's clock, so a process that dies holding one loses
 * nothing. Tables are created on first use (or ahead of time by `migratePostgres`).
 *
 * @throws ArgumentError for options that are not as documented.
 * @example
 * import pg from 'pg';
 * import { createPostgresCallbackStore } from 'partner-s2s-sdk/postgres';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const router = createCallbackRouter({ authenticate, store: createPostgresCallbackStore({ pool }) });
 */
export function createPostgresCallbackStore(options: PostgresCallbackStoreOptions): PostgresCallbackStore {
  const checked = parseArgs(optionsSchema, options ?? {}, 'createPostgresCallbackStore');
  const { s, run } = connectStore(checked);
  return {
    async claim(input): Promise<ClaimResult> {
      const request = checkClaimRequest(input, 'PostgresCallbackStore.claim');
      const token = randomUUID();
      const ttlMs = Math.max(1, Math.ceil(checked.claimTtlMs ?? request.ttlMs));
      const [claimed] = await run(
        'callback.claim',
        // RETURNING shows the row after the update, which leaves `status` as it was: the previous.
        `insert into ${s}.callback_states as t (transfer_id, claim_token, claim_until)
         values ($1, $4, now() + $5::double precision * interval '1 millisecond')
         on conflict (transfer_id) do update set claim_token = excluded.claim_token, claim_until = excluded.claim_until
          where (t.claim_until is null or t.claim_until <= now())
            and (t.status is null or (t.status <> $2 and not t.final and $3::double precision >= t.rank))
         returning t.status`,
        [request.transferId, request.status, request.rank, token, ttlMs],
      );
      if (claimed)
        return { outcome: 'claimed', token, previous: (claimed.status as string | null) ?? undefined };
      // Not taken: the recorded state says why, or a live claim does.
      const [row] = await run(
        'callback.claim',
        `select status, rank, final from ${s}.callback_states where transfer_id = $1`,
        [request.transferId],
      );
      if (typeof row?.status !== 'string') return { outcome: 'busy' };
      const recorded = { status: row.status, rank: Number(row.rank), final: row.final === true };
      const verdict = compareClaim(recorded, request);
      return verdict === 'new' ? { outcome: 'busy' } : { outcome: verdict, previous: recorded.status };
    },
    async commit(input, token) {
      const request = checkClaimRequest(input, 'PostgresCallbackStore.commit');
      checkClaimToken(token, 'PostgresCallbackStore.commit');
      // A claim that expired and was taken over is the other holder's: nothing is recorded over it.
      await run(
        'callback.commit',
        `update ${s}.callback_states
            set status = $2, rank = $3, final = $4, claim_token = null, claim_until = null, updated_at = now()
          where transfer_id = $1 and claim_token = $5`,
        [request.transferId, request.status, request.rank, request.final, token],
      );
    },
    async release(input, token) {
      const request = checkClaimRequest(input, 'PostgresCallbackStore.release');
      checkClaimToken(token, 'PostgresCallbackStore.release');
      await run(
        'callback.release',
        `update ${s}.callback_states set claim_token = null, claim_until = null
          where transfer_id = $1 and claim_token = $2`,
        [request.transferId, token],
      );
    },
    async prune(before) {
      const checkedBefore = parseArgs(pruneSchema, before, 'PostgresCallbackStore.prune');
      const [row] = await run(
        'callback.prune',
        `with gone as (
           delete from ${s}.callback_states
            where updated_at < to_timestamp($1::double precision / 1000)
              and (claim_until is null or claim_until <= now())
           returning 1)
         select count(*)::int as pruned from gone`,
        [checkedBefore],
      );
      return Number(row?.pruned ?? 0);
    },
  };
}
