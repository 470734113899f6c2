import type { RequestOptions } from '../core/request-options.js';
import { isPartnerError } from '../errors/base.js';
import { ResponseValidationError } from '../errors/client-errors.js';
import { TrackerError } from '../errors/tracker-errors.js';
import { ENDPOINTS, sameTransfer } from '../resources/endpoints.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import { FINAL_STATES, stateRank } from '../schemas/states.js';
import { chainWord } from './confirm.js';
import type { TrackerEvents } from './events.js';
import type { TrackerClient } from './options.js';
import type { ReadLimiter } from './rate.js';
import { advanceSchedule, backoff, nextReadIn, overduePhase, type ScheduleSettings } from './schedule.js';
import type { TrackerLease, TrackerRecord, TrackerStore } from './store.js';

/** What one step of one transfer needs. */
export interface StepContext {
  client: TrackerClient;
  store: TrackerStore;
  events: TrackerEvents;
  limiter: ReadLimiter;
  schedule: ScheduleSettings;
  /** Fires on `stop()`: a step still waiting for room to read, or reading, gives its lease back. */
  signal: AbortSignal;
  /** What a renewal before each listener call extends the lease by. */
  leaseMs: number;
  /** What each listener may take: it must end within the lease renewed before it. */
  listenerTimeoutMs: number;
  /** The options of every read (`get`, `list`): its share of the lease, and `signal`. */
  read: RequestOptions;
}

/** What one step did. */
export interface StepResult {
  read: number;
  dispatched: number;
  /** The transfer as read, when the step read it. */
  transfer?: BridgeTransfer;
  /** Why the read failed, when it did. */
  failure?: unknown;
}

/**
 * One step of one leased transfer: a read (a state delivered or listed wakes one too, since
 * a callback is a trigger and the read is the truth; a final one needs none), the newest state dispatched, the schedule moved
 * on, the record committed under the lease's fence. A commit the fence refuses is dropped: another
 * owner has the transfer now. When the read fails, a delivered state still waiting is dispatched.
 */
export async function step(ctx: StepContext, lease: TrackerLease, forceRead = false): Promise<StepResult> {
  const record: TrackerRecord = structuredClone(lease.record);
  const id = record.transferId;
  const result: StepResult = { read: 0, dispatched: 0 };
  const waiting = record.observedRank > record.dispatchedRank;
  // A final state, delivered or listed, cannot change: nothing is left to read.
  const settled = waiting && FINAL_STATES.has(record.observed!.status);
  if (forceRead || (!record.final && !settled)) {
    try {
      await ctx.limiter.take(ctx.signal);
    } catch {
      await settle(ctx, () => ctx.store.release(lease, 0), id);
      return result;
    }
    result.read = 1;
    record.reads += 1;
    try {
      // A signal of this read's own: fifty reads under way would otherwise each hang a listener on
      // the tracker's one signal, which Node reports as a leak past ten.
      const read = { ...ctx.read, signal: AbortSignal.any([ctx.signal]) };
      const transfer = await ctx.client.bridge.transfers.get({ userId: record.userId, transferId: id }, read);
      // A client known only by its shape may hand on an answer the SDK's own client refuses.
      refuseOther(transfer, record);
      result.transfer = transfer;
      record.failures = 0;
      observe(record, transfer);
    } catch (error) {
      // stop() ended the read: nothing failed, and the lease goes back as it was.
      if (ctx.signal.aborted) {
        await settle(ctx, () => ctx.store.release(lease, 0), id);
        return result;
      }
      result.failure = error;
      record.failures += 1;
      record.updatedAt = Date.now();
      ctx.events.fail(readError(error, id), `reading ${id} failed; read again later`);
      if (!waiting) {
        await settle(
          ctx,
          () => ctx.store.complete(lease, { record, nextReadInMs: backoff(ctx.schedule, record) }),
          id,
        );
        return result;
      }
    }
  }
  let retryMs: number | undefined;
  if (!record.final && record.observed && record.observedRank > record.dispatchedRank) {
    if (await dispatchState(ctx, lease, record)) result.dispatched = 1;
    else
      retryMs = Math.min(
        ctx.schedule.schedule.submitted,
        record.intervalMs || ctx.schedule.schedule.submitted,
      );
  }
  const now = Date.now();
  if (!record.final && record.observed) {
    advanceSchedule(ctx.schedule, record, record.observed.status, now);
    const phase = overduePhase(ctx.schedule, record, now);
    if (phase && record.phaseSince !== null) {
      const onChain = await chainWord(ctx.client, record, ctx.read, (error) =>
        ctx.events.fail(error, `asking the chain about ${id}'s operation failed; overdue goes without it`),
      );
      const since = new Date(record.phaseSince);
      const overdue = { transfer: record.observed, phase, since, ...(onChain ? { onChain } : {}) };
      if (await ctx.events.dispatch('overdue', id, [overdue], () => holds(ctx, lease)))
        record.overdue.push(phase);
      advanceSchedule(ctx.schedule, record, record.observed.status, now);
    }
  }
  record.updatedAt = now;
  const nextReadInMs =
    retryMs ?? (record.observed ? nextReadIn(ctx.schedule, record, now) : ctx.schedule.schedule.pending);
  await settle(ctx, () => ctx.store.complete(lease, { record, nextReadInMs }), id);
  return result;
}

