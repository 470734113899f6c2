import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { fromBroker } from './shared.js';
import { findExecutable, freePort, lookedFor, spawnServer } from './spawn-server.js';

/**
 * A real redis-server for the Redis tests: started on 127.0.0.1 on a free port, in a temporary
 * directory, with persistence off, and stopped by `stop`. Nothing on the machine is touched.
 * With `cluster: true` it runs in cluster mode as a one-node cluster holding every slot (what a
 * one-shard ElastiCache or MemoryDB cluster is to a client): commands whose keys hash to different
 * slots are refused with CROSSSLOT, as on a cluster of many shards.
 * With `durable: true` it keeps an append-only file, so `halt` and `resume` stop the server and
 * start it again on the same port with the same data, as a restarted or failed-over Redis.
 */
export interface RedisServer {
  port: number;
  url: string;
  stop(): Promise<void>;
  /** Stops the server process (SIGTERM), keeping its port and its directory for `resume`. */
  halt(): Promise<void>;
  /** Starts the server again on the same port and directory, after `halt`. */
  resume(): Promise<void>;
}

/** redis-server's path (PATH, then the sbin directories), when it is installed and runs. */
const REDIS_BIN = ((bin) =>
  bin !== undefined && spawnSync(bin, ['--version'], { encoding: 'utf8' }).status === 0 ? bin : undefined)(
  findExecutable('redis-server'),
);

/** Whether redis-server is installed; without it the Redis tests skip (and fail under CI=true). */
export const REDIS_SERVER = REDIS_BIN !== undefined;
export const REDIS_MISSING = `Redis tests skipped: ${lookedFor('redis-server')} (install the Debian package redis-server: apt-get install -y redis-server)`;

/** Spawns redis-server with `args`, resolving once it accepts connections; answers how to stop it. */
function spawnRedis(args: string[]): Promise<() => Promise<void>> {
  if (!REDIS_BIN) throw new Error(REDIS_MISSING);
  return spawnServer(REDIS_BIN, args, {
    ready: 'Ready to accept connections',
    stopSignal: 'SIGTERM',
    orphanSignal: 'SIGKILL',
  });
}

export async function startRedis(
  options: { cluster?: boolean; durable?: boolean } = {},
): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir];
  // Every write in the file before it is answered: what a halted server had, a resumed one has.
  args.push(
    ...(options.durable ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
  );
  if (options.cluster) {
    // The cluster bus listens on port + 10000: a free port above 55535 has none, so ask for another.
    args.push('--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'));
    args.push('--cluster-announce-ip', '127.0.0.1', '--cluster-port', String(await freePort()));
  }
  let halt = await spawnRedis(args);
  let stopped: Promise<void> | undefined;
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop() {
      stopped ??= halt().then(() => rmSync(dir, { recursive: true, force: true }));
      return stopped;
    },
    halt: () => halt(),
    async resume() {
      if (stopped) throw new Error('redis-server was stopped for good');
      halt = await spawnRedis(args);
    },
  };
  try {
    if (options.cluster) await assignEverySlot(port);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

/** Gives the one node every slot and waits until it says the cluster is up. */
async function assignEverySlot(port: number): Promise<void> {
  const admin = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await admin.connect();
    await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    for (let tries = 0; ; tries++) {
      const info = String(await admin.call('CLUSTER', 'INFO'));
      if (info.includes('cluster_state:ok')) return;
      if (tries > 200) throw new Error(`redis-server cluster did not come up: ${info}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    admin.disconnect();
  }
}

/**
 * The run's shared redis-server (a cluster one with `cluster: true`), started once by
 * test/global-setup.ts for every file that asks, or one of this file's own when the file runs
 * without it. Files keep apart by key prefix (`uniqueName`); `stop` stops only a server of its own,
 * and a shared one cannot be halted (a test that stops its server starts its own with `startRedis`).
 */
export async function sharedRedis(options: { cluster?: boolean } = {}): Promise<RedisServer> {
  const shared = await fromBroker<{ port: number }>(options.cluster ? 'redis-cluster' : 'redis');
  if (!shared) return startRedis(options);
  const refuse = () => Promise.reject(new Error("the shared redis-server is not this file's to halt"));
  return {
    port: shared.port,
    url: `redis://127.0.0.1:${shared.port}`,
    stop: async () => {},
    halt: refuse,
    resume: refuse,
  };
}
