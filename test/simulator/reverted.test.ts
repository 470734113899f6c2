import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type BridgeTransfer,
  PartnerClient,
  signBridgeBatch,
  toRawAmount,
  verifyBridgeBatch,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';

/*
 * An operation that validates but whose calls revert (the wallet can no longer pay what the batch
 * moves) is still included by the EntryPoint: its nonce is spent, a first delegation is applied,
 * nothing moves, and the transfer ends `failed`. The chain tests (test/chain/) show the same on the
 * real contracts.
 */

const ROUTE = 'base-usdc-to-bsc-usdc';
const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const usdc = (amount: string) => toRawAmount(amount, 6);

let sim: PartnerSimulator;
afterEach(() => sim?.close());

function start() {
  const callbacks: BridgeTransfer[] = [];
  sim = createPartnerSimulator({ callbacks: (body) => void callbacks.push(body) });
  const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
  const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
  const userId = sim.demo.userId;
  /** Construct, verify and sign `amount` on the route, as a partner does; not yet sent. */
  const signed = async (amount: string) => {
    const route = (await client.bridge.routes()).find((r) => r.routeId === ROUTE)!;
    const construct = await client.bridge.construct({ userId, routeId: ROUTE, amount });
    const verified = verifyBridgeBatch({ route, construct, wallet: signer.address, amount });
    return { construct, signatures: await signBridgeBatch({ verified, signer }) };
  };
  const send = async ({ construct, signatures }: Awaited<ReturnType<typeof signed>>) =>
    client.bridge.send({ userId, intentId: construct.intentId, ...signatures });
  return { client, userId, signed, send, callbacks };
}

describe('the simulator: an operation whose calls revert is included and fails', () => {
  it('a wallet that can no longer pay: the submit is taken, the transfer fails naming why, its nonce is spent and its delegation applied', async () => {
    const { client, userId, signed, send, callbacks } = start();
    const first = await signed('25');
    expect(first.construct.bundle.authorization).not.toBeNull();
    // Between construct and submit the wallet's USDC went elsewhere.
    sim.fund(userId, 8453, USDC_BASE, usdc('10'));
    const { transferId } = await send(first);
    expect(transferId).toBe(first.construct.transferId);

    const transfer = await client.bridge.transfers.get({ userId, transferId });
    expect(transfer.status).toBe('failed');
    expect(transfer.failureReason).toBe(
      'the calls reverted: the wallet cannot pay 25.12 USDC (amount and gas fee), it holds 10 USDC; the operation was included and its nonce spent',
    );
    expect(callbacks.map((body) => body.status)).toEqual(['submitted', 'failed']);
    // Nothing moved.
    expect(sim.balance(userId, 8453, USDC_BASE)).toBe(usdc('10'));

    // The nonce is spent and the wallet delegated: the next batch has the next sequence and no
    // authorization, and it goes through.
    sim.fund(userId, 8453, USDC_BASE, usdc('100'));
    const next = await signed('25');
    expect(BigInt(next.construct.bundle.userOp.nonce as string)).toBe(
      BigInt(first.construct.bundle.userOp.nonce as string) + 1n,
    );
    expect(next.construct.bundle.authorization).toBeNull();
    await send(next);
    expect(sim.transfer(next.construct.transferId).status).toBe('submitted');
  });

  it('counts what operations submitted before took, as the chain does: at construct and when the calls run', async () => {
    const { client, userId, signed, send } = start();
    sim.fund(userId, 8453, USDC_BASE, usdc('30'));
    const first = await signed('25');
    await send(first);
    // The balance here still reads 30 until the first is confirmed; on chain it took 25.12 when it
    // was included, so the service sees 4.88 and cannot build 5.
    expect(sim.balance(userId, 8453, USDC_BASE)).toBe(usdc('30'));
    const refused = await client.bridge
      .construct({ userId, routeId: ROUTE, amount: '5' })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'INSUFFICIENT_BALANCE', available: usdc('4.88') });
    const second = await signed('4');
    // Another 1 USDC leaves the wallet before the second is submitted.
    sim.fund(userId, 8453, USDC_BASE, usdc('29'));
    await send(second);
    expect(sim.transfer(first.construct.transferId).status).toBe('submitted');
    const failed = sim.transfer(second.construct.transferId);
    expect(failed.status).toBe('failed');
    expect(failed.failureReason).toBe(
      'the calls reverted: the wallet cannot pay 4.12 USDC (amount and gas fee), it holds 3.88 USDC after the operations submitted before it; the operation was included and its nonce spent',
    );
  });
});
