import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createCallbackRouter } from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { closeCallbackServers, serveCallbacks } from '../helpers/callback-server.js';
import { type Harness, harness, sleep, statesOf, until } from './helpers.js';

let h: Harness | undefined;
let server: { close: () => Promise<void> } | undefined;
afterEach(async () => {
  await h?.close();
  await server?.close();
  await closeCallbackServers();
  h = undefined;
  server = undefined;
});

/** A simulator served over HTTP on 127.0.0.1, and a tracker whose client reads it over the network. */
async function overHttp(options: Parameters<typeof harness>[0], sim: PartnerSimulator): Promise<Harness> {
  const served = await sim.listen();
  server = served;
  return harness(options, sim, served.url);
}

describe('createTransferTracker over HTTP', () => {
  it('lossy callbacks (500 to a share of deliveries until the simulator gives up) still give every final', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    let delivery = 0;
    // Every third delivery is refused, again on each retry: that state never arrives by callback.
    const refused = new Set<string>();
    const lossy = (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          transferId: string;
          status: string;
        };
        const id = `${body.transferId}:${body.status}`;
        if (!refused.has(id) && delivery++ % 3 === 0) refused.add(id);
        if (refused.has(id)) {
          res.writeHead(500).end();
          return;
        }
        router.dispatch(body).then(
          () => res.writeHead(200).end(),
          () => res.writeHead(500).end(),
        );
      });
    };
    const callbacks = await serveCallbacks(lossy);
    const sim = createPartnerSimulator({ callbacks });
    h = await overHttp(
      { router, schedule: { submitted: 100, source_confirmed: 100, refund_pending: 100 } },
      sim,
    );
    await h.tracker.start();
    const ids = await h.executed(9);
    for (const [i, id] of ids.entries()) {
      if (i % 3 === 2) {
        sim.advance(id, 'failed', { failureReason: 'reverted' });
        continue;
      }
      sim.advance(id, 'source_confirmed');
      if (i % 3 === 0) {
        sim.advance(id, 'delivered');
      } else {
        sim.advance(id, 'refund_pending');
        sim.advance(id, 'refunded');
      }
    }
    await until(() => h!.finals.length === ids.length, 'every final');
    expect(refused.size).toBeGreaterThan(0);
    for (const id of ids) {
      const final = h.finals.find((t) => t.transferId === id);
      expect(final?.status).toBe(sim.transfer(id).status);
      const ranks = statesOf(h, id).map(([status]) => status);
      expect(new Set(ranks).size).toBe(ranks.length);
    }
  });

  it('many tracked transfers never make more than maxReadsPerSecond reads in any second, counted at the simulator', async () => {
    const sim = createPartnerSimulator();
    h = await overHttp(
      { maxReadsPerSecond: 8, schedule: { submitted: 10 }, discover: { everyMs: 300, pageSize: 1 } },
      sim,
    );
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await h.submitted());
    for (const transferId of ids) await h.tracker.track({ userId: h.userId, transferId });
    const from = Date.now();
    await h.tracker.start();
    await sleep(2_500);
    await h.tracker.stop();
    const reads = sim.requests
      .filter((r) => r.method === 'GET' && r.path.startsWith('/bridge/transfers') && r.at >= from)
      .map((r) => r.at)
      .sort((a, b) => a - b);
    // Enough reads to reach the limit, and never more in any window of one second.
    expect(reads.length).toBeGreaterThan(8 * 2);
    for (let i = 0; i < reads.length; i++) {
      const inWindow = reads.filter((at) => at >= reads[i]! && at < reads[i]! + 1_000).length;
      expect(inWindow).toBeLessThanOrEqual(8);
    }
  });
});
