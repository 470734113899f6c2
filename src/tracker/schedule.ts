import { DEFAULTS } from '../core/defaults.js';
import type { WaitPhase } from '../flows/wait.js';
import type { TrackerDeadlines, TrackerSchedule } from './options.js';
import type { TrackerRecord } from './store.js';

/**
 * The phase each state that is not final belongs to, for deadlines: `pending` and `submitted` are
 * one phase, so moving from one to the other does not restart its clock.
 */
const PHASE_OF_STATE: Readonly<Record<string, WaitPhase>> = {
  pending: 'sourceConfirmation',
  submitted: 'sourceConfirmation',
  source_confirmed: 'delivery',
  refund_pending: 'refund',
};

/** The deadline phase of a state; `undefined` for a final or unknown one. */
export function phaseOf(status: string | null | undefined): WaitPhase | undefined {
  return status ? PHASE_OF_STATE[status] : undefined;
}

/** What the schedule needs of the options. */
export interface ScheduleSettings {
  schedule: TrackerSchedule;
  deadlines: TrackerDeadlines;
  afterExpiryMs: number;
  /** Every scheduled delay times this: `DEFAULTS.tracker.withRouterFactor` with a router, else 1. */
  stretch: number;
}

/** The first delay in a state; a state the service added later is read as often as `submitted`. */
export function firstDelay(settings: ScheduleSettings, status: string | null | undefined): number {
  const schedule = settings.schedule as unknown as Record<string, number>;
  return (status ? schedule[status] : undefined) ?? settings.schedule.pending;
}

/** The longest delay in a state: `capFactor` times its first. */
export function capDelay(settings: ScheduleSettings, status: string | null | undefined): number {
  return firstDelay(settings, status) * DEFAULTS.tracker.capFactor;
}

/**
 * Moves the record's schedule on after a step that saw `status` (the newest state known): a new
 * state starts from its first delay (and a new phase's deadline clock from now), the same state
 * grows the delay by `growthFactor` up to its cap, and an overdue phase is read at the cap.
 */
export function advanceSchedule(
  settings: ScheduleSettings,
  record: TrackerRecord,
  status: string,
  now: number,
): void {
  if (record.phase !== status) {
    if (phaseOf(status) !== phaseOf(record.phase) || record.phaseSince === null) record.phaseSince = now;
    record.phase = status;
    record.intervalMs = firstDelay(settings, status);
  } else {
    const grown =
      record.intervalMs > 0
        ? record.intervalMs * DEFAULTS.tracker.growthFactor
        : firstDelay(settings, status);
    record.intervalMs = Math.min(capDelay(settings, status), Math.round(grown));
  }
  const phase = phaseOf(status);
  if (phase && record.overdue.includes(phase)) record.intervalMs = capDelay(settings, status);
}

/** The phase whose deadline has passed and that was not reported yet, if any. */
export function overduePhase(
  settings: ScheduleSettings,
  record: TrackerRecord,
  now: number,
): WaitPhase | undefined {
  const phase = phaseOf(record.phase);
  if (!phase || record.phaseSince === null || record.overdue.includes(phase)) return undefined;
  return now - record.phaseSince >= settings.deadlines[phase] ? phase : undefined;
}

/** When to read next after a step, by the record's schedule (a pending one just after its expiry). */
export function nextReadIn(settings: ScheduleSettings, record: TrackerRecord, now: number): number {
  if (record.phase === 'pending' && typeof record.expiresAt === 'number') {
    const afterExpiry = record.expiresAt + settings.afterExpiryMs - now;
    if (afterExpiry > 0) return afterExpiry;
  }
  return record.intervalMs * settings.stretch;
}

/** After `failures` failed reads in a row: twice the first delay, four times, … up to the cap. */
export function backoff(settings: ScheduleSettings, record: TrackerRecord): number {
  const first = firstDelay(settings, record.phase);
  return Math.min(capDelay(settings, record.phase), first * 2 ** Math.min(record.failures, 30));
}
