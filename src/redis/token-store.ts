import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { StoredToken, TokenLock, TokenStore } from '../auth/token-store.js';
import { parseArgs } from '../core/args.js';
import { DEFAULTS, withDefaults } from '../core/defaults.js';
import {
  prefixSchema,
  RELEASE_IF_OWNER,
  type RedisClientLike,
  redisClientSchema,
  redisCommand,
  run,
} from './client.js';

/** Options of `createRedisTokenStore`. */
export interface RedisTokenStoreOptions {
  /** A connected client of `redis` (node-redis 5) or `ioredis` 5. The store never connects or quits it. */
  client: RedisClientLike;
  /** Put before every key. @default DEFAULTS.redis.tokenPrefix ('partner-s2s:token:') */
  prefix?: string;
}

const optionsSchema = z.lazy(() =>
  z.looseObject({ client: redisClientSchema, prefix: prefixSchema.optional() }),
);

/**
 * A token store on Redis, shared by every process of a fleet: tokens expire with their `expiresAt`
 * (SET PXAT), and its `lock` (SET NX PX, released by a compare-and-delete script) makes a cold
 * fleet fetch one token. Keys are the client's hashed store keys: no secret goes into one. Every
 * command touches one key, so a Redis Cluster takes it as it is (a token and its lock may sit on
 * different slots: nothing reads both at once).
 *
 * @throws ArgumentError when `client` is not a node-redis or ioredis client.
 * @example
 * import { createClient } from 'redis';
 * import { createRedisTokenStore } from 'partner-s2s-sdk/redis';
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const client = new PartnerClient({ baseUrl, clientId, clientSecret, tokenStore: createRedisTokenStore({ client: redis }) });
 */
export function createRedisTokenStore(options: RedisTokenStoreOptions): TokenStore {
  const checked = parseArgs(optionsSchema, options ?? {}, 'createRedisTokenStore');
  const command = redisCommand(checked.client);
  const { prefix } = withDefaults({ prefix: DEFAULTS.redis.tokenPrefix }, checked);
  return {
    async get(key) {
      const value = await run(command, 'token.get', prefix + key, ['GET', prefix + key]);
      if (typeof value !== 'string') return undefined;
      try {
        // The provider checks the shape: something else in the key counts as no token.
        return JSON.parse(value) as StoredToken;
      } catch {
        return undefined;
      }
    },
    async set(key, token) {
      const expiresAt = Math.floor(token.expiresAt);
      // A token already expired is not worth storing (and PXAT in the past would be an error).
      if (!(expiresAt > Date.now())) return;
      await run(command, 'token.set', prefix + key, [
        'SET',
        prefix + key,
        JSON.stringify(token),
        'PXAT',
        String(expiresAt),
      ]);
    },
    async delete(key) {
      await run(command, 'token.delete', prefix + key, ['DEL', prefix + key]);
    },
    async lock(key, ttlMs): Promise<TokenLock> {
      const lockKey = `${prefix}${key}:lock`;
      const owner = randomUUID();
      const set = ['SET', lockKey, owner, 'NX', 'PX', String(Math.max(1, Math.ceil(ttlMs)))];
      if ((await run(command, 'token.lock', lockKey, set)) !== 'OK') return { acquired: false };
      return {
        acquired: true,
        release: async () => {
          await run(command, 'token.unlock', lockKey, ['EVAL', RELEASE_IF_OWNER, '1', lockKey, owner]);
        },
      };
    },
  };
}
