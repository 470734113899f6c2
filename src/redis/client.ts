import * as z from 'zod';
import { settleWithin } from '../core/time.js';
import { PartnerError } from '../errors/base.js';

/**
 * What the adapters use of a node-redis 5 client (`createClient().connect()`): `sendCommand(args)`.
 * The Redis clients the adapters take, as far as they use them: one raw command each. Only these
 * shapes are relied on, so neither package is imported (both stay optional peers).
 */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
}
/**
 * What the adapters use of a node-redis 5 cluster client (`createCluster().connect()`): its
 * `sendCommand(firstKey, isReadonly, args)`, which routes the command to the node holding the key.
 *
 * @example
 * import { createCluster } from 'redis';
 * const redis = await createCluster({ rootNodes: [{ url: process.env.REDIS_URL }] }).connect();
 * const store = createRedisCallbackStore({ client: redis });
 */
export interface NodeRedisClusterLike {
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
  ): Promise<unknown>;
  /** Only a cluster client has it: what tells it from a node-redis client. */
  readonly masters: unknown;
}
/** What the adapters use of an `ioredis` 5 client or `Cluster`: `call(name, ...args)`. */
export interface IoRedisLike {
  call(command: string, ...args: string[]): Promise<unknown>;
}
/** A connected client of `redis` (node-redis 5) or of `ioredis` 5, on one server or a Redis Cluster. */
export type RedisClientLike = NodeRedisLike | NodeRedisClusterLike | IoRedisLike;

/**
 * Sends one command and answers Redis's reply. `key` is the command's first key: a cluster client
 * sends the command to the node that holds its slot (every key of one command shares that slot).
 */
export type RedisCommand = (args: string[], key: string) => Promise<unknown>;

/**
 * A Redis command failed (connection lost, server stopped, a script error). Only the operation and
 * Redis's own message are kept: a client's error may carry the command's arguments, which for a
 * token store include the token, so the original error is not attached as `cause`.
 *
 * @example
 * router.on('error', (e) => { if (e instanceof RedisStoreError) log.warn(`redis ${e.operation}: ${e.message}`); });
 */
export class RedisStoreError extends PartnerError {
  override name = 'RedisStoreError' as const;
  /** The store operation: `token.get`, `callback.claim`, … */
  readonly operation: string;

  constructor(init: { operation: string; reason: string }) {
    super(`Redis ${init.operation} failed: ${init.reason}`);
    this.operation = init.operation;
  }
}

/**
 * Tells the clients apart by what they have: ioredis (client or `Cluster`) has `call(name, ...args)`
 * and finds the keys itself; node-redis 5 has `sendCommand(args)`, and its cluster client
 * `sendCommand(firstKey, isReadonly, args)` beside `masters` (ioredis has a `sendCommand` too,
 * taking a Command object, so `call` is checked first).
 */
export function redisCommand(client: RedisClientLike): RedisCommand {
  if ('call' in client && typeof client.call === 'function') {
    const call = client.call.bind(client);
    return ([command, ...args]) => call(command as string, ...args);
  }
  if ('masters' in client) {
    const send = client.sendCommand.bind(client);
    // Not read-only, even for a GET: a replica may not have a token or a state just written yet.
    return (args, key) => send(key, false, args);
  }
  const send = (client as NodeRedisLike).sendCommand.bind(client);
  return (args) => send(args);
}

/** The `client` option of both factories: checked before anything is sent. */
export const redisClientSchema = z.lazy(() =>
  z.custom<RedisClientLike>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      (typeof (value as IoRedisLike).call === 'function' ||
        typeof (value as NodeRedisLike).sendCommand === 'function'),
    'must be a connected node-redis 5 (`redis`) or ioredis 5 client or cluster client',
  ),
);

/** The `prefix` option: keys of one application (and one SDK store) apart from the rest. */
export const prefixSchema = z.lazy(() =>
  z.string({ error: 'must be a string' }).max(200, 'must be at most 200 characters'),
);

/**
 * Runs one command on `key` (its first key), turning whatever the client throws into a
 * RedisStoreError. With `timeoutMs`, a command with no answer by then fails too: a client that lost
 * its connection may queue commands until it is back, and a store operation must not wait forever.
 */
export async function run(
  command: RedisCommand,
  operation: string,
  key: string,
  args: string[],
  timeoutMs = Number.POSITIVE_INFINITY,
): Promise<unknown> {
  const failed = (error: unknown) =>
    new RedisStoreError({
      operation,
      reason: error instanceof Error ? firstLine(error.message) : 'unknown error',
    });
  let reply: Promise<unknown>;
  try {
    reply = command(args, key);
  } catch (error) {
    throw failed(error);
  }
  // The late answer or failure of a command given up on is dropped, never left unhandled.
  return settleWithin(
    reply,
    timeoutMs,
    () => new RedisStoreError({ operation, reason: `no answer within ${timeoutMs}ms` }),
    { fail: failed },
  );
}

function firstLine(message: string): string {
  return message.split('\n', 1)[0]!.slice(0, 200);
}

/** Deletes `key` only while it still holds `owner`: a lock or claim that expired and was taken over stays. */
export const RELEASE_IF_OWNER = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
