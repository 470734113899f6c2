/**
 * Paging through a user's bridge history: one page at a time, or every transfer with for await.
 *
 *   node --import tsx examples/transfers.ts
 */
import assert from 'node:assert/strict';
import { connect, say } from './setup.js';

const { client, userId, sim, close } = await connect();
try {
  if (sim) {
    // Some history to page through.
    const routeId = (await client.bridge.routes())[0]!.routeId;
    for (let i = 1; i <= 7; i++) await client.bridge.construct({ userId, routeId, amount: String(i) });
  }

  const first = await client.bridge.transfers.list({ userId, limit: 3 });
  say(
    `First page: ${first.data.map((t) => t.transferId).join(', ')}${first.hasNextPage() ? ' (more after)' : ''}`,
  );
  assert.ok(first.data.length <= 3, 'a page holds at most its limit');

  say('Every transfer, newest first:');
  let seen = 0;
  let newer = Number.POSITIVE_INFINITY;
  for await (const transfer of client.bridge.transfers.list({ userId, limit: 3 })) {
    seen++;
    assert.equal(transfer.userId, userId);
    assert.ok(Date.parse(transfer.createdAt) <= newer, 'newest first');
    newer = Date.parse(transfer.createdAt);
    say(
      `  ${transfer.createdAt}  ${transfer.transferId}  ${transfer.source.amount} ${transfer.source.token} → ${transfer.destination.chain}  ${transfer.status}`,
    );
  }

  if (sim) assert.ok(seen >= 7, 'every page was walked');
  const delivered = await client.bridge.transfers.list({ userId, status: 'delivered' });
  say(`Delivered: ${delivered.data.length}`);
  assert.ok(delivered.data.every((t) => t.status === 'delivered'));
} finally {
  await close();
}
