/**
 * Following every transfer to its end with the durable tracker: the memory store and the embedded
 * simulator here; a Postgres or Redis store in production (see docs/tracking.md, "Tracking
 * transfers durably").
 *
 *   node --import tsx examples/tracker.ts
 */
import assert from 'node:assert/strict';
import { createCallbackRouter, createTransferTracker, MemoryTrackerStore } from 'partner-s2s-sdk';
import { connect, say } from './setup.js';

// Callbacks go to a router in this process; the tracker counts each as an observation.
const router = createCallbackRouter({ authenticate: 'none' }); // tests only: check a secret in production
const { client, userId, signer, sim, close } = await connect({
  callbacks: (body) => router.dispatch(body).then(() => undefined),
  autoAdvance: { sourceConfirmedMs: 200, deliveredMs: 300 },
});
const tracker = createTransferTracker({
  client,
  store: new MemoryTrackerStore(),
  router,
  schedule: { pending: 300 }, // short, for the example
  discover: { everyMs: 500 },
  tickMs: 100,
});
try {
  const finals = new Map<string, string>();
  tracker.on('transition', (transfer, previous) =>
    say(`  ${transfer.transferId}: ${previous ?? '(first seen)'} → ${transfer.status}`),
  );
  tracker.on('final', (transfer) => void finals.set(transfer.transferId, transfer.status));
  tracker.on('discovered', (transfer) => say(`  adopted ${transfer.transferId}, which nobody tracked`));
  tracker.on('error', (error) => say(`  tracker error: ${String(error)}`));
  await tracker.start();

  const routeId = (await client.bridge.routes())[0]!.routeId;
  say('A bridge, tracked before it is signed:');
  const { transferId } = await client.bridge.execute({ userId, routeId, amount: '5', signer, tracker });
  const expected = [transferId];
  if (sim) {
    say('An intent built and never signed (no callback will say it expired), and never tracked:');
    const built = await client.bridge.construct({ userId, routeId, amount: '3' });
    expected.push(built.transferId);
    sim.advanceClock(130_000); // past its quote's expiry: the next read finds it expired
  }
  const deadline = Date.now() + 30_000;
  while (expected.some((id) => !finals.has(id)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const id of expected) say(`${id}: ${finals.get(id) ?? 'not final yet'}`);
  assert.deepEqual(
    expected.filter((id) => !finals.has(id)),
    [],
    'every transfer reached a final state',
  );
  if (sim) assert.equal(finals.get(expected[1]!), 'expired');
} finally {
  await tracker.stop();
  await close();
}
