import { type ChildProcess, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  createTransferTracker,
  PartnerClient,
  type TrackerStore,
  type TransferStatus,
  type TransferTracker,
} from '../../src/index.js';
import { stateRank } from '../../src/schemas/states.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { bundled } from './bundle.js';

/**
 * A tracker fleet under chaos, as a partner's deployment would meet it: the simulator over HTTP,
 * worker processes each running a tracker with callbacks off on one shared store, transfers of
 * many users moved through every ending (delivered, refunded, failed, never sent so expired) on
 * timers of tens of ms, and one worker SIGKILLed and respawned every few seconds. What the
 * workers dispatched is read back from the lines they appended.
 */

const WORKER = new URL('../fleet/tracker-worker.ts', import.meta.url).pathname;

export type Fate = 'delivered' | 'refunded' | 'failed' | 'expired';
/** The states each ending passes after `submitted`, in order. */
const PATHS: Record<Exclude<Fate, 'expired'>, TransferStatus[]> = {
  delivered: ['source_confirmed', 'delivered'],
  refunded: ['source_confirmed', 'refund_pending', 'refunded'],
  failed: ['failed'],
};

export interface Dispatch {
  event: 'transition' | 'final' | 'error';
  id: string;
  status: string;
  previous?: string | null;
  message?: string;
  /** Of an `error`: the tracker's stage (`listener` when a listener threw or outran its bound). */
  stage?: string;
  /** Who dispatched: a worker's pid, or an in-process tracker's number. */
  pid: number;
  at: number;
}

export interface ChaosOptions {
  /** How the workers reach the store: `FLEET_STORE`, `FLEET_STORE_URL`, `FLEET_PREFIX`. */
  storeEnv: Record<string, string>;
  /** The parent's own handle on the same store: `execute` and `track` record transfers through it. */
  store: TrackerStore;
  transfers: number;
  users: number;
  workers: number;
  killEveryMs: number;
  /** Kills during which transfers are moving: a share of them starts after each. */
  kills: number;
  leaseMs: number;
  /** Gives up waiting for every final after this long. */
  deadlineMs: number;
}

export interface ChaosResult {
  sim: PartnerSimulator;
  fates: Map<string, Fate>;
  dispatches: Dispatch[];
  killed: Set<number>;
  spawned: number;
  /** How long the simulator moved transfers with the fleet running, and then until every final was in (ms). */
  drivenMs: number;
  settledMs: number;
  /** Reads of one transfer the fleet made. */
  reads: number;
}

/** `fate` for the k-th of `n` transfers: 60 % delivered, 15 % refunded, 10 % failed, 15 % never sent. */
function fateOf(k: number): Fate {
  const slot = k % 20;
  if (slot < 12) return 'delivered';
  if (slot < 15) return 'refunded';
  if (slot < 17) return 'failed';
  return 'expired';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const jitter = (from: number, to: number) => from + Math.floor(Math.random() * (to - from));

export const isRead = (request: { method: string; path: string }) =>
  request.method === 'GET' && /^\/bridge\/transfers\/[^/]+$/.test(request.path);

/** Reads every line the workers wrote so far (a line cut by a SIGKILL mid-write is skipped). */
export function readDispatches(dir: string): Dispatch[] {
  return readdirSync(dir).flatMap((name) =>
    readFileSync(join(dir, name), 'utf8')
      .split('\n')
      .flatMap((line) => {
        try {
          return line ? [JSON.parse(line) as Dispatch] : [];
        } catch {
          return [];
        }
      }),
  );
}

/** Resolves once every transfer of `fates` had a `final` dispatched, or after `deadlineMs`. */
export async function finalsIn(
  dispatches: () => Dispatch[],
  fates: Map<string, Fate>,
  deadlineMs: number,
): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    const finals = new Set(
      dispatches()
        .filter((d) => d.event === 'final')
        .map((d) => d.id),
    );
    if ([...fates.keys()].every((id) => finals.has(id))) return;
    await sleep(200);
  }
}

