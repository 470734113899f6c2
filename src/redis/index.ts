/**
 * `partner-s2s-sdk/redis`: the token store, the callback store and the transfer tracker store on
 * Redis, for a fleet of processes. Takes a connected client of `redis` (node-redis 5) or `ioredis` 5, on one server or a
 * Redis Cluster; imports neither.
 *
 * @module partner-s2s-sdk/redis
 */

export { createRedisCallbackStore, type RedisCallbackStoreOptions } from './callback-store.js';
export {
  type IoRedisLike,
  type NodeRedisClusterLike,
  type NodeRedisLike,
  type RedisClientLike,
  RedisStoreError,
} from './client.js';
export { createRedisTokenStore, type RedisTokenStoreOptions } from './token-store.js';
export { createRedisTrackerStore, type RedisTrackerStoreOptions } from './tracker-store.js';
