import { privateKeyToAccount } from 'viem/accounts';
import {
  type BridgeTransfer,
  createTransferTracker,
  MemoryTrackerStore,
  PartnerClient,
  type TrackerStore,
  type TransferTracker,
  type TransferTrackerOptions,
} from '../../src/index.js';
import { createPartnerSimulator, PartnerSimulator, type SimulatorOptions } from '../../src/testing/index.js';
import { TRACKER_STORE_METHODS } from '../../src/tracker/store.js';

export const ROUTE = 'base-usdc-to-bsc-usdc';

/** Durations of tens of ms, so that a test sees many rounds quickly. */
export const FAST: Partial<TransferTrackerOptions> = {
  schedule: { pending: 30, submitted: 20, source_confirmed: 20, refund_pending: 20 },
  tickMs: 10,
  leaseMs: 2_000,
  maxReadsPerSecond: 1_000,
  afterExpiryMs: 50,
  discover: false,
};

export interface Harness {
  sim: PartnerSimulator;
  client: PartnerClient;
  store: TrackerStore;
  tracker: TransferTracker;
  userId: string;
  transitions: [string, string, string | undefined][];
  finals: BridgeTransfer[];
  errors: unknown[];
  /** Reads of one transfer the simulator received. */
  reads(transferId: string): number;
  /** A transfer submitted through execute (no tracker), left `submitted`. */
  submitted(amount?: string): Promise<string>;
  /** `count` transfers through `execute({ tracker })`, one after another. */
  executed(count: number): Promise<string[]>;
  /** A transfer constructed and never signed (`pending`). */
  unsigned(): Promise<string>;
  close(): Promise<void>;
}

/**
 * A simulator, a client of it and a tracker on the fast durations. With `baseUrl` (a simulator
 * given whole, serving over HTTP) the client goes over the network instead of `sim.fetch`.
 */
export function harness(
  options: Partial<TransferTrackerOptions> = {},
  simulator: SimulatorOptions | PartnerSimulator = {},
  baseUrl?: string,
): Harness {
  const sim = simulator instanceof PartnerSimulator ? simulator : createPartnerSimulator(simulator);
  const client = new PartnerClient({
    baseUrl: baseUrl ?? sim.baseUrl,
    ...sim.demo.credentials,
    ...(baseUrl ? {} : { fetch: sim.fetch }),
  });
  const store = options.store ?? new MemoryTrackerStore();
  const tracker = createTransferTracker({ ...FAST, ...options, client, store });
  const h: Harness = {
    sim,
    client,
    store,
    tracker,
    userId: sim.demo.userId,
    transitions: [],
    finals: [],
    errors: [],
    reads: (transferId) =>
      sim.requests.filter((r) => r.method === 'GET' && r.path === `/bridge/transfers/${transferId}`).length,
    async submitted(amount = '1') {
      const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
      const { transferId } = await client.bridge.execute({
        userId: sim.demo.userId,
        routeId: ROUTE,
        amount,
        signer,
      });
      return transferId;
    },
    async executed(count) {
      const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const params = { userId: sim.demo.userId, routeId: ROUTE, amount: '1', signer, tracker };
        ids.push((await client.bridge.execute(params)).transferId);
      }
      return ids;
    },
    async unsigned() {
      const built = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE, amount: '1' });
      return built.transferId;
    },
    async close() {
      await tracker.stop();
      sim.close();
    },
  };
  tracker.on(
    'transition',
    (transfer, previous) => void h.transitions.push([transfer.transferId, transfer.status, previous]),
  );
  tracker.on('final', (transfer) => void h.finals.push(transfer));
  tracker.on('error', (error) => void h.errors.push(error));
  return h;
}

/** Waits until `check` holds, polling; fails with `what` after `ms` (a bound, not a measurement). */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 15_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The states dispatched for one transfer, with their `previous`. */
export function statesOf(h: Harness, transferId: string): [string, string | undefined][] {
  return h.transitions.filter(([id]) => id === transferId).map(([, status, previous]) => [status, previous]);
}

/** A store that calls `before(method)` ahead of each call of `inner` (which may reject it). */
export function wrapStore(
  inner: TrackerStore,
  before: (method: (typeof TRACKER_STORE_METHODS)[number]) => void,
): TrackerStore {
  const wrapped: Record<string, unknown> = {};
  for (const method of TRACKER_STORE_METHODS) {
    wrapped[method] = async (...args: unknown[]) => {
      before(method);
      return (inner[method] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
    };
  }
  return wrapped as unknown as TrackerStore;
}
