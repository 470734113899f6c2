/**
 * A signer slower than the quote: an approval that misses the quote's deadline is stopped there,
 * its signature is never sent, and `execute` builds the batch again within the `requote` policy.
 *
 *   npx tsx examples/slow-signer.ts             # on the embedded simulator (quotes of 6 s)
 */
import assert from 'node:assert/strict';
import {
  type BridgeSigner,
  isPartnerError,
  QuoteChangedError,
  RequoteExhaustedError,
  type SignerCallContext,
} from 'partner-s2s-sdk';
import { connect, say } from './setup.js';

// Short quotes on the simulator, so that the story takes seconds rather than minutes.
const { client, userId, signer: account, sim, close } = await connect({ quoteTtlSec: 6 });

/** Waits until `ms` pass or the deadline signal fires, whichever is first. */
function approvalDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      say('  ✋ the deadline passed: the approval is dropped');
      resolve();
    });
  });
}

// An "approval" in front of a key: the first takes longer than the quote lives, the next is quick.
let approvals = 0;
const approved: BridgeSigner = {
  address: account.address,
  signMessage: async (args, context?: SignerCallContext) => {
    approvals++;
    // What an approver is shown first: what is bridged, and what arrives at least.
    const summary = context?.summary;
    assert.ok(summary, 'execute gives every signer the summary of what it signs');
    say(`  ? approval ${approvals}: ${summary.lines[0]}`);
    await approvalDelay(approvals === 1 ? 60_000 : 200, context?.signal);
    return account.signMessage(args);
  },
  signAuthorization: (args) => account.signAuthorization(args),
};

try {
  const route = (await client.bridge.routes())[0];
  if (!route) throw new Error('no route to bridge on');
  const result = await client.bridge.execute({
    userId,
    routeId: route.routeId,
    amount: '25',
    signer: approved,
    verify: { expiryMarginMs: 1_000 },
    signing: { submitMarginMs: 2_000 },
    requote: { maxAttempts: 2, maxOutputDropBps: 50, maxFeeIncreaseBps: 20 },
    onProgress: (p) => {
      if (p.step === 'constructed')
        say(`  built ${p.construct.intentId}, quote until ${p.construct.quote.expiresAt}`);
      if (p.step === 'requoted')
        say(
          `  ↻ rebuilt (${p.reason}); amountOut moved ${p.change.amountOut.deltaBps} bps from the baseline`,
        );
      if (p.step === 'submitted') say(`  ✓ submitted ${p.transferId}`);
    },
  });
  const submits = sim?.requests.filter((r) => r.path === '/bridge/transaction/batch/send').length;
  say(`\nOne transfer submitted (${result.transferId})${sim ? `, ${submits} submit sent` : ''}.`);
  // The late approval was never sent: one submit, after the second approval.
  assert.equal(approvals, 2);
  if (sim) assert.equal(submits, 1);
} catch (error) {
  if (error instanceof QuoteChangedError) say(`The price moved too far: ${error.message}`);
  else if (error instanceof RequoteExhaustedError) say(`Not signed in time: ${error.reasons.join(', ')}`);
  else if (isPartnerError(error)) say(`${error.name}: ${error.message}`);
  else throw error;
  process.exitCode = 1;
} finally {
  await close();
}
