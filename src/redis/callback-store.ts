import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import {
  type CallbackStore,
  type ClaimRequest,
  type ClaimResult,
  checkClaimRequest,
  checkClaimToken,
  compareClaim,
  type RecordedState,
} from '../callbacks/store.js';
import { durationMs, parseArgs } from '../core/args.js';
import { DEFAULTS, withDefaults } from '../core/defaults.js';
import {
  prefixSchema,
  RELEASE_IF_OWNER,
  type RedisClientLike,
  type RedisCommand,
  redisClientSchema,
  redisCommand,
  run,
} from './client.js';

/** Options of `createRedisCallbackStore`. */
export interface RedisCallbackStoreOptions {
  /** A connected client of `redis` (node-redis 5) or `ioredis` 5. The store never connects or quits it. */
  client: RedisClientLike;
  /**
   * Put before every key. A transfer's keys are `<prefix>{<transferId>}:state` and
   * `…:claim`, hash-tagged so that a Redis Cluster keeps them on one slot; a prefix may carry its
   * own hash tag (`{myapp}:callbacks:`), which then puts every key on one slot.
   * @default DEFAULTS.redis.callbackPrefix ('partner-s2s:callback:')
   */
  prefix?: string;
  /** How long a claim holds, overriding the router's `claimTtlMs`. @default the router's */
  claimTtlMs?: number;
  /**
   * How long a transfer's recorded state is kept after its last change.
   * @default DEFAULTS.redis.callbackTtlSeconds (604800, 7 days)
   */
  ttlSeconds?: number;
}

const optionsSchema = z.lazy(() =>
  z.looseObject({
    client: redisClientSchema,
    // An empty hash tag would make Redis hash whole keys again, spreading a transfer over two slots.
    prefix: prefixSchema.refine((prefix) => !prefix.includes('{}'), 'must not contain "{}"').optional(),
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
 * Works on one server and on a Redis Cluster: each script's keys share a hash tag, one slot.
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
  const { prefix, ttlSeconds } = withDefaults(
    { prefix: DEFAULTS.redis.callbackPrefix, ttlSeconds: DEFAULTS.redis.callbackTtlSeconds },
    checked,
  );
  const keys = (transferId: string) => {
    const state = `${prefix}{${transferId}}:state`;
    return { state, claim: `${prefix}{${transferId}}:claim` };
  };
  const release = (request: ClaimRequest, token: string) => {
    const { claim } = keys(request.transferId);
    return run(command, 'callback.release', claim, ['EVAL', RELEASE_IF_OWNER, '1', claim, token]);
  };
  return {
    async claim(input): Promise<ClaimResult> {
      const request = checkClaimRequest(input, 'RedisCallbackStore.claim');
      const token = randomUUID();
      const ttlMs = String(Math.max(1, Math.ceil(checked.claimTtlMs ?? request.ttlMs)));
      const { state, claim } = keys(request.transferId);
      const reply = await run(command, 'callback.claim', state, [
        ...['EVAL', CLAIM, '2', state, claim],
        ...[request.status, String(request.rank), token, ttlMs],
      ]);
      const [outcome, previous] = reply as [string, string];
      if (outcome === 'duplicate' || outcome === 'stale') return { outcome, previous };
      if (outcome !== 'claimed') return { outcome: 'busy' };
      if (previous !== '') return { outcome, token, previous };
      // Nothing recorded yet under these names: what an earlier build recorded under its own, if anything.
      const legacy = await legacyState(command, `${prefix}state:${request.transferId}`);
      if (legacy === undefined) return { outcome, token, previous: undefined };
      const verdict = compareClaim(legacy, request);
      if (verdict === 'new') return { outcome, token, previous: legacy.status };
      await release(request, token);
      return { outcome: verdict, previous: legacy.status };
    },
    async commit(input, token) {
      const request = checkClaimRequest(input, 'RedisCallbackStore.commit');
      checkClaimToken(token, 'RedisCallbackStore.commit');
      const json = JSON.stringify({ status: request.status, rank: request.rank, final: request.final });
      const { state, claim } = keys(request.transferId);
      await run(command, 'callback.commit', state, [
        'EVAL',
        COMMIT,
        '2',
        state,
        claim,
        token,
        json,
        String(ttlSeconds),
      ]);
    },
    async release(input, token) {
      const request = checkClaimRequest(input, 'RedisCallbackStore.release');
      checkClaimToken(token, 'RedisCallbackStore.release');
      await release(request, token);
    },
  };
}

/**
 * The state that the store of an earlier build recorded under `<prefix>state:<transferId>`, a key
 * on a slot of its own (so read apart from the claim script). Nothing writes these any more: once
 * no process of an earlier build runs, the read is exact, and they expire `ttlSeconds` after their
 * last write. One that cannot be read counts as none: the state is dispatched, at worst once more.
 */
async function legacyState(command: RedisCommand, key: string): Promise<RecordedState | undefined> {
  const value = await run(command, 'callback.claim', key, ['GET', key]);
  if (typeof value !== 'string') return undefined;
  let recorded: unknown;
  try {
    recorded = JSON.parse(value);
  } catch {
    return undefined;
  }
  const { status, rank, final } = (recorded ?? {}) as Partial<RecordedState>;
  if (typeof status !== 'string' || typeof rank !== 'number' || typeof final !== 'boolean') return undefined;
  return { status, rank, final };
}