/** Forks workers, keeps `workers` of them alive and kills one every `killEveryMs` until stopped. */
function fleet(worker: string, env: Record<string, string>, options: ChaosOptions) {
  const live: ChildProcess[] = [];
  const killed = new Set<number>();
  let spawned = 0;
  const spawn = (slot: number) => {
    const child = fork(worker, [], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    spawned++;
    live[slot] = child;
    return new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) =>
        reject(new Error(`tracker worker exited with ${code} before it was ready`)),
      );
    });
  };
  let chaos: Promise<void> | undefined;
  let running = true;
  // One worker down at a time: the next kill waits until the last one's replacement is up, so a
  // slow start on a busy machine never leaves the fleet empty.
  const killLoop = async () => {
    while (running) {
      await sleep(options.killEveryMs);
      if (!running) return;
      const slot = Math.floor(Math.random() * options.workers);
      const victim = live[slot]!;
      if (victim.pid !== undefined) killed.add(victim.pid);
      victim.kill('SIGKILL');
      await spawn(slot).catch(() => {});
      for (const waiter of waiters.splice(0)) waiter();
    }
  };
  const waiters: (() => void)[] = [];
  return {
    killed,
    spawned: () => spawned,
    /** Resolves once `count` workers were killed and replaced. */
    async kills(count: number) {
      while (killed.size < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    async start() {
      await Promise.all(Array.from({ length: options.workers }, (_, slot) => spawn(slot)));
      chaos = killLoop();
    },
    async stop() {
      running = false;
      await chaos;
      await Promise.all(
        live.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGKILL');
            }),
        ),
      );
    },
  };
}

/** Moves a submitted transfer along its ending: it starts within `spreadMs`, then a step every few tens of ms. */
export async function drive(
  sim: PartnerSimulator,
  transferId: string,
  fate: Exclude<Fate, 'expired'>,
  spreadMs: number,
) {
  await sleep(jitter(0, spreadMs));
  for (const status of PATHS[fate]) {
    await sleep(jitter(20, 300));
    sim.advance(transferId, status);
  }
}

/** Moves the sent transfers: a share starts after each kill, so that every kill meets transfers in flight. */
async function driveInWaves(
  sim: PartnerSimulator,
  fates: Map<string, Fate>,
  workers: { kills(count: number): Promise<void> },
  options: ChaosOptions,
) {
  const sent = [...fates].filter(
    (entry): entry is [string, Exclude<Fate, 'expired'>] => entry[1] !== 'expired',
  );
  const driving: Promise<void>[] = [];
  for (let wave = 0; wave <= options.kills; wave++) {
    if (wave > 0) await workers.kills(wave);
    const share = sent.filter((_, i) => i % (options.kills + 1) === wave);
    driving.push(...share.map(([id, fate]) => drive(sim, id, fate, options.killEveryMs)));
  }
  await Promise.all(driving);
}

/**
 * Builds the transfers before any worker runs, round-robin over the users: the unsent ones are
 * constructed and tracked; one sent transfer in ten goes through `execute({ tracker })`
 * (constructed, tracked, verified, signed, sent), the others are constructed, tracked and moved
 * to `submitted` by the simulator, which spares the machine most of the signing without changing
 * what a tracker sees.
 */
async function createTransfers(
  sim: PartnerSimulator,
  client: PartnerClient,
  recorder: TransferTracker,
  users: { userId: string; signer: LocalAccount }[],
  count: number,
) {
  const routeId = sim.routes()[0]!.routeId;
  const fates = new Map<string, Fate>();
  for (let k = 0; k < count; k++) {
    const { userId, signer } = users[k % users.length]!;
    const fate = fateOf(k);
    if (fate !== 'expired' && k % 10 === 0) {
      const sent = await client.bridge.execute({ userId, routeId, amount: '1', signer, tracker: recorder });
      fates.set(sent.transferId, fate);
      continue;
    }
    const { transferId } = await client.bridge.construct({ userId, routeId, amount: '1' });
    await recorder.track({ userId, transferId });
    if (fate !== 'expired') sim.advance(transferId, 'submitted');
    fates.set(transferId, fate);
  }
  return fates;
}

/**
 * The transfers of a scenario, recorded in `store` before any tracker runs, each with the ending
 * the simulator will give it; the unsent ones' quotes have run out by the time this resolves.
 */
export async function recordTransfers(
  sim: PartnerSimulator,
  quoteTtlSec: number,
  options: Pick<ChaosOptions, 'store' | 'users' | 'transfers'>,
): Promise<Map<string, Fate>> {
  const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
  // Never started: the parent only records transfers, as an API process beside the fleet would.
  const recorder = createTransferTracker({ client, store: options.store, discover: false });
  recorder.on('error', () => {});
  const users = Array.from({ length: options.users }, () => {
    const user = sim.createUser({ organisationId: sim.demo.organisationId });
    for (const route of sim.routes())
      sim.fund(user.userId, route.from.chainId, route.from.contractAddress, 10n ** 30n);
    return { userId: user.userId, signer: privateKeyToAccount(user.wallet!.privateKey) };
  });
  const fates = await createTransfers(sim, client, recorder, users, options.transfers);
  // Every unsent intent runs out now: the trackers learn it from their next read.
  sim.advanceClock(quoteTtlSec * 1_000 + 1_000);
  return fates;
}

