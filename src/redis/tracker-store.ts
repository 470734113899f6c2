import { createHash } from 'node:crypto';
import * as z from 'zod';
import { durationMs, loggerOption, parseArgs } from '../core/args.js';
import { DEFAULTS, withDefaults } from '../core/defaults.js';
import { quiet } from '../core/isolate.js';
import { type Logger, logWriter, PREFIX } from '../core/logger.js';
import { ArgumentError } from '../errors/client-errors.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import type { TrackerLease, TrackerListRequest, TrackerRecord, TrackerStore } from '../tracker/store.js';
import {
  prefixSchema,
  type RedisClientLike,
  type RedisCommand,
  RedisStoreError,
  redisClientSchema,
  redisCommand,
  run,
} from './client.js';
import * as scripts from './tracker-scripts.js';

/** Options of `createRedisTrackerStore`. */
export interface RedisTrackerStoreOptions {
  /** A connected client of `redis` (node-redis 5) or `ioredis` 5. The store never connects or quits it. */
  client: RedisClientLike;
  /**
   * Put before every key. Every key of the store shares one Redis Cluster hash tag, so that each
   * script's keys sit on one slot: the prefix's own tag when it has one (`myapp:{tracker}:`), else
   * the whole prefix made the tag (`{partner-s2s:tracker:}due`). Give each tracker fleet its own
   * prefix; fleets on different prefixes land on different slots.
   * @default DEFAULTS.redis.trackerPrefix ('partner-s2s:tracker:')
   */
  prefix?: string;
  /**
   * How long an operation may wait for Redis's answer before it fails with a `RedisStoreError`
   * (the tracker reports it on `error` and tries again later): a client that lost its connection
   * may otherwise queue commands until it is back.
   * @default DEFAULTS.redis.trackerTimeoutMs (5000)
   */
  timeoutMs?: number;
  /**
   * Where the store warns, once, that Redis may evict its keys (`maxmemory-policy` other than
   * `noeviction`), or that it could not check (`CONFIG GET` refused, as on some managed Redis).
   * @default console
   */
  logger?: Logger;
}

/** A Redis hash tag: the text between the first `{` and the next `}`, when not empty. */
function hasHashTag(key: string): boolean {
  const open = key.indexOf('{');
  return open >= 0 && key.indexOf('}', open + 1) > open + 1;
}

/** The prefix every key starts with: its own hash tag, or the prefix made one. */
function taggedPrefix(prefix: string): string {
  return hasHashTag(prefix) ? prefix : `{${prefix}}`;
}

const optionsSchema = z.lazy(() =>
  z.looseObject({
    client: redisClientSchema,
    prefix: prefixSchema
      .refine(
        (prefix) => hasHashTag(taggedPrefix(prefix)),
        'must give a non-empty Redis hash tag (e.g. "myapp:tracker:" or "myapp:{tracker}:")',
      )
      .optional(),
    timeoutMs: durationMs.optional(),
    logger: loggerOption.optional(),
  }),
);

/** A stored record: the tracker's record without its observation, which the store keeps apart. */
type StoredRecord = Omit<TrackerRecord, 'observed' | 'observedRank'>;

/** How many final records one prune script deletes: bounded, so that no script blocks Redis for long. */
const PRUNE_BATCH = 500;

/**
 * A transfer tracker store on Redis, shared by every process of a fleet: a ZSET of due transfers
 * and hashes of records, fences and leases, changed only by Lua scripts. A claim takes the earliest
 * due transfers, re-scores each to the end of its lease and raises its fence, all on Redis's own
 * clock (`TIME`), so a fleet needs no clock agreement and a killed process costs one lease. Keys
 * carry no TTL (a transfer that is not final is never dropped); final records go with `prune`.
 * Run Redis with `maxmemory-policy noeviction`: the store warns through `logger` when it is not.
 * Works on one server and on a Redis Cluster: every key shares one hash tag, one slot.
 *
 * @throws ArgumentError for options that are not as documented.
 * @example
 * import { Redis } from 'ioredis';
 * import { createRedisTrackerStore } from 'partner-s2s-sdk/redis';
 * const store = createRedisTrackerStore({ client: new Redis(process.env.REDIS_URL!) });
 * const tracker = createTransferTracker({ client, store });
 */
