import * as z from 'zod';
import { nonEmptyString, parseArgs } from '../core/args.js';
import { DEFAULTS } from '../core/defaults.js';
import { Page } from '../core/pagination.js';
import { ArgumentError } from '../errors/client-errors.js';
import { TrackerError } from '../errors/tracker-errors.js';
import { keccak256Hex } from '../onchain/keccak.js';
import { storeError } from './step.js';
import type { TrackerListRequest, TrackerRecord, TrackerStore } from './store.js';

/** What `tracker.list` takes. Every field is optional: `tracker.list()` is the first page of every record. */
export interface TrackerListOptions {
  /** Only this user's transfers. */
  userId?: string;
  /**
   * `true`: only transfers the tracker still follows (no final state dispatched yet, as
   * `FINAL_STATES` says); `false`: only final ones; absent: both.
   */
  open?: boolean;
  /** Records a page, 1 to `DEFAULTS.tracker.list.maxLimit` (1000). @default DEFAULTS.tracker.list.limit (100) */
  limit?: number;
  /** The `nextCursor` of the page before, passed with the same `userId` and `open`. */
  cursor?: string;
}

const WHERE = 'TransferTracker.list';
const { limit: DEFAULT_LIMIT, maxLimit: MAX_LIMIT } = DEFAULTS.tracker.list;

const optionsSchema = z.lazy(() =>
  z.strictObject({
    userId: nonEmptyString.optional(),
    open: z.boolean({ error: 'must be true or false' }).optional(),
    limit: z
      .int({ error: 'must be a whole number' })
      .positive('must be positive')
      .max(MAX_LIMIT, `must be at most ${MAX_LIMIT}`)
      .optional(),
    cursor: nonEmptyString.optional(),
  }),
);

/** What a cursor says: the filters of the list it continues, and the last id it showed. */
const positionSchema = z.lazy(() =>
  z.strictObject({
    v: z.literal(1),
    u: z.string().min(1).nullable(),
    o: z.boolean().nullable(),
    a: z.string().min(1),
  }),
);
type Position = z.output<ReturnType<typeof positionSchema.unwrap>>;

const hex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
/** A digest of the payload, so that a cursor changed or cut anywhere is refused rather than misread. */
const check = (payload: string) => keccak256Hex(hex(new TextEncoder().encode(payload))).slice(0, 16);

function encodeCursor(position: Position): string {
  const payload = JSON.stringify(position);
  let binary = '';
  for (const byte of new TextEncoder().encode(payload)) binary += String.fromCharCode(byte);
  const body = btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  return `${body}.${check(payload)}`;
}

function refuse(message: string): never {
  throw new ArgumentError({ where: WHERE, issues: [{ path: 'cursor', message }] });
}

function decodeCursor(cursor: string): Position {
  const [body, digest, extra] = cursor.split('.');
  if (!body || !digest || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(body)) {
    refuse('is not a cursor of tracker.list: pass a nextCursor as it was given');
  }
  let payload: string;
  try {
    const binary = atob(body.replaceAll('-', '+').replaceAll('_', '/'));
    payload = new TextDecoder('utf-8', { fatal: true }).decode(
      Uint8Array.from(binary, (char) => char.charCodeAt(0)),
    );
  } catch {
    refuse('is not a cursor of tracker.list: pass a nextCursor as it was given');
  }
  if (check(payload) !== digest) refuse('was changed: pass a nextCursor as it was given');
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch {
    refuse('is not a cursor of tracker.list: pass a nextCursor as it was given');
  }
  const parsed = positionSchema.safeParse(json);
  if (!parsed.success) refuse('is not a cursor of this version of tracker.list');
  return parsed.data;
}

/** The options checked and the cursor read: what the store is asked, and the filters a next cursor carries. */
function readOptions(options: TrackerListOptions | undefined) {
  const given = parseArgs(optionsSchema, options ?? {}, WHERE);
  const userId = given.userId ?? null;
  const open = given.open ?? null;
  let after: string | undefined;
  if (given.cursor !== undefined) {
    const position = decodeCursor(given.cursor);
    if (position.u !== userId || position.o !== open) {
      refuse(
        'continues a list with other filters: pass the userId and open of the first page with its cursor',
      );
    }
    after = position.a;
  }
  return { userId, open, after, limit: given.limit ?? DEFAULT_LIMIT };
}

/** The store's answer, held to what was asked: a list of records, no more than asked for. */
function readAnswer(answer: unknown, limit: number): TrackerRecord[] {
  const fine =
    Array.isArray(answer) &&
    answer.length <= limit &&
    answer.every(
      (record) =>
        typeof record === 'object' &&
        record !== null &&
        typeof record.transferId === 'string' &&
        typeof record.userId === 'string',
    );
  if (fine) return answer as TrackerRecord[];
  throw new TrackerError({
    stage: 'store',
    message: `the tracker's store answered list with something other than at most ${limit} tracker records`,
  });
}

/**
 * One page of the records `store` holds, by transfer id, with the cursor of the next. Everything
 * is checked before the store is asked; the store is asked one more record than the page holds,
 * so that the last page says so (`nextCursor` null) without a further, empty one.
 */
export async function listRecords(
  store: TrackerStore,
  options: TrackerListOptions | undefined,
): Promise<Page<TrackerRecord>> {
  const { userId, open, after, limit } = readOptions(options);
  if (typeof store.list !== 'function') {
    throw new TrackerError({
      stage: 'store',
      message:
        "the tracker's store has no list operation (TrackerStore.list, optional for stores written before it): tracking works, listing needs a store that implements it",
    });
  }
  const request: TrackerListRequest = { limit: limit + 1 };
  if (userId !== null) request.userId = userId;
  if (open !== null) request.open = open;
  if (after !== undefined) request.after = after;
  let answer: unknown;
  try {
    answer = await store.list(request);
  } catch (error) {
    if (error instanceof ArgumentError || error instanceof TrackerError) throw error;
    throw storeError(error);
  }
  const records = readAnswer(answer, limit + 1);
  const items = records.slice(0, limit);
  const last = items[items.length - 1];
  const nextCursor =
    records.length > limit && last ? encodeCursor({ v: 1, u: userId, o: open, a: last.transferId }) : null;
  const filters: TrackerListOptions = {};
  if (userId !== null) filters.userId = userId;
  if (open !== null) filters.open = open;
  return new Page(items, nextCursor, (cursor) => listRecords(store, { ...filters, limit, cursor }));
}
