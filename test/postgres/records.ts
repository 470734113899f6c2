import { newTrackerRecord } from '../../src/tracker/record.js';
import type { TrackerRecord } from '../../src/tracker/store.js';

/** A tracker record as the tracker writes it when it starts tracking a transfer. */
export const record = (transferId: string): TrackerRecord =>
  newTrackerRecord({ transferId, userId: 'user-1', source: 'track', now: Date.now() });

/** A schema of its own per test: the tests share one server and never see each other's rows. */
export const freshSchema = () => `t_${Math.random().toString(36).slice(2, 10)}`;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
