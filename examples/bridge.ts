/**
 * The whole bridge flow, step by step: token and scopes, routes, quote, construct, verification,
 * signatures, submit, callbacks, final state.
 *
 *   npm start                                   # on the embedded simulator
 *   PARTNER_BASE_URL=https://… PARTNER_CLIENT_ID=… PARTNER_CLIENT_SECRET=… \
 *   PARTNER_USER_ID=… USER_PRIVATE_KEY=0x… BRIDGE_ROUTE_ID=… BRIDGE_AMOUNT=25.5 npm start
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createCallbackRouter,
  fromRawAmount,
  isPartnerError,
  signBridgeBatch,
  verifyBridgeBatch,
} from 'partner-s2s-sdk';
import { connect, say } from './setup.js';

const amount = process.env.BRIDGE_AMOUNT ?? '25.5';

// Callbacks arrive on our own endpoint; the router de-duplicates them and keeps their order.
// Authentication is off only because this endpoint lives for one local run: see
// examples/callbacks-server.ts for a real check.
const router = createCallbackRouter({ authenticate: 'none' });
router.on('transfer', (transfer, kind) => say(`  ← callback ${kind} (${transfer.transferId})`));
const callbackServer = createServer(router.nodeHandler);
await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
const callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callbacks`;

const { client, userId, signer, sim, close } = await connect({
  callbacks: callbackUrl,
  autoAdvance: { sourceConfirmedMs: 300, deliveredMs: 700 },
});

try {
  say(sim ? `Running on the embedded simulator (${client.baseUrl})` : `Running against ${client.baseUrl}`);
  client.on('retry', (e) => say(`  … retrying ${e.method} ${e.path} in ${e.delayMs} ms (${e.reason})`));

  say('\n1. Token');
  say(`  granted scopes: ${(await client.getScopes()).join(', ')}`);

  say('\n2. Routes');
  const routes = await client.bridge.routes();
  for (const r of routes) {
    const limits = r.limits
      ? `${r.limits.minAmount}–${r.limits.maxAmount} ${r.from.symbol}`
      : 'bridge unreachable';
    say(
      `  ${r.routeId}: ${r.from.symbol} ${r.from.chain} (${r.from.decimals} dp) → ${r.to.symbol} ${r.to.chain} (${r.to.decimals} dp), ${limits}`,
    );
  }
  const route = routes.find((r) => r.routeId === (process.env.BRIDGE_ROUTE_ID ?? routes[0]?.routeId));
  if (!route) throw new Error('no route to bridge on');

  say('\n3. Quote');
  const quote = await client.bridge.quote({ userId, routeId: route.routeId, amount });
  say(
    `  ${quote.amountIn} ${route.from.symbol} in → ${quote.amountOut} ${route.to.symbol} out on ${route.to.chain}`,
  );
  say(
    `  provider fee ${quote.providerFee}, gas fee ${quote.gasFee} ${quote.gasFeeToken} on top, about ${quote.etaSec} s`,
  );

  say('\n4. Construct');
  const built = await client.bridge.construct({ userId, routeId: route.routeId, amount });
  say(
    `  intent ${built.intentId}, transfer ${built.transferId}, ${built.bundle.calls.length} calls, userOpHash ${built.bundle.userOpHash}`,
  );

  say('\n5. Verify before signing');
  const summary = verifyBridgeBatch({ route, construct: built, wallet: signer.address, amount });
  say(
    `  wallet ${summary.wallet} spends ${summary.totalDebit.amount} ${summary.source.symbol} on ${summary.source.chain}`,
  );
  say(
    `  and receives ${summary.destination.amount} ${summary.destination.symbol} on ${summary.destination.chain}`,
  );
  say(
    `  approve exactly ${fromRawAmount(summary.source.amountRaw, summary.source.decimals)} to ${summary.bridge}, ${summary.depositFunction} with no message`,
  );
  say(
    `  gas fee ${summary.gasFee.amount} to ${summary.gasFee.treasury}; EntryPoint v${summary.entryPointVersion}, delegate ${summary.delegate}`,
  );
  say(
    `  quote valid until ${summary.quoteExpiresAt.toISOString()}, fill deadline ${summary.fillDeadline.toISOString()}`,
  );

  say('\n6. Sign');
  // Only what was verified can be signed; a bundle changed since would be refused.
  const signed = await signBridgeBatch({ verified: summary, signer });
  say(`  user operation: ${signed.signature.slice(0, 18)}… (${(signed.signature.length - 2) / 2} bytes)`);
  say(
    signed.authorization
      ? `  EIP-7702 authorization: yParity ${signed.authorization.yParity}`
      : '  wallet already delegated: no authorization',
  );

  say('\n7. Submit');
  const sent = await client.bridge.send({ userId, intentId: built.intentId, ...signed });
  say(`  transfer ${sent.transferId} submitted`);

  say('\n8. Follow it to a final state');
  const final = await client.bridge.transfers.wait(
    { userId, transferId: sent.transferId },
    { router, pollIntervalMs: 2_000 },
  );
  say(
    `  final state: ${final.status}${final.dstTxHash ? ` (destination tx ${final.dstTxHash.slice(0, 12)}…)` : ''}`,
  );
  if (final.status !== 'delivered') process.exitCode = 1;
} catch (error) {
  if (isPartnerError(error)) console.error(`\n${error.name}: ${error.message}`);
  else console.error(error);
  process.exitCode = 1;
} finally {
  await close();
  await new Promise((resolve) => callbackServer.close(resolve));
}
