import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { StoredToken, TokenLock, TokenStore } from '../auth/token-store.js';
import { parseArgs } from '../core/args.js';
import type { PostgresQueryable } from './client.js';
import { connectionShape } from './client.js';
import { connectStore } from './migrations.js';

/** Options of `createPostgresTokenStore`. */
export interface PostgresTokenStoreOptions {
  /** A `pg` Pool (or anything with `query(text, values)` answering `{ rows }`). The store never ends it. */
  pool: PostgresQueryable;
  /** The schema of the stores' tables, created on first use. @default DEFAULTS.postgres.schema ('partner_s2s') */
  schema?: string;
  /** Each statement answers within this or fails. @default DEFAULTS.postgres.timeoutMs (10,000) */
  timeoutMs?: number;
}

const optionsSchema = z.lazy(() => z.looseObject(connectionShape));

/**
 * A token store on Postgres, shared by every process of a fleet, in an UNLOGGED table: bearer
 * tokens stay out of the write-ahead log, its archives, backups and replicas (a crash or a failover
 * empties the table, and one token is fetched again). A token expires with its `expiresAt`; `lock`
 * is a row with an owner and a time limit on the database's clock, taken and released by single
 * statements (no transaction is held while the token is fetched), so a cold fleet fetches one token.
 *
 * @throws ArgumentError for options that are not as documented.
 * @example
 * import pg from 'pg';
 * import { createPostgresTokenStore } from 'partner-s2s-sdk/postgres';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const client = new PartnerClient({ baseUrl, clientId, clientSecret, tokenStore: createPostgresTokenStore({ pool }) });
 */
export function createPostgresTokenStore(options: PostgresTokenStoreOptions): TokenStore {
  const checked = parseArgs(optionsSchema, options ?? {}, 'createPostgresTokenStore');
  const { s, run } = connectStore(checked);
  return {
    async get(key) {
      const [row] = await run(
        'token.get',
        `select value from ${s}.tokens where key = $1 and expires_at > now()`,
        [key],
      );
      if (typeof row?.value !== 'string') return undefined;
      try {
        // The provider checks the shape: something else in the row counts as no token.
        return JSON.parse(row.value) as StoredToken;
      } catch {
        return undefined;
      }
    },
    async set(key, token) {
      const expiresAt = Math.floor(token.expiresAt);
      // A token already expired is not worth storing.
      if (!(expiresAt > Date.now())) return;
      await run(
        'token.set',
        `insert into ${s}.tokens (key, value, expires_at) values ($1, $2, to_timestamp($3::double precision / 1000))
         on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at`,
        [key, JSON.stringify(token), expiresAt],
      );
    },
    async delete(key) {
      await run('token.delete', `delete from ${s}.tokens where key = $1`, [key]);
    },
    async lock(key, ttlMs): Promise<TokenLock> {
      const owner = randomUUID();
      const rows = await run(
        'token.lock',
        `insert into ${s}.token_locks as l (key, owner, until)
         values ($1, $2, now() + $3::double precision * interval '1 millisecond')
         on conflict (key) do update set owner = excluded.owner, until = excluded.until
          where l.until <= now()
         returning owner`,
        [key, owner, Math.max(1, Math.ceil(ttlMs))],
      );
      if (rows[0]?.owner !== owner) return { acquired: false };
      return {
        acquired: true,
        release: async () => {
          // A lock that expired and was taken over is the other owner's now.
          await run('token.unlock', `delete from ${s}.token_locks where key = $1 and owner = $2`, [
            key,
            owner,
          ]);
        },
      };
    },
  };
}