/** A read that is not this record's transfer (another transfer, another user's) is a failed read. */
function refuseOther(transfer: BridgeTransfer, record: TrackerRecord): void {
  const issues = sameTransfer(transfer, record);
  if (issues.length === 0) return;
  throw ResponseValidationError.mismatch({
    method: 'GET',
    path: ENDPOINTS.transfer.path,
    status: 200,
    issues,
  });
}

/** Takes a read into the record when it is newer than what was observed; an unknown state is not ranked. */
function observe(record: TrackerRecord, transfer: BridgeTransfer): void {
  const rank = stateRank(transfer.status);
  if (rank === undefined || rank <= record.observedRank) return;
  record.observed = transfer;
  record.observedRank = rank;
}

/**
 * Dispatches the observed state: its `transition`, then `final` if it is final, each listener
 * only under the lease, renewed right before it. Recorded as done only when every listener
 * succeeded; otherwise it is dispatched again later (by whoever holds the transfer then).
 */
async function dispatchState(ctx: StepContext, lease: TrackerLease, record: TrackerRecord): Promise<boolean> {
  const transfer = record.observed!;
  const previous = record.dispatched ?? undefined;
  const final = FINAL_STATES.has(transfer.status);
  const hold = () => holds(ctx, lease);
  if (!(await ctx.events.dispatch('transition', record.transferId, [transfer, previous], hold))) return false;
  if (final && !(await ctx.events.dispatch('final', record.transferId, [transfer], hold))) return false;
  record.dispatched = transfer.status;
  record.dispatchedRank = record.observedRank;
  record.final = final;
  return true;
}

/**
 * Renews the lease for `leaseMs` from now, right before a listener is called: false once another
 * owner claimed the transfer (a step that outlived its lease dispatches nothing the new holder
 * dispatches too), and false when the store could not say, or said it too late for a listener to
 * end within the lease, reported: dispatched later.
 */
async function holds(ctx: StepContext, lease: TrackerLease): Promise<boolean> {
  const id = lease.record.transferId;
  const asked = performance.now();
  try {
    if ((await ctx.store.renew(lease, { leaseMs: ctx.leaseMs })) !== true) return false;
  } catch (error) {
    ctx.events.fail(storeError(error, id), `the store could not renew the lease of ${id}; dispatched later`);
    return false;
  }
  // The store renewed the lease after `asked`: it ends `leaseMs` after that at the earliest.
  const tookMs = Math.round(performance.now() - asked);
  if (tookMs + ctx.listenerTimeoutMs <= ctx.leaseMs) return true;
  const late = new TrackerError({
    stage: 'store',
    transferId: id,
    message: `the store took ${tookMs} ms to renew the lease of ${id}: a listener of up to ${ctx.listenerTimeoutMs} ms would outlive the ${ctx.leaseMs} ms lease`,
  });
  ctx.events.fail(late, `renewing the lease of ${id} was too slow; dispatched later`);
  return false;
}

/** A store call whose failure is reported, never thrown: the lease expires and the work is done again. */
async function settle(ctx: StepContext, call: () => Promise<unknown>, transferId: string): Promise<void> {
  try {
    await call();
  } catch (error) {
    ctx.events.fail(storeError(error, transferId), `the store failed for ${transferId}; tried again later`);
  }
}

function readError(error: unknown, transferId: string): unknown {
  return isPartnerError(error)
    ? error
    : new TrackerError({ stage: 'read', transferId, message: `reading ${transferId} failed`, cause: error });
}

/** What a store threw, named as a store failure. */
export function storeError(error: unknown, transferId?: string): TrackerError {
  const detail = error instanceof Error ? `: ${error.name}` : '';
  return new TrackerError({
    stage: 'store',
    transferId,
    message: `the tracker's store failed${transferId ? ` for ${transferId}` : ''}${detail}`,
    cause: error,
  });
}
