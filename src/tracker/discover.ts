import type { Page } from '../core/pagination.js';
import { TrackerError } from '../errors/tracker-errors.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import { stateRank } from '../schemas/states.js';
import type { TrackerDiscovery } from './options.js';
import { newTrackerRecord } from './record.js';
import { type StepContext, storeError } from './step.js';

/** What a sweep did: list pages read and transfers adopted. */
export interface SweepResult {
  read: number;
  adopted: number;
}

/**
 * One discovery sweep: every user with a record tracked or changed within the horizon, their
 * transfers listed newest first, page after page, until one older than the horizon; each transfer
 * without a record is recorded (source `discovered`) with what the list showed as its observation,
 * so that its state is dispatched without another read. A failure ends the user's sweep, reported.
 */
export async function sweep(ctx: StepContext, discover: Required<TrackerDiscovery>): Promise<SweepResult> {
  const result: SweepResult = { read: 0, adopted: 0 };
  const now = Date.now();
  const horizon = now - discover.horizonMs;
  let users: string[];
  try {
    users = await ctx.store.users(horizon);
  } catch (error) {
    ctx.events.fail(storeError(error), 'the store failed listing users to sweep; swept again later');
    return result;
  }
  for (const userId of users) {
    if (ctx.signal.aborted) break;
    try {
      await sweepUser(ctx, userId, discover.pageSize, horizon, result);
    } catch (error) {
      // `stop()` ended the sweep's read: nothing failed, the next sweep goes on.
      if (ctx.signal.aborted) break;
      ctx.events.fail(error, `sweeping the transfers of ${userId} failed; swept again later`);
    }
  }
  return result;
}

async function sweepUser(
  ctx: StepContext,
  userId: string,
  pageSize: number,
  horizon: number,
  result: SweepResult,
): Promise<void> {
  let page: Page<BridgeTransfer> | undefined;
  do {
    await ctx.limiter.take(ctx.signal);
    result.read += 1;
    page = page
      ? await page.getNextPage()
      : await ctx.client.bridge.transfers.list({ userId, limit: pageSize }, ctx.read);
    for (const transfer of page.data) {
      if (Date.parse(transfer.createdAt) < horizon) return;
      // A client known only by its shape may list what the SDK's own client refuses.
      if (transfer.userId !== userId) {
        ctx.events.fail(
          new TrackerError({
            stage: 'mismatch',
            message: `the transfers listed for ${userId} hold another user's`,
          }),
          `a transfer listed for ${userId} belongs to another user: not adopted`,
        );
        continue;
      }
      if (await adopt(ctx, transfer)) result.adopted += 1;
    }
  } while (page.hasNextPage() && !ctx.signal.aborted);
}

/** Records a transfer nobody tracked; true when this call did. */
async function adopt(ctx: StepContext, transfer: BridgeTransfer): Promise<boolean> {
  const id = transfer.transferId;
  const rank = stateRank(transfer.status);
  try {
    if (await ctx.store.get(id)) return false;
    const record = newTrackerRecord({
      userId: transfer.userId,
      transferId: id,
      source: 'discovered',
      now: Date.now(),
    });
    if (!(await ctx.store.track(record))) return false;
    if (rank !== undefined) await ctx.store.observe(id, transfer, rank);
  } catch (error) {
    throw storeError(error, id);
  }
  ctx.events.discovered(transfer);
  return true;
}