export function createRedisTrackerStore(options: RedisTrackerStoreOptions): TrackerStore {
  const checked = parseArgs(optionsSchema, options ?? {}, 'createRedisTrackerStore');
  const command = redisCommand(checked.client);
  const { prefix, timeoutMs } = withDefaults(
    { prefix: DEFAULTS.redis.trackerPrefix, timeoutMs: DEFAULTS.redis.trackerTimeoutMs },
    checked,
  );
  const base = taggedPrefix(prefix);
  const keys = scripts.TRACKER_KEYS.map((name) => base + name);
  const warnOnce = evictionCheck(command, keys[0]!, timeoutMs, checked.logger ?? console);
  const evaluate = (operation: string, script: string, args: (string | number)[]) => {
    warnOnce();
    return evalScript(command, operation, script, keys, args.map(String), timeoutMs);
  };
  return {
    ...listOperation(evaluate),
    async track(record, trackOptions) {
      if (trackOptions?.db !== undefined) {
        throw new ArgumentError({
          where: 'RedisTrackerStore.track',
          issues: [
            { path: 'db', message: 'is not supported by the Redis store (it has no transactions to join)' },
          ],
        });
      }
      const { stored, observed, rank } = split(record, 'RedisTrackerStore.track');
      const at = Math.max(record.trackedAt, record.updatedAt);
      const reply = await evaluate('tracker.track', scripts.TRACK, [
        ...[record.transferId, stored, observed, rank],
        ...[record.final ? '1' : '0', record.userId, at],
      ]);
      return reply === 1;
    },
    async claimDue({ owner, leaseMs, limit }) {
      const reply = await evaluate('tracker.claimDue', scripts.CLAIM_DUE, [limit, Math.ceil(leaseMs)]);
      return (reply as unknown[][]).map((row) => leaseOf(row, owner, 'tracker.claimDue'));
    },
    async claim(transferId, { owner, leaseMs }) {
      const reply = (await evaluate('tracker.claim', scripts.CLAIM_ONE, [
        transferId,
        Math.ceil(leaseMs),
      ])) as [string, unknown[]?];
      if (reply[0] === 'unknown') return { outcome: 'unknown' };
      if (reply[0] === 'busy') return { outcome: 'busy' };
      return { outcome: 'claimed', lease: leaseOf(reply[1]!, owner, 'tracker.claim') };
    },
    async renew(lease, { leaseMs }) {
      const reply = await evaluate('tracker.renew', scripts.RENEW, [
        lease.record.transferId,
        lease.fence,
        Math.ceil(leaseMs),
      ]);
      return reply === 1;
    },
    async complete(lease, { record, nextReadInMs }) {
      const { stored, observed, rank } = split(record, 'RedisTrackerStore.complete');
      const reply = await evaluate('tracker.complete', scripts.COMPLETE, [
        ...[record.transferId, lease.fence, stored, observed, rank, record.final ? '1' : '0'],
        ...[Math.max(0, Math.ceil(nextReadInMs)), record.userId, record.updatedAt],
      ]);
      return reply === 1;
    },
    async release(lease, retryInMs) {
      await evaluate('tracker.release', scripts.RELEASE, [
        lease.record.transferId,
        lease.fence,
        Math.max(0, Math.ceil(retryInMs)),
      ]);
    },
    async observe(transferId, observed, rank) {
      await evaluate('tracker.observe', scripts.OBSERVE, [transferId, JSON.stringify(observed), rank]);
    },
    async get(transferId) {
      const reply = (await evaluate('tracker.get', scripts.GET, [transferId])) as unknown[];
      return reply.length === 0 ? undefined : recordOf(reply, 'tracker.get');
    },
    async users(since) {
      warnOnce();
      const reply = await run(
        command,
        'tracker.users',
        keys[8]!,
        ['ZRANGEBYSCORE', keys[8]!, String(since), '+inf'],
        timeoutMs,
      );
      return reply as string[];
    },
    async prune(before) {
      let pruned = 0;
      for (;;) {
        const count = Number(await evaluate('tracker.prune', scripts.PRUNE, [before, PRUNE_BATCH]));
        pruned += count;
        if (count < PRUNE_BATCH) return pruned;
      }
    },
  };
}

type Evaluate = (operation: string, script: string, args: (string | number)[]) => Promise<unknown>;

/** `list`: a page of one list key, after indexing (once) what an earlier version wrote. */
function listOperation(evaluate: Evaluate): Pick<TrackerStore, 'list'> {
  let backfilled: Promise<void> | undefined;
  return {
    async list(request) {
      const limit = request?.limit;
      if (!Number.isInteger(limit) || limit < 1) {
        throw new ArgumentError({
          where: 'RedisTrackerStore.list',
          issues: [{ path: 'limit', message: 'must be a positive whole number' }],
        });
      }
      const { key, prefix } = listKey(request);
      backfilled ??= backfill(evaluate);
      backfilled.catch(() => {
        backfilled = undefined;
      });
      await backfilled;
      const min = request.after === undefined ? `[${prefix}` : `(${prefix}${request.after}`;
      const max = prefix === '' ? '+' : `(${nextPrefix(prefix)}`;
      const reply = await evaluate('tracker.list', scripts.LIST, [key, min, max, limit, prefix.length]);
      return (reply as unknown[][]).map((row) => recordOf(row.slice(2), 'tracker.list'));
    },
  };
}

/** How many records one backfill script indexes. */
const BACKFILL_BATCH = 500;

/** Indexes, a batch a script, the records written before the list keys existed; then marks it done. */
async function backfill(evaluate: Evaluate): Promise<void> {
  let cursor = '0';
  for (;;) {
    const reply = String(await evaluate('tracker.list', scripts.BACKFILL, [cursor, BACKFILL_BATCH]));
    if (reply === 'done') return;
    cursor = reply;
  }
}

