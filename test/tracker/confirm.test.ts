import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createTransferTracker,
  MemoryTrackerStore,
  PartnerClient,
  type TransferOverdue,
  type TransferTracker,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { mockChain } from '../helpers/mock-chain.js';
import { FAST, ROUTE, until } from './helpers.js';

/*
 * An `overdue` of a transfer held in `submitted` says what the chain says of its operation, when
 * the tracker knows the operation (execute records it; `track` takes the bundle) and the client has
 * an RPC for its chain.
 */

let sim: PartnerSimulator | undefined;
let tracker: TransferTracker | undefined;
afterEach(async () => {
  await tracker?.stop();
  sim?.close();
});

function world(chains?: Record<number, unknown>) {
  sim = createPartnerSimulator();
  const client = new PartnerClient({
    baseUrl: sim.baseUrl,
    ...sim.demo.credentials,
    fetch: sim.fetch,
    ...(chains ? { chains: chains as never } : {}),
  });
  const store = new MemoryTrackerStore();
  tracker = createTransferTracker({ ...FAST, deadlines: { sourceConfirmation: 100 }, client, store });
  const overdue: TransferOverdue[] = [];
  const errors: unknown[] = [];
  tracker.on('overdue', (o) => void overdue.push(o));
  tracker.on('error', (e) => void errors.push(e));
  const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
  return { sim, client, store, tracker, overdue, errors, signer, userId: sim.demo.userId };
}

describe('tracker: overdue in submitted, with the chain', () => {
  it("carries onChain for a transfer execute recorded, read through the client's chains", async () => {
    const chain = mockChain({
      entryPoint: '0x0000000071727de22e5e9d8baf0edac6f37da032',
      currentNonce: 0n,
      latest: 9n,
    });
    const w = world({ 8453: chain.provider });
    const result = await w.client.bridge.execute({
      userId: w.userId,
      routeId: ROUTE,
      amount: '1',
      signer: w.signer,
      tracker: w.tracker,
    });
    const record = await w.store.get(result.transferId);
    expect(record?.operation).toMatchObject({
      chainId: 8453,
      userOpHash: result.userOpHash,
      sender: w.signer.address,
    });
    await w.tracker.start();
    await until(() => w.overdue.length === 1, 'overdue');
    expect(w.overdue[0]).toMatchObject({
      phase: 'sourceConfirmation',
      transfer: { status: 'submitted' },
      onChain: { status: 'pending', currentNonce: 0n },
    });
    // Asked about the operation's own sender and nonce key.
    const call = chain.calls.find((c) => c.method === 'eth_call')!;
    expect((call.params[0] as { data: string }).data).toContain(w.signer.address.slice(2).toLowerCase());
  });

  it('track takes the bundle; without chains, or without its chain, overdue goes without onChain and without errors', async () => {
    for (const chains of [
      undefined,
      { 1: mockChain({ entryPoint: '0x00', currentNonce: 0n, latest: 0n }).provider },
    ]) {
      const w = world(chains);
      const built = await w.client.bridge.construct({ userId: w.userId, routeId: ROUTE, amount: '1' });
      await w.tracker.track({ userId: w.userId, transferId: built.transferId, bundle: built.bundle });
      expect((await w.store.get(built.transferId))?.operation?.userOpHash).toBe(built.bundle.userOpHash);
      w.sim.advance(built.transferId, 'submitted');
      await w.tracker.start();
      await until(() => w.overdue.length === 1, 'overdue');
      expect(w.overdue[0]?.onChain).toBeUndefined();
      expect(w.errors).toEqual([]);
      await w.tracker.stop();
      w.sim.close();
    }
  });
});
