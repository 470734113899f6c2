import { transfer } from '../../fixtures/wire.js';
import type { BridgeTransfer, TransferStatus } from '../../src/index.js';
import type { TrackerRecord } from '../../src/tracker/store.js';

/** A tracker record as the tracker writes it when it starts tracking a transfer. */
export function record(transferId: string, overrides: Partial<TrackerRecord> = {}): TrackerRecord {
  const now = Date.now();
  return {
    transferId,
    userId: 'user-1',
    observed: null,
    observedRank: -1,
    dispatched: null,
    dispatchedRank: -1,
    final: false,
    phase: null,
    phaseSince: null,
    overdue: [],
    intervalMs: 5_000,
    failures: 0,
    reads: 0,
    source: 'track',
    trackedAt: now,
    updatedAt: now,
    ...overrides,
  };
}

export const observed = (transferId: string, status: TransferStatus): BridgeTransfer =>
  transfer({ transferId, status });

/** A schema of its own per test: the tests share one server and never see each other's rows. */
export const freshSchema = () => `t_${Math.random().toString(36).slice(2, 10)}`;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
