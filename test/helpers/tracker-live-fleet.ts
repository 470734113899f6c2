import { createTransferTracker, PartnerClient, type TrackerStore } from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import {
  type ChaosResult,
  type Dispatch,
  drive,
  type Fate,
  finalsIn,
  isRead,
  recordTransfers,
} from './tracker-fleet.js';

/**
 * A tracker fleet where nobody dies but everything is slow, as a partner's deployment meets a
 * struggling service: trackers in one process, each with its own client and its own connection to
 * one shared store, callbacks off. The service (the simulator, behind a fetch that injects the
 * faults) answers the reads of each transfer in turn: one slowed past the lease, one 503 with
 * `Retry-After`, one at once, and again. Every listener takes a little less than its bound. What
 * the trackers dispatched is judged by `judge` of tracker-fleet.ts: with nobody killed, a state
 * may come twice only after a listener of the first dispatcher failed or outran its bound.
 */
export interface LiveFleetOptions {
  /** The parent's handle on the store: transfers are recorded through it. */
  store: TrackerStore;
  /** One store per tracker, each its own connection to the same server and keys. */
  stores: TrackerStore[];
  transfers: number;
  users: number;
  leaseMs: number;
  /** Passed to each tracker when given; else the tracker's default applies. */
  listenerTimeoutMs?: number;
  /** How long each `transition` and `final` listener takes after it acted. */
  listenerMs: number;
  /** How long a slowed read waits before the service answers it. */
  slowReadMs: number;
  /** The `Retry-After` of each 503, in seconds. */
  retryAfterSec: number;
  /** Gives up waiting for every final after this long. */
  deadlineMs: number;
}

const sleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

const READ = /\/bridge\/transfers\/([^/?]+)$/;

/**
 * The simulator's fetch with the faults: the reads of one transfer (counted across the whole
 * fleet, as the service would see them) go slow, 503 with `Retry-After`, fine, in turn. A slowed
 * read honours the caller's signal, as a real connection's would end.
 */
function faultyFetch(sim: PartnerSimulator, options: LiveFleetOptions) {
  const reads = new Map<string, number>();
  return async (input: Request | URL | string, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const id = method === 'GET' ? READ.exec(url.pathname)?.[1] : undefined;
    if (id !== undefined) {
      const n = reads.get(id) ?? 0;
      reads.set(id, n + 1);
      if (n % 3 === 0) await sleep(options.slowReadMs, init?.signal);
      else if (n % 3 === 1) {
        const body = {
          statusCode: 503,
          error: 'Service Unavailable',
          code: 'SERVICE_UNAVAILABLE',
          message: 'busy',
        };
        return new Response(JSON.stringify(body), {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': String(options.retryAfterSec) },
        });
      }
    }
    return sim.fetch(input, init);
  };
}

/** Runs the scenario and answers what happened, in the shape `judge` takes (nobody is killed). */
export async function runLiveFleet(options: LiveFleetOptions): Promise<ChaosResult> {
  const quoteTtlSec = 120;
  const sim = createPartnerSimulator({ tokenTtlSec: 86_400, quoteTtlSec });
  const fates = await recordTransfers(sim, quoteTtlSec, options);
  const dispatches: Dispatch[] = [];
  const fetch = faultyFetch(sim, options);
  const trackers = options.stores.map((store, index) => {
    const pid = index + 1;
    const report = (line: Omit<Dispatch, 'pid' | 'at'>) => dispatches.push({ ...line, pid, at: Date.now() });
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch });
    const tracker = createTransferTracker({
      client,
      store,
      schedule: { pending: 100, submitted: 50, source_confirmed: 50, refund_pending: 50 },
      afterExpiryMs: 20,
      leaseMs: options.leaseMs,
      ...(options.listenerTimeoutMs === undefined ? {} : { listenerTimeoutMs: options.listenerTimeoutMs }),
      tickMs: 20,
      maxReadsPerSecond: 500,
      discover: false,
    });
    // Each listener acts (the line is written) and then takes its time, as a slow ledger would.
    tracker.on('transition', async (transfer, previous) => {
      report({
        event: 'transition',
        id: transfer.transferId,
        status: transfer.status,
        previous: previous ?? null,
      });
      await sleep(options.listenerMs);
    });
    tracker.on('final', async (transfer) => {
      report({ event: 'final', id: transfer.transferId, status: transfer.status });
      await sleep(options.listenerMs);
    });
    tracker.on('error', (error) => {
      const { transferId, stage, message } = error as {
        transferId?: string;
        stage?: string;
        message?: string;
      };
      report({
        event: 'error',
        id: transferId ?? '',
        status: '',
        ...(stage === undefined ? {} : { stage }),
        message: String(message).slice(0, 200),
      });
    });
    return tracker;
  });
  try {
    for (const tracker of trackers) await tracker.start();
    const started = Date.now();
    const sent = [...fates].filter(
      (entry): entry is [string, Exclude<Fate, 'expired'>] => entry[1] !== 'expired',
    );
    await Promise.all(sent.map(([id, fate]) => drive(sim, id, fate, 2 * options.leaseMs)));
    const driven = Date.now();
    await finalsIn(() => dispatches, fates, options.deadlineMs);
    const settledMs = Date.now() - driven;
    // A step still under way dispatches before its tracker's stop() resolves: it is judged too.
    await Promise.all(trackers.map((tracker) => tracker.stop()));
    return {
      ...{ sim, fates, dispatches: [...dispatches], killed: new Set<number>(), spawned: trackers.length },
      ...{ drivenMs: driven - started, settledMs, reads: sim.requests.filter(isRead).length },
    };
  } finally {
    await Promise.all(trackers.map((tracker) => tracker.stop()));
    sim.close();
  }
}
