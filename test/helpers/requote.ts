import { privateKeyToAccount } from 'viem/accounts';
import { afterEach } from 'vitest';
import {
  type BridgeExecuteParams,
  type BridgeSigner,
  type ExecuteProgress,
  PartnerClient,
  type SignerCallContext,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { untilAborted, useTestClock } from './clock.js';

export const CONSTRUCT = '/bridge/construct/transaction/batch';
export const SUBMIT = '/bridge/transaction/batch/send';

/** What a signer saw on one call: the hash asked for and the context `execute` passed. */
export interface SignerCall {
  hash: string;
  context: SignerCallContext | undefined;
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

/** Closes `close` after the test, with the setup. */
export function onCleanup(close: () => Promise<void>): void {
  cleanup.push(close);
}

/**
 * The simulator over HTTP with short quotes (`quoteTtlSec`), a client to it, the demo user's real
 * key, and counts of what reached the simulator, on the test's own clock (helpers/clock.ts), so a
 * signer waiting out a quote waits no real time. Closed after each test.
 */
export async function requoteSetup(options: { quoteTtlSec?: number } = {}) {
  useTestClock();
  const sim: PartnerSimulator = createPartnerSimulator({ quoteTtlSec: options.quoteTtlSec ?? 4 });
  const server = await sim.listen();
  const client = new PartnerClient({ baseUrl: server.url, ...sim.demo.credentials });
  const wallet = privateKeyToAccount(sim.demo.wallet.privateKey);
  const count = (path: string) => sim.requests.filter((r) => r.method === 'POST' && r.path === path).length;
  const progress: ExecuteProgress[] = [];
  const onProgress = (p: ExecuteProgress) => void progress.push(p);
  const userId = sim.demo.userId;
  const routeId = sim.routes()[0]!.routeId;
  const close = async () => {
    await server.close();
    sim.close();
  };
  cleanup.push(close);
  return {
    sim,
    client,
    wallet,
    routeId,
    userId,
    /** `execute` of 25 on the first route with the short margins, progress recorded; `extra` wins. */
    execute: (
      signer: BridgeSigner,
      extra: Pick<BridgeExecuteParams, 'requote' | 'signing' | 'verify' | 'tracker'> = {},
      through = client,
    ) => through.bridge.execute({ userId, routeId, amount: '25', signer, ...SHORT, onProgress, ...extra }),
    constructs: () => count(CONSTRUCT),
    submits: () => count(SUBMIT),
    progress,
    onProgress,
    built: () => progress.flatMap((p) => (p.step === 'constructed' ? [p.construct] : [])),
    close,
  };
}

/**
 * The demo wallet behind a signer whose n-th call (from 0) runs `behaviour[n]`: 'fast' signs at
 * once, 'late' waits for the deadline signal and then signs anyway (a signature that comes too
 * late), a function runs before signing.
 */
export function scriptedSigner(
  wallet: ReturnType<typeof privateKeyToAccount>,
  behaviour: ('fast' | 'late' | ((call: SignerCall) => unknown))[],
) {
  const calls: SignerCall[] = [];
  const signer: BridgeSigner = {
    address: wallet.address,
    signMessage: async (args, context) => {
      const call = { hash: args.message.raw, context };
      const step = behaviour[calls.length] ?? 'fast';
      calls.push(call);
      if (typeof step === 'function') await step(call);
      if (step === 'late') await untilAborted(context?.signal);
      return wallet.signMessage(args);
    },
    signAuthorization: (args) => wallet.signAuthorization(args),
  };
  return { signer, calls };
}

/** Short margins for quotes of a few seconds: the verifier's, and the submit margin. */
export const SHORT = {
  verify: { expiryMarginMs: 500 },
  signing: { submitMarginMs: 1_000 },
} as const;
