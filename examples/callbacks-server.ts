/**
 * A node:http server that receives bridge callbacks through the router: typed, de-duplicated,
 * never going backwards, with a shared secret header, compared in constant time, standing in for
 * the delivery authentication your deployment agreed on.
 *
 *   node --import tsx examples/callbacks-server.ts            # simulator drives transfers into it, then exits
 *   CALLBACK_PORT=8080 CALLBACK_TOKEN=… PARTNER_BASE_URL=… …  # stays up for a real deployment
 */
import assert from 'node:assert/strict';
import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCallbackRouter } from 'partner-s2s-sdk';
import { connect, say } from './setup.js';

const token = process.env.CALLBACK_TOKEN ?? 'demo-callback-token';
const expected = Buffer.from(token);
const router = createCallbackRouter({
  // The specification leaves delivery authentication open: use what your deployment agreed on.
  // No peer-address shortcut: behind a local reverse proxy every request comes from 127.0.0.1.
  authenticate: (request) => {
    const given = Buffer.from(request.headers.get('x-callback-token') ?? '');
    // timingSafeEqual needs equal lengths; comparing lengths first leaks only the length.
    return given.length === expected.length && timingSafeEqual(given, expected);
  },
});
// Every state a listener saw, to hold the story to what it printed.
const seen: string[] = [];
router.on('transfer', (t) => void seen.push(`${t.transferId} ${t.status}`));
router.on('bridge_transfer_submitted', (t) =>
  say(`submitted        ${t.transferId} ${t.source.amount} ${t.source.token}`),
);
router.on('bridge_transfer_source_confirmed', (t) =>
  say(`source confirmed ${t.transferId} on ${t.source.chain}`),
);
router.on('bridge_transfer_delivered', (t) =>
  say(
    `delivered        ${t.transferId} ${t.destination.amount} ${t.destination.token} on ${t.destination.chain}`,
  ),
);
router.on('bridge_transfer_refund_pending', (t) => say(`refund pending   ${t.transferId}`));
router.on('bridge_transfer_refunded', (t) => say(`refunded         ${t.transferId} (${t.refundTxHash})`));
router.on('bridge_transfer_failed', (t) => say(`failed           ${t.transferId}: ${t.failureReason}`));
router.on('ignored', ({ reason, transfer, previous }) =>
  say(`ignored          ${transfer.transferId} ${transfer.status} (${reason}; already ${previous})`),
);
router.on('unknown', (body) => say(`not a bridge callback: ${JSON.stringify(body).slice(0, 80)}`));
// A refused delivery says so: a wrong secret shows here instead of as callbacks that never come.
router.on('rejected', ({ request }) => console.error(`refused a delivery from ${request.remoteAddress}`));
router.on('error', (error) => console.error('a listener failed:', error));

const server = createServer(router.nodeHandler);
await new Promise<void>((resolve) =>
  server.listen(Number(process.env.CALLBACK_PORT ?? 0), '127.0.0.1', resolve),
);
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`;
say(`Receiving callbacks on ${url}`);

if (process.env.PARTNER_BASE_URL) {
  say('Waiting for deliveries (Ctrl+C to stop).');
} else {
  const { client, userId, signer, sim, close } = await connect({
    callbacks: url,
    callbackHeaders: { 'x-callback-token': token },
  });
  try {
    const routeId = (await client.bridge.routes())[0]!.routeId;
    const first = await client.bridge.execute({ userId, routeId, amount: '10', signer });
    const second = await client.bridge.execute({ userId, routeId, amount: '12.5', signer });
    sim!.advance(first.transferId, 'source_confirmed');
    sim!.advance(first.transferId, 'delivered');
    sim!.advance(second.transferId, 'source_confirmed');
    sim!.advance(second.transferId, 'refund_pending');
    sim!.advance(second.transferId, 'refunded');
    // A forged delivery without the secret: refused with 401, never reaching a listener.
    const forged = await fetch(url, { method: 'POST', body: JSON.stringify(sim!.callbacks[0]) });
    say(`forged delivery answered ${forged.status}`);
    assert.equal(forged.status, 401);
    // A late duplicate, as a retrying sender might deliver it: dropped by the router.
    await fetch(url, {
      method: 'POST',
      headers: { 'x-callback-token': token },
      body: JSON.stringify(sim!.callbacks[0]),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Each state once, in order, the forged and the duplicate delivery never reaching a listener.
    assert.deepEqual(seen, [
      `${first.transferId} submitted`,
      `${second.transferId} submitted`,
      `${first.transferId} source_confirmed`,
      `${first.transferId} delivered`,
      `${second.transferId} source_confirmed`,
      `${second.transferId} refund_pending`,
      `${second.transferId} refunded`,
    ]);
  } finally {
    await close();
    server.close();
  }
}
