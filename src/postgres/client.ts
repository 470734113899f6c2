import * as z from 'zod';
import { durationMs } from '../core/args.js';
import { settleWithin } from '../core/time.js';
import { PartnerError } from '../errors/base.js';
import { redactor } from '../errors/redact.js';

/**
 * What the stores use of a Postgres connection: one `query(text, values)` answering `{ rows }`.
 * A `pg` Pool, Client or PoolClient fits as it is, and so does PGlite; no driver is imported.
 * Values go as parameters of one statement (no named prepared statement, no session state), so a
 * PgBouncer in transaction pooling mode in between changes nothing.
 *
 * @example
 * import pg from 'pg';
 * const pool: PostgresQueryable = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * A store's statement failed, was refused, or did not answer in time. Only the operation, the
 * SQLSTATE and a message that names no value are kept: a driver's error may carry the statement's
 * parameters, which for the token store include the token, so it is not attached as `cause`.
 *
 * @example
 * tracker.on('error', (e) => { if (e instanceof PostgresStoreError) log.warn(`${e.operation} ${e.sqlstate ?? ''}: ${e.message}`); });
 */
export class PostgresStoreError extends PartnerError {
  override name = 'PostgresStoreError' as const;
  /** The store operation: `token.get`, `callback.claim`, `tracker.claimDue`, `migrate`, … */
  readonly operation: string;
  /** The server's SQLSTATE (`40P01`, `57014`, …), or undefined when no server answered. */
  readonly sqlstate: string | undefined;

  constructor(init: { operation: string; sqlstate: string | undefined; reason: string }) {
    super(`Postgres ${init.operation} failed: ${init.reason}`);
    this.operation = init.operation;
    this.sqlstate = init.sqlstate;
  }
}

/** A schema name that is the same however it is quoted: no case-variant second install. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The options the three stores and `migratePostgres` share, checked before anything is sent. */
export const connectionShape = {
  pool: z.custom<PostgresQueryable>(
    (value) =>
      typeof value === 'object' && value !== null && typeof (value as PostgresQueryable).query === 'function',
    'must have query(text, values), as a pg Pool, Client or PoolClient, or PGlite has',
  ),
  schema: z
    .string({ error: 'must be a string' })
    .regex(
      SCHEMA_NAME,
      'must be a lower-case identifier: a-z, 0-9 and _, not starting with a digit, at most 63',
    )
    .refine((name) => !name.startsWith('pg_'), 'must not start with pg_ (reserved by Postgres)')
    .optional(),
  timeoutMs: durationMs.optional(),
};

/** `"name"`: an identifier quoted, whatever it holds. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** SQLSTATE classes whose messages may quote a value (a parameter, a key): never put in ours. */
const VALUE_ECHOING_CLASSES = new Set(['22', '23', 'XX']);

/** What of a driver's error may go into a message: the SQLSTATE, and the text when it names no value. */
export function storeError(
  operation: string,
  error: unknown,
  values: readonly unknown[],
): PostgresStoreError {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
  };
  const code = typeof fields.code === 'string' ? fields.code : undefined;
  const sqlstate = code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  const text = typeof fields.message === 'string' ? fields.message.split('\n', 1)[0]!.slice(0, 200) : '';
  // A value is looked for as the redactor looks for a secret (a short one as a whole token), so
  // that a record's `track` does not hide `permission denied for table tracker_records`.
  const shown = values.flatMap(leaves).filter((leaf) => leaf.length >= 4);
  const echoes =
    (sqlstate !== undefined && VALUE_ECHOING_CLASSES.has(sqlstate.slice(0, 2))) ||
    (text !== '' && redactor(shown)(text) !== text);
  const parts: string[] = [];
  if (sqlstate !== undefined) parts.push(`SQLSTATE ${sqlstate}`);
  else if (code !== undefined && /^E[A-Z]+$/.test(code)) parts.push(code);
  if (text !== '' && !echoes) parts.push(text);
  return new PostgresStoreError({ operation, sqlstate, reason: parts.join(': ') || 'unknown error' });
}

/** The strings a parameter holds: itself, and each string inside it when it is JSON. */
function leaves(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return [value];
  }
  const found = [value];
  const walk = (inner: unknown, depth: number): void => {
    if (typeof inner === 'string') found.push(inner);
    else if (typeof inner === 'object' && inner !== null && depth < 8)
      for (const item of Object.values(inner)) walk(item, depth + 1);
  };
  walk(parsed, 0);
  return found;
}

/**
 * Runs one query within `timeoutMs`, turning whatever the driver throws, and a query that does not
 * answer in time, into a PostgresStoreError. A pool that cannot connect, or whose connections are
 * all taken, would otherwise keep the caller waiting without end.
 */
export async function runQuery(
  db: PostgresQueryable,
  operation: string,
  timeoutMs: number,
  text: string,
  values?: unknown[],
): Promise<Record<string, unknown>[]> {
  const answer = (async () => (values === undefined ? db.query(text) : db.query(text, values)))();
  try {
    // Once the bound has passed, a late answer or failure is dropped, never left unhandled.
    const result = await settleWithin(
      answer,
      timeoutMs,
      () =>
        new PostgresStoreError({
          operation,
          sqlstate: undefined,
          reason: `no answer within ${timeoutMs} ms`,
        }),
    );
    // A script of several statements answers one result each (pg), none of which is asked for.
    if (Array.isArray(result)) return [];
    const rows = (result as { rows?: unknown } | undefined)?.rows;
    if (!Array.isArray(rows)) {
      throw new PostgresStoreError({
        operation,
        sqlstate: undefined,
        reason: 'the driver answered no rows array',
      });
    }
    return rows as Record<string, unknown>[];
  } catch (error) {
    if (error instanceof PostgresStoreError) throw error;
    throw storeError(operation, error, values ?? []);
  }
}
