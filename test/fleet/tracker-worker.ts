/**
 * One process of a tracker fleet, forked by test/helpers/tracker-fleet.ts: a transfer tracker with
 * callbacks off, reading the simulator over HTTP, on the store the fleet shares (Redis or
 * Postgres). Every `transition` and `final` is appended to a file of its own as one JSON line,
 * written before the listener returns, so that a SIGKILL loses no dispatch that happened.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createTransferTracker, PartnerClient, type TrackerStore } from '../../src/index.js';
import { createPostgresTrackerStore } from '../../src/postgres/index.js';
import { createRedisTrackerStore } from '../../src/redis/index.js';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const file = join(env('FLEET_REPORTS'), `${process.pid}.jsonl`);
const report = (line: Record<string, unknown>) =>
  appendFileSync(
    file,
    `${JSON.stringify({ ...line, pid: process.pid, at: performance.timeOrigin + performance.now() })}\n`,
  );

function store(): TrackerStore {
  if (env('FLEET_STORE') === 'redis') {
    const client = new Redis(env('FLEET_STORE_URL'));
    client.on('error', () => {});
    return createRedisTrackerStore({ client, prefix: env('FLEET_PREFIX'), timeoutMs: 2_000 });
  }
  const pool = new pg.Pool({ connectionString: env('FLEET_STORE_URL'), max: 4 });
  pool.on('error', () => {});
  return createPostgresTrackerStore({ pool, schema: env('FLEET_PREFIX') });
}

const client = new PartnerClient({
  baseUrl: env('FLEET_API'),
  clientId: env('FLEET_CLIENT_ID'),
  clientSecret: env('FLEET_CLIENT_SECRET'),
});
const tracker = createTransferTracker({
  client,
  store: store(),
  // Tens of milliseconds, so that a few seconds see every state; the lease outlasts a read on a busy machine.
  schedule: { pending: 100, submitted: 50, source_confirmed: 50, refund_pending: 50 },
  afterExpiryMs: 20,
  leaseMs: Number(env('FLEET_LEASE_MS')),
  // Few leases at once, so that none waits long behind the others' reads on a busy machine.
  batchSize: 5,
  tickMs: 20,
  // The simulator answers the whole fleet from one process: each worker keeps to a share of it.
  maxReadsPerSecond: 200,
  discover: false,
});
tracker.on('transition', (transfer, previous) =>
  report({
    event: 'transition',
    id: transfer.transferId,
    status: transfer.status,
    previous: previous ?? null,
  }),
);
tracker.on('final', (transfer) =>
  report({ event: 'final', id: transfer.transferId, status: transfer.status }),
);
tracker.on('error', (error) =>
  report({
    event: 'error',
    id: (error as { transferId?: string }).transferId,
    stage: (error as { stage?: string }).stage,
    message: String((error as Error).message).slice(0, 200),
  }),
);
await tracker.start();
process.send?.({ type: 'ready' });