/**
 * The list key (its index among the script's keys, from 1) that answers a request's filters, and
 * the prefix of its members before the id: see `TRACKER_KEYS`.
 */
function listKey(request: TrackerListRequest): { key: number; prefix: string } {
  const { userId, open } = request;
  const flag = open === undefined ? '' : open ? 'o' : 'f';
  if (typeof userId !== 'string')
    return open === undefined ? { key: 10, prefix: '' } : { key: 11, prefix: flag };
  const user = `${Buffer.from(userId, 'utf8').toString('hex')}:`;
  return open === undefined ? { key: 12, prefix: user } : { key: 13, prefix: user + flag };
}

/** The first string after every member that starts with `prefix` (its last character is ASCII). */
function nextPrefix(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** The record as the store keeps it: the record without its observation, the observation, its rank. */
function split(record: TrackerRecord, where: string) {
  if (
    typeof record !== 'object' ||
    record === null ||
    typeof record.transferId !== 'string' ||
    record.transferId === '' ||
    typeof record.userId !== 'string' ||
    !Number.isInteger(record.observedRank)
  ) {
    throw new ArgumentError({
      where,
      issues: [
        { path: 'record', message: 'must be a tracker record with transferId, userId and observedRank' },
      ],
    });
  }
  const { observed, observedRank, ...stored } = record;
  return {
    stored: JSON.stringify(stored satisfies StoredRecord),
    observed: observed === null ? '' : JSON.stringify(observed),
    rank: observedRank,
  };
}

/** A record from a script's reply: record JSON, observation JSON ('' for none), rank. */
function recordOf([stored, observed, rank]: unknown[], operation: string): TrackerRecord {
  try {
    return {
      ...(JSON.parse(String(stored)) as StoredRecord),
      observed: observed === '' ? null : (JSON.parse(String(observed)) as BridgeTransfer),
      observedRank: Number(rank),
    };
  } catch {
    throw new RedisStoreError({ operation, reason: 'a stored record is not valid JSON' });
  }
}

/** A lease from a claim script's row: id, fence, record JSON, observation JSON, rank. */
function leaseOf(row: unknown[], owner: string, operation: string): TrackerLease {
  return { record: recordOf(row.slice(2), operation), fence: Number(row[1]), owner };
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
const SHAS = new Map<string, string>();

/**
 * Runs a script by its digest, sending its text only when Redis does not have it yet (after a
 * restart, or on a cluster node that has not seen it): the claim's text is not resent every time.
 */
async function evalScript(
  command: RedisCommand,
  operation: string,
  script: string,
  keys: string[],
  args: string[],
  timeoutMs: number,
): Promise<unknown> {
  let sha = SHAS.get(script);
  if (sha === undefined) SHAS.set(script, (sha = sha1(script)));
  const tail = [String(keys.length), ...keys, ...args];
  try {
    return await run(command, operation, keys[0]!, ['EVALSHA', sha, ...tail], timeoutMs);
  } catch (error) {
    if (!(error instanceof RedisStoreError && error.message.includes('NOSCRIPT'))) throw error;
    return run(command, operation, keys[0]!, ['EVAL', script, ...tail], timeoutMs);
  }
}

/**
 * Asks Redis once, on the first operation, whether it may evict keys: a tracker's keys carry no
 * TTL, so with an eviction policy a full Redis would silently drop transfers. Warns once when the
 * policy is not `noeviction`, or when it could not be read (`CONFIG` is often refused on managed
 * Redis). Never fails an operation.
 */
function evictionCheck(command: RedisCommand, key: string, timeoutMs: number, logger: Logger) {
  let asked = false;
  const warn = logWriter(logger, 'warn', 'warn')!;
  return () => {
    if (asked) return;
    asked = true;
    const check = run(command, 'tracker.config', key, ['CONFIG', 'GET', 'maxmemory-policy'], timeoutMs);
    quiet(
      check.then((reply) => {
        const policy = configValue(reply, 'maxmemory-policy');
        if (policy === 'noeviction') return;
        warn(
          policy === undefined
            ? `${PREFIX} could not read Redis's maxmemory-policy; the tracker store needs noeviction, or Redis may drop tracked transfers when full`
            : `${PREFIX} Redis maxmemory-policy is ${policy}; the tracker store needs noeviction, or Redis may drop tracked transfers when full`,
        );
      }),
      (error: unknown) =>
        warn(
          `${PREFIX} could not check Redis's maxmemory-policy (${error instanceof Error ? error.message : 'unknown error'}); the tracker store needs noeviction, or Redis may drop tracked transfers when full`,
        ),
    );
  };
}

/** A `CONFIG GET` reply's value: a flat array (RESP2) or a map (RESP3), as each client gives it. */
function configValue(reply: unknown, name: string): string | undefined {
  if (Array.isArray(reply)) {
    const at = reply.indexOf(name);
    return at >= 0 && typeof reply[at + 1] === 'string' ? reply[at + 1] : undefined;
  }
  if (reply instanceof Map) return typeof reply.get(name) === 'string' ? reply.get(name) : undefined;
  if (typeof reply === 'object' && reply !== null) {
    const value = (reply as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}