/** Runs the whole scenario and answers what happened; the caller judges it (see `judge`). */
export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const quoteTtlSec = 120;
  const sim = createPartnerSimulator({ tokenTtlSec: 86_400, quoteTtlSec });
  const server = await sim.listen();
  const dir = mkdtempSync(join(tmpdir(), 'tracker-fleet-'));
  const reports = join(dir, 'reports');
  mkdirSync(reports);
  const workers = fleet(
    // Bundled: a process killed every few seconds is replaced by one that must start fast.
    await bundled(WORKER),
    {
      ...options.storeEnv,
      FLEET_API: server.url,
      FLEET_CLIENT_ID: sim.demo.credentials.clientId,
      FLEET_CLIENT_SECRET: sim.demo.credentials.clientSecret,
      FLEET_REPORTS: reports,
      FLEET_LEASE_MS: String(options.leaseMs),
    },
    options,
  );
  try {
    const fates = await recordTransfers(sim, quoteTtlSec, options);
    await workers.start();
    const started = Date.now();
    await driveInWaves(sim, fates, workers, options);
    const driven = Date.now();
    await finalsIn(() => readDispatches(reports), fates, options.deadlineMs);
    const settledMs = Date.now() - driven;
    await workers.stop();
    return {
      ...{
        sim,
        fates,
        dispatches: readDispatches(reports),
        killed: workers.killed,
        spawned: workers.spawned(),
      },
      ...{ drivenMs: driven - started, settledMs, reads: sim.requests.filter(isRead).length },
    };
  } finally {
    await workers.stop();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What the fleet must have done, as a list of broken promises (empty when all were kept): every
 * transfer's `final` dispatched and equal to the simulator's own final state; per transfer no
 * state dispatched after a newer one; a state dispatched twice only when the earlier dispatch
 * came from a process that was killed, or from one whose listener failed or outran its bound for
 * that transfer (docs/tracking.md's two causes of a second dispatch).
 */
export function judge({ sim, fates, dispatches, killed }: ChaosResult): string[] {
  const problems: string[] = [];
  const byId = new Map<string, Dispatch[]>();
  const listenerFailed = new Set<string>();
  for (const d of dispatches) {
    if (d.event === 'error') {
      if (d.stage === 'listener') listenerFailed.add(`${d.pid} ${d.id}`);
      continue;
    }
    byId.set(d.id, [...(byId.get(d.id) ?? []), d]);
  }
  for (const [id, fate] of fates) {
    const truth = sim.transfer(id).status;
    if (truth !== fate) problems.push(`${id}: the simulator ended it ${truth}, expected ${fate}`);
    const seen = (byId.get(id) ?? []).sort((a, b) => a.at - b.at);
    const finals = new Set(seen.filter((d) => d.event === 'final').map((d) => d.status));
    if (finals.size !== 1 || !finals.has(truth))
      problems.push(`${id}: final ${[...finals]} but truth ${truth}`);
    let highest = -1;
    for (const d of seen.filter((x) => x.event === 'transition')) {
      const rank = stateRank(d.status) ?? -1;
      if (rank < highest) problems.push(`${id}: ${d.status} dispatched after a newer state`);
      if (d.previous && (stateRank(d.previous) ?? -1) >= rank)
        problems.push(`${id}: ${d.previous} → ${d.status}`);
      highest = Math.max(highest, rank);
    }
    const groups = new Map<string, Dispatch[]>();
    for (const d of seen)
      groups.set(`${d.event} ${d.status}`, [...(groups.get(`${d.event} ${d.status}`) ?? []), d]);
    for (const [what, group] of groups) {
      for (const earlier of group.slice(0, -1)) {
        if (!killed.has(earlier.pid) && !listenerFailed.has(`${earlier.pid} ${id}`))
          problems.push(
            `${id}: ${what} twice, the first by ${earlier.pid}, never killed, no listener failed`,
          );
      }
    }
  }
  return problems;
}
