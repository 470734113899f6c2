import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import {
  type CallbackStore,
  type ClaimResult,
  checkClaimRequest,
  checkClaimToken,
} from '../callbacks/store.js';
import { durationMs, parseArgs } from '../core/args.js';
import {
  prefixSchema,
  RELEASE_IF_OWNER,
  type RedisClientLike,
  redisClientSchema,
  redisCommand,
  run,
} from './client.js';

/** Options of `createRedisCallbackStore`. */
export interface RedisCallbackStoreOptions {
  /** A connected client of `redis` (node-redis 5) or `ioredis` 5. The store never connects or quits it. */
  client: RedisClientLike;
  /** Put before every key. @default 'partner-s2s:callback:' */
  prefix?: string;
  /** How long a claim holds, overriding the router's `claimTtlMs`. @default the router's */
  claimTtlMs?: number;
  /** How long a transfer's recorded state is kept after its last change. @default 604800 (7 days) */
  ttlSeconds?: number;
}

const optionsSchema = z.lazy(() =>
  z.looseObject({
    client: redisClientSchema,
    prefix: prefixSchema.optional(),
    claimTtlMs: durationMs.optional(),
    ttlSeconds: z.int({ error: 'must be a whole number of seconds' }).positive('must be positive').optional(),
  }),
);

/**
 * The claim, in one script so that no other process acts between the read and the lock. The
 * comparison is `compareClaim`'s (callbacks/store.ts), in Lua: same status is a duplicate; a final
 * recorded state, or a lower rank, makes it stale.
 * KEYS: state, claim. ARGV: status, rank, token, claim ttl (ms).
 */
const CLAIM = `
local recorded = redis.call('GET', KEYS[1])
local previous = ''
if recorded then
  local state = cjson.decode(recorded)
  previous = state.status
  if state.status == ARGV[1] then return {'duplicate', previous} end
  if state.final or tonumber(ARGV[2]) < state.rank then return {'stale', previous} end
end
if redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then return {'claimed', previous} end
return {'busy', previous}`;

/**
 * Records the state only while this claim still holds: a claim that expired and was taken over
 * belongs to the other process now. KEYS: state, claim. ARGV: token, state JSON, ttl (s).
 */
const COMMIT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
redis.call('DEL', KEYS[2])
return 1`;

/**
 * A callback store on Redis: the router's claim, commit and release as Lua scripts over SET NX PX,
 * so that a fleet of processes behind a load balancer dispatches each `(transferId, status)` once.
 * A process that dies holding a claim loses nothing: the claim expires and the redelivery takes it.
 *
 * @throws ArgumentError for options that are not as documented.
 * @example
 * import Redis from 'ioredis';
 * import { createRedisCallbackStore } from 'partner-s2s-sdk/redis';
 * const store = createRedisCallbackStore({ client: new Redis(process.env.REDIS_URL!) });
 * const router = createCallbackRouter({ authenticate, store });
 */
export function createRedisCallbackStore(options: RedisCallbackStoreOptions): CallbackStore {
  const checked = parseArgs(optionsSchema, options ?? {}, 'createRedisCallbackStore');
  const command = redisCommand(checked.client);
  const prefix = checked.prefix ?? 'partner-s2s:callback:';
  const ttlSeconds = String(checked.ttlSeconds ?? 7 * 86_400);
  const keys = (transferId: string) => [`${prefix}state:${transferId}`, `${prefix}claim:${transferId}`];
  return {
    async claim(input): Promise<ClaimResult> {
      const request = checkClaimRequest(input, 'RedisCallbackStore.claim');
      const token = randomUUID();
      const ttlMs = String(Math.max(1, Math.ceil(checked.claimTtlMs ?? request.ttlMs)));
      const reply = await run(command, 'callback.claim', [
        'EVAL',
        CLAIM,
        '2',
        ...keys(request.transferId),
        request.status,
        String(request.rank),
        token,
        ttlMs,
      ]);
      const [outcome, previous] = reply as [string, string];
      if (outcome === 'claimed') return { outcome, token, previous: previous === '' ? undefined : previous };
      if (outcome === 'duplicate' || outcome === 'stale') return { outcome, previous };
      return { outcome: 'busy' };
    },
    async commit(input, token) {
      const request = checkClaimRequest(input, 'RedisCallbackStore.commit');
      checkClaimToken(token, 'RedisCallbackStore.commit');
      const state = JSON.stringify({ status: request.status, rank: request.rank, final: request.final });
      await run(command, 'callback.commit', [
        'EVAL',
        COMMIT,
        '2',
        ...keys(request.transferId),
        token,
        state,
        ttlSeconds,
      ]);
    },
    async release(input, token) {
      const request = checkClaimRequest(input, 'RedisCallbackStore.release');
      checkClaimToken(token, 'RedisCallbackStore.release');
      const [, claimKey] = keys(request.transferId);
      await run(command, 'callback.release', ['EVAL', RELEASE_IF_OWNER, '1', claimKey as string, token]);
    },
  };
}
