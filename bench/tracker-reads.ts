/**
 * Reads per final transfer: what following a transfer to its end costs in reads of the service,
 * with the tracker's default schedule, with and without callbacks. Time is compressed 100-fold
 * (a transfer's second is 10 ms here, and so is each default delay of the schedule), so that a
 * round takes seconds; the counts are what a transfer would cost in real time. The simulator
 * counts the reads (`GET /bridge/transfers/:id`). Each transfer is tracked right after its
 * `execute` returns, as a partner does who tracks what it sent.
 *
 * A delivered transfer is confirmed on the source chain 15 s after its submit and delivered 45 s
 * later; a refunded one is confirmed, then waits out a 10-minute fill deadline before its refund
 * starts, refunded 10 minutes after that.
 */
import type { TransferStatus } from 'partner-s2s-sdk';
import { createPartnerSimulator } from 'partner-s2s-sdk/testing';
import { privateKeyToAccount } from 'viem/accounts';
import { context, fixed, table } from './lib.js';
import { sdk } from './sdk.js';

const SCALE = 100;
const LIVES = {
  delivered: [
    ['source_confirmed', 15_000],
    ['delivered', 45_000],
  ],
  refunded: [
    ['source_confirmed', 15_000],
    ['refund_pending', 600_000],
    ['refunded', 600_000],
  ],
} as const satisfies Record<string, readonly (readonly [TransferStatus, number])[]>;
type Fate = keyof typeof LIVES;
const COUNTS: Record<Fate, number> = { delivered: 20, refunded: 10 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const scaled = <T extends Record<string, number>>(values: T) =>
  Object.fromEntries(
    Object.entries(values).map(([key, ms]) => [key, Math.max(1, Math.round(ms / SCALE))]),
  ) as T;

/** One round: every transfer followed to its end; answers the mean reads per transfer of each fate. */
async function round(withCallbacks: boolean): Promise<Record<Fate, number>> {
  const router = sdk.createCallbackRouter({ authenticate: 'none' });
  router.on('error', () => {});
  const sim = createPartnerSimulator({
    quoteTtlSec: 3_600,
    ...(withCallbacks && {
      callbacks: async (body) => {
        await router.fetchHandler(
          new Request('http://partner.localhost/callbacks', { method: 'POST', body: JSON.stringify(body) }),
        );
      },
    }),
  });
  const client = new sdk.PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
  const tracker = sdk.createTransferTracker({
    client,
    ...(withCallbacks && { router }),
    schedule: scaled(sdk.DEFAULTS.tracker.schedule),
    afterExpiryMs: scaled({ ms: sdk.DEFAULTS.tracker.afterExpiryMs }).ms,
    deadlines: scaled(sdk.DEFAULTS.tracker.deadlines),
    tickMs: 5,
    maxReadsPerSecond: 100_000,
    discover: false,
  });
  let finals = 0;
  tracker.on('final', () => void finals++);
  tracker.on('error', () => {});
  await tracker.start();
  const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
  const routeId = sim.routes()[0]!.routeId;
  const fates = new Map<string, Fate>();
  const lives: Promise<void>[] = [];
  for (const fate of Object.keys(COUNTS) as Fate[]) {
    for (let i = 0; i < COUNTS[fate]; i++) {
      const userId = sim.demo.userId;
      const { transferId } = await client.bridge.execute({ userId, routeId, amount: '1', signer });
      await tracker.track({ userId, transferId });
      fates.set(transferId, fate);
      lives.push(
        (async () => {
          for (const [status, after] of LIVES[fate]) {
            await sleep(after / SCALE);
            sim.advance(transferId, status);
          }
        })(),
      );
    }
  }
  await Promise.all(lives);
  const until = Date.now() + 60_000;
  while (finals < fates.size) {
    if (Date.now() > until) throw new Error(`${finals} of ${fates.size} transfers reached final in time`);
    await sleep(20);
  }
  await tracker.stop();
  sim.close();
  const reads: Record<Fate, number> = { delivered: 0, refunded: 0 };
  for (const request of sim.requests) {
    const id = /^\/bridge\/transfers\/([^/]+)$/.exec(request.path)?.[1];
    const fate = request.method === 'GET' && id !== undefined ? fates.get(id) : undefined;
    if (fate) reads[fate] += 1 / COUNTS[fate];
  }
  return reads;
}

export async function trackerReads(): Promise<void> {
  const without = await round(false);
  const withCallbacks = await round(true);
  table(
    `Reads per final transfer, the tracker's default schedule (time compressed ${SCALE}-fold; ${COUNTS.delivered} delivered, ${COUNTS.refunded} refunded)`,
    ['callbacks', 'delivered', 'refunded'],
    [
      ['off', fixed(without.delivered, 1), fixed(without.refunded, 1)],
      ['on (every delivery answered)', fixed(withCallbacks.delivered, 1), fixed(withCallbacks.refunded, 1)],
    ],
  );
  context('tracker reads per delivered transfer, no callbacks', fixed(without.delivered, 1));
  context('tracker reads per refunded transfer, no callbacks', fixed(without.refunded, 1));
  const total = COUNTS.delivered + COUNTS.refunded;
  const mean =
    (withCallbacks.delivered * COUNTS.delivered + withCallbacks.refunded * COUNTS.refunded) / total;
  const polled = (without.delivered * COUNTS.delivered + without.refunded * COUNTS.refunded) / total;
  // Each delivery of a state that is not final wakes one read (the read is the truth), so healthy
  // callbacks cost a read per such state, fewer than polling alone.
  context('tracker reads per transfer, healthy callbacks', `${fixed(mean, 1)} (${fixed(polled, 1)} without)`);
}
