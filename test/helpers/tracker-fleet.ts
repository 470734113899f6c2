import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import {
  createTransferTracker,
  PartnerClient,
  type TrackerStore,
  type TransferStatus,
} from '../../src/index.js';
import { stateRank } from '../../src/schemas/states.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';

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

/** Forks workers, keeps `workers` of them alive and kills one every `killEveryMs` until stopped. */
function fleet(env: Record<string, string>, options: ChaosOptions) {
  const live: ChildProcess[] = [];
  const killed = new Set<number>();
  let spawned = 0;
  const spawn = (slot: number) => {
    const child = fork(WORKER, [], {
      execArgv: ['--import', 'tsx'],
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
  let timer: ReturnType<typeof setInterval> | undefined;
  return {
    killed,
    spawned: () => spawned,
    async start() {
      await Promise.all(Array.from({ length: options.workers }, (_, slot) => spawn(slot)));
      timer = setInterval(() => {
        const slot = Math.floor(Math.random() * options.workers);
        const victim = live[slot]!;
        if (victim.pid !== undefined) killed.add(victim.pid);
        victim.kill('SIGKILL');
        spawn(slot).catch(() => {});
      }, options.killEveryMs);
    },
    async stop() {
      clearInterval(timer);
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

/** Moves a sent transfer along its ending, a step every few tens of ms; resolves at its end. */
async function drive(sim: PartnerSimulator, transferId: string, fate: Exclude<Fate, 'expired'>) {
  for (const status of PATHS[fate]) {
    await sleep(jitter(20, 250));
    sim.advance(transferId, status);
  }
}

/** Runs the whole scenario and answers what happened; the caller judges it (see `judge`). */
export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const quoteTtlSec = 120;
  const sim = createPartnerSimulator({ tokenTtlSec: 86_400, quoteTtlSec });
  const server = await sim.listen();
  const dir = mkdtempSync(join(tmpdir(), 'tracker-fleet-'));
  const workers = fleet(
    {
      ...options.storeEnv,
      FLEET_API: server.url,
      FLEET_CLIENT_ID: sim.demo.credentials.clientId,
      FLEET_CLIENT_SECRET: sim.demo.credentials.clientSecret,
      FLEET_REPORTS: dir,
      FLEET_LEASE_MS: String(options.leaseMs),
    },
    options,
  );
  try {
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
    const routeId = sim.routes()[0]!.routeId;
    await workers.start();
    const fates = new Map<string, Fate>();
    const driving: Promise<void>[] = [];
    for (let k = 0; k < options.transfers; k++) {
      const { userId, signer } = users[k % users.length]!;
      const fate = fateOf(k);
      if (fate === 'expired') {
        const built = await client.bridge.construct({ userId, routeId, amount: '1' });
        await recorder.track({ userId, transferId: built.transferId });
        fates.set(built.transferId, fate);
        continue;
      }
      const { transferId } = await client.bridge.execute({
        userId,
        routeId,
        amount: '1',
        signer,
        tracker: recorder,
      });
      fates.set(transferId, fate);
      driving.push(drive(sim, transferId, fate));
    }
    // Every unsent intent runs out now: the trackers learn it from their next read.
    sim.advanceClock(quoteTtlSec * 1_000 + 1_000);
    await Promise.all(driving);
    const until = Date.now() + options.deadlineMs;
    while (Date.now() < until) {
      const finals = new Set(
        readDispatches(dir)
          .filter((d) => d.event === 'final')
          .map((d) => d.id),
      );
      if ([...fates.keys()].every((id) => finals.has(id))) break;
      await sleep(200);
    }
    await workers.stop();
    return {
      sim,
      fates,
      dispatches: readDispatches(dir),
      killed: workers.killed,
      spawned: workers.spawned(),
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
 * came from a process that was killed.
 */
export function judge({ sim, fates, dispatches }: ChaosResult, killed: Set<number>): string[] {
  const problems: string[] = [];
  const byId = new Map<string, Dispatch[]>();
  for (const d of dispatches) {
    if (d.event === 'error') continue;
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
        if (!killed.has(earlier.pid))
          problems.push(`${id}: ${what} twice, the first by ${earlier.pid}, never killed`);
      }
    }
  }
  return problems;
}
