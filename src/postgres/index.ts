/**
 * `partner-s2s-sdk/postgres`: the transfer tracker's store, the callback store and the token store
 * on Postgres, for a fleet of processes. Takes anything with `query(text, values)` answering
 * `{ rows }` (a `pg` Pool, Client or PoolClient, PGlite); imports no driver. Tables live in one
 * schema (`partner_s2s` by default), created and migrated on first use or by `migratePostgres`.
 *
 * @module partner-s2s-sdk/postgres
 */

export {
  createPostgresCallbackStore,
  type PostgresCallbackStore,
  type PostgresCallbackStoreOptions,
} from './callback-store.js';
export { type PostgresQueryable, PostgresStoreError } from './client.js';
export { type MigratePostgresOptions, migratePostgres } from './migrations.js';
export { createPostgresTokenStore, type PostgresTokenStoreOptions } from './token-store.js';
export { createPostgresTrackerStore, type PostgresTrackerStoreOptions } from './tracker-store.js';
