import { readArgs } from '../core/args.js';
import type { TrackerRecord } from './store.js';

/**
 * A record before any read: nothing observed, nothing dispatched, due at once. The tracker writes
 * every record it inserts through this, and the conformance suite builds its fixtures with it.
 *
 * @example
 * await store.track(newTrackerRecord({ userId, transferId, source: 'track', now: Date.now() }));
 */
export function newTrackerRecord(params: {
  userId: string;
  transferId: string;
  source: TrackerRecord['source'];
  now: number;
}): TrackerRecord {
  const { transferId, userId, source, now } = readArgs('newTrackerRecord', () => ({ ...params }));
  return {
    transferId,
    userId,
    observed: null,
    observedRank: -1,
    dispatched: null,
    dispatchedRank: -1,
    final: false,
    phase: null,
    phaseSince: null,
    overdue: [],
    intervalMs: 0,
    failures: 0,
    reads: 0,
    source,
    trackedAt: now,
    updatedAt: now,
  };
}
