import { type ChildProcess, fork } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route, transfer } from '../../fixtures/wire.js';
import { bundled } from '../helpers/bundle.js';
import {
  REDIS_MISSING,
  REDIS_SERVER,
  type RedisServer,
  sharedRedis,
  startRedis,
} from '../helpers/redis-server.js';
import { skipOrFail, uniqueName } from '../helpers/shared.js';

/**
 * A fleet in real processes sharing one real redis-server: the guarantees of issue 12 as a
 * partner's deployment sees them. No timing is asserted, only counts and order.
 */

skipOrFail(REDIS_SERVER, REDIS_MISSING);

const WORKER = new URL('../fleet/worker.ts', import.meta.url).pathname;
/** The worker bundled (test/helpers/bundle.ts): eight processes start at once, each in a fraction of tsx's seconds. */
let workerBundle: string;

interface Worker {
  child: ChildProcess;
  messages: Record<string, unknown>[];
  exited: Promise<number | null>;
  next(type: string): Promise<Record<string, unknown>>;
}

/** Every worker forked: one a failed or timed-out test left running is killed after the file. */
const spawned: ChildProcess[] = [];
afterAll(() => {
  for (const child of spawned)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function spawnWorker(env: Record<string, string>): Worker {
  const child = fork(workerBundle, [], {
    execArgv: [],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: Record<string, unknown>[] = [];
  const waiting: { type: string; resolve: (m: Record<string, unknown>) => void }[] = [];
  const seen = new Map<string, number>();
  child.on('message', (message: Record<string, unknown>) => {
    messages.push(message);
    const index = waiting.findIndex((w) => w.type === message.type);
    if (index >= 0) waiting.splice(index, 1)[0]!.resolve(message);
    else seen.set(message.type as string, (seen.get(message.type as string) ?? 0) + 1);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  spawned.push(child);
  return {
    child,
    messages,
    exited,
    next: (type) =>
      new Promise((resolve, reject) => {
        const early = seen.get(type) ?? 0;
        if (early > 0) {
          seen.set(type, early - 1);
          resolve([...messages].reverse().find((m) => m.type === type)!);
          return;
        }
        waiting.push({ type, resolve });
        child.once('exit', (code) => reject(new Error(`worker exited with ${code} before ${type}`)));
      }),
  };
}

/** The partner API, as little of it as the fleet calls: the token endpoint and the routes. */
function apiServer(): Promise<{ server: Server; url: string; tokenRequests: () => number }> {
  let tokens = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.endsWith('/auth/token')) {
        tokens++;
        res.setHeader('cache-control', 'no-store');
        res.end(
          JSON.stringify({
            access_token: `token-${tokens}`,
            token_type: 'Bearer',
            expires_in: 3600,
            scope: 'bridge:read',
          }),
        );
        return;
      }
      if (!req.headers.authorization?.startsWith('Bearer token-')) {
        res.statusCode = 401;
        res.end(
          JSON.stringify({
            statusCode: 401,
            error: 'Unauthorized',
            code: 'UNAUTHORIZED',
            message: 'no token',
          }),
        );
        return;
      }
      res.end(JSON.stringify({ data: [route()] }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        tokenRequests: () => tokens,
      }),
    ),
  );
}

const PATHS = [
  ['submitted', 'source_confirmed', 'delivered'],
  ['submitted', 'source_confirmed', 'refund_pending', 'refunded'],
  ['submitted', 'failed'],
] as const;
const RANK: Record<string, number> = {
  submitted: 0,
  source_confirmed: 1,
  refund_pending: 2,
  delivered: 3,
  refunded: 3,
  failed: 3,
};

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** Delivers `queue` across `ports` at random, `inFlight` at a time; a 5xx is sent again (optional). */
async function deliver(
  queue: { id: string; status: string }[],
  ports: number[],
  inFlight: number,
  retry5xx: boolean,
): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next < queue.length) {
      const item = queue[next++]!;
      const body = JSON.stringify(transfer({ transferId: item.id, status: item.status as never }));
      for (;;) {
        const port = ports[Math.floor(Math.random() * ports.length)]!;
        const response = await fetch(`http://127.0.0.1:${port}/callbacks`, { method: 'POST', body });
        await response.arrayBuffer();
        statuses.push(response.status);
        if (!(retry5xx && response.status >= 500)) break;
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return statuses;
}

/** Each transfer's history, in a shuffled, duplicated order; the final state last at least once. */
function histories(transfers: number): {
  queue: { id: string; status: string }[];
  finals: Map<string, string>;
} {
  const queue: { id: string; status: string }[] = [];
  const finals = new Map<string, string>();
  for (let t = 0; t < transfers; t++) {
    const path = PATHS[t % PATHS.length]!;
    const id = `tr_${t}`;
    finals.set(id, path.at(-1)!);
    for (const status of path) queue.push({ id, status }, { id, status });
  }
  shuffle(queue);
  // The service sends a final state again after the ones before it: append each final once more.
  for (const [id, status] of finals) queue.push({ id, status });
  return { queue, finals };
}

// A bound, not a timing: thousands of deliveries through four processes take 30 s on a machine
// running other files beside this one, and twice that when it is busy with more.
describe.runIf(REDIS_SERVER)('a fleet of processes on one Redis', { timeout: 150_000 }, () => {
  let redis: RedisServer;
  beforeAll(async () => {
    [redis, workerBundle] = await Promise.all([sharedRedis(), bundled(WORKER)]);
  }, 60_000);
  afterAll(async () => {
    await redis?.stop();
  });

  it('8 processes cold-start with a shared Redis token store: exactly 1 token request', async () => {
    const api = await apiServer();
    const workers = Array.from({ length: 8 }, (_, i) =>
      spawnWorker({
        FLEET_MODE: 'tokens',
        FLEET_REDIS_PORT: String(redis.port),
        FLEET_CLIENT: i % 2 === 0 ? 'node-redis' : 'ioredis',
        FLEET_API: api.url,
        // Each process's first call is the race for the token; the calls after it read its cache.
        FLEET_CALLS: '50',
      }),
    );
    await Promise.all(workers.map((w) => w.next('ready')));
    // All start at once: the coldest a fleet gets.
    for (const w of workers) w.child.send('go');
    const done = await Promise.all(workers.map((w) => w.next('done')));
    expect(done.map((d) => d.ok)).toEqual(Array(8).fill(50));
    expect(await Promise.all(workers.map((w) => w.exited))).toEqual(Array(8).fill(0));
    expect(api.tokenRequests()).toBe(1);
    api.server.close();
  });

  async function callbackFleet(prefix: string, failRate: number) {
    const workers = Array.from({ length: 4 }, (_, i) =>
      spawnWorker({
        FLEET_MODE: 'callbacks',
        FLEET_REDIS_PORT: String(redis.port),
        FLEET_CLIENT: i % 2 === 0 ? 'node-redis' : 'ioredis',
        FLEET_PREFIX: prefix,
        FLEET_FAIL_RATE: String(failRate),
      }),
    );
    const ports = (await Promise.all(workers.map((w) => w.next('ready')))).map((m) => m.port as number);
    return { workers, ports };
  }

  async function stopAll(workers: Worker[]) {
    for (const w of workers) w.child.send('stop');
    return Promise.all(workers.map((w) => w.exited));
  }

  function handledOf(workers: Worker[]) {
    const handled = workers.flatMap((w) => w.messages.filter((m) => m.type === 'handled')) as {
      transferId: string;
      status: string;
      at: number;
    }[];
    return handled.sort((a, b) => a.at - b.at);
  }

  /** Every state a listener handled, per transfer, in the order handled: once each, never backwards. */
  function checkHandled(handled: { transferId: string; status: string }[], finals: Map<string, string>) {
    const seen = new Set<string>();
    const last = new Map<string, string>();
    for (const { transferId, status } of handled) {
      const key = `${transferId}:${status}`;
      expect(seen.has(key), `${key} handled twice`).toBe(false);
      seen.add(key);
      const before = last.get(transferId);
      if (before !== undefined)
        expect(RANK[status]!, `${transferId}: ${before} then ${status}`).toBeGreaterThan(RANK[before]!);
      last.set(transferId, status);
    }
    for (const [id, status] of finals) expect(last.get(id), id).toBe(status);
  }

  it('4 processes, 1,000 transfers, shuffled duplicated histories, 64 in flight: each state once, never backwards', async () => {
    const { workers, ports } = await callbackFleet(`${uniqueName('fleet')}:a:`, 0);
    const { queue, finals } = histories(1_000);
    const statuses = await deliver(queue, ports, 64, true);
    expect(await stopAll(workers)).toEqual([0, 0, 0, 0]);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    checkHandled(handledOf(workers), finals);
  });

  it('a listener failing 10% of the time and a sender retrying 5xx: every state handled, none twice after success', async () => {
    const { workers, ports } = await callbackFleet(`${uniqueName('fleet')}:b:`, 0.1);
    const { queue, finals } = histories(300);
    const statuses = await deliver(queue, ports, 64, true);
    expect(await stopAll(workers)).toEqual([0, 0, 0, 0]);
    // The failures happened and were answered 500, so the retries were needed.
    expect(statuses).toContain(500);
    checkHandled(handledOf(workers), finals);
  });

  it('Redis stopped mid-run: 5xx and never 200 for an unrecorded event, tokens go on, clean exits', async () => {
    const own = await startRedis();
    try {
      await redisStoppedMidRun(own);
    } finally {
      await own.stop();
    }
  });

  async function redisStoppedMidRun(own: RedisServer) {
    const api = await apiServer();
    const tokenWorkers = [0, 1].map((i) =>
      spawnWorker({
        FLEET_MODE: 'tokens',
        FLEET_REDIS_PORT: String(own.port),
        FLEET_CLIENT: i % 2 === 0 ? 'node-redis' : 'ioredis',
        FLEET_API: api.url,
        FLEET_CALLS: '20',
        FLEET_AFTER_STOP: '1',
      }),
    );
    const cbWorkers = [0, 1].map((i) =>
      spawnWorker({
        FLEET_MODE: 'callbacks',
        FLEET_REDIS_PORT: String(own.port),
        FLEET_CLIENT: i % 2 === 0 ? 'node-redis' : 'ioredis',
        FLEET_PREFIX: 'fleet-c:',
      }),
    );
    await Promise.all(tokenWorkers.map((w) => w.next('ready')));
    const ports = (await Promise.all(cbWorkers.map((w) => w.next('ready')))).map((m) => m.port as number);
    for (const w of tokenWorkers) w.child.send('go');
    await Promise.all(tokenWorkers.map((w) => w.next('done')));
    const before = await deliver([{ id: 'tr_up', status: 'submitted' }], ports, 1, false);
    expect(before).toEqual([200]);

    await own.stop();
    const after = await deliver(
      Array.from({ length: 20 }, (_, i) => ({ id: `tr_down_${i}`, status: 'delivered' })),
      ports,
      4,
      false,
    );
    // Nothing could be claimed or recorded: every delivery is refused, none reaches a listener.
    expect(after.every((s) => s >= 500)).toBe(true);
    expect(handledOf(cbWorkers).filter((h) => h.transferId.startsWith('tr_down'))).toEqual([]);

    for (const w of tokenWorkers) w.child.send('go');
    const resumed = await Promise.all(tokenWorkers.map((w) => w.next('done')));
    expect(resumed.map((d) => d.ok)).toEqual([20, 20]);
    expect(await Promise.all(tokenWorkers.map((w) => w.exited))).toEqual([0, 0]);
    expect(await stopAll(cbWorkers)).toEqual([0, 0]);
    api.server.close();
  }
});

if (!REDIS_SERVER) {
  describe('a fleet of processes on one Redis', () => {
    it.skip(REDIS_MISSING, () => {});
  });
}
