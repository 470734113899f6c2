import type { IncomingMessage, ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ArgumentError,
  type CallbackRouter,
  createCallbackRouter,
  PartnerClient,
  standardWebhooks,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { closeCallbackServers, serveCallbacks } from '../helpers/callback-server.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const NEXT_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

let sim: PartnerSimulator | undefined;
afterEach(async () => {
  sim?.close();
  sim = undefined;
  await closeCallbackServers();
});

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** Serves `router` behind a recorder of what the simulator sent: headers and the exact body. */
async function serveRecorded(router: CallbackRouter): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const url = await serveCallbacks((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ headers: req.headers as Record<string, string>, body: body.toString('utf8') });
      router.nodeHandler(Object.assign(req, { body }), res);
    });
  });
  return { url, received };
}

async function submitted(simulator: PartnerSimulator): Promise<string> {
  const client = new PartnerClient({
    baseUrl: simulator.baseUrl,
    ...simulator.demo.credentials,
    fetch: simulator.fetch,
  });
  const { transferId } = await client.bridge.execute({
    userId: simulator.demo.userId,
    routeId: 'base-usdc-to-bsc-usdc',
    amount: '3',
    signer: privateKeyToAccount(simulator.demo.wallet.privateKey),
  });
  return transferId;
}

const deliveriesOf = (simulator: PartnerSimulator, transferId: string) =>
  simulator.callbackDeliveries.filter((delivery) => delivery.transferId === transferId);

describe('simulator callbackSigning: simulator → router with standardWebhooks → listener', () => {
  it('signs every delivery so that the router accepts it and the standardwebhooks library verifies it', async () => {
    const router = createCallbackRouter({ authenticate: standardWebhooks({ secret: SECRET }) });
    const seen: string[] = [];
    router.on('transfer', (transfer, kind) => void seen.push(`${transfer.transferId}:${kind}`));
    const { url, received } = await serveRecorded(router);
    sim = createPartnerSimulator({ callbacks: url, callbackSigning: { secret: SECRET } });
    const transferId = await submitted(sim);
    // Each state once the one before reached the router: a delivery overtaken by a newer state is
    // stale and never dispatched, and the order of deliveries in flight is the network's.
    const seenAll = (count: number) =>
      vi.waitFor(() => expect(seen).toHaveLength(count), { timeout: 10_000 });
    await seenAll(1);
    sim.advance(transferId, 'source_confirmed');
    await seenAll(2);
    sim.advance(transferId, 'delivered');
    await vi.waitFor(
      () =>
        expect(deliveriesOf(sim!, transferId).map((delivery) => delivery.state)).toEqual([
          'delivered',
          'delivered',
          'delivered',
        ]),
      { timeout: 10_000 },
    );
    expect(seen).toEqual([
      `${transferId}:bridge_transfer_submitted`,
      `${transferId}:bridge_transfer_source_confirmed`,
      `${transferId}:bridge_transfer_delivered`,
    ]);
    const library = new Webhook(SECRET);
    for (const { headers, body } of received) expect(library.verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Set(received.map(({ headers }) => headers['webhook-id'])).size).toBe(3);
  });

  it('is refused (401, no listener) by a router with another secret', async () => {
    const router = createCallbackRouter({ authenticate: standardWebhooks({ secret: NEXT_SECRET }) });
    const seen: unknown[] = [];
    router.on('transfer', (transfer) => void seen.push(transfer));
    const { url } = await serveRecorded(router);
    sim = createPartnerSimulator({ callbacks: url, callbackSigning: { secret: SECRET } });
    const transferId = await submitted(sim);
    await vi.waitFor(() => expect(deliveriesOf(sim!, transferId)[0]).toMatchObject({ lastStatus: 401 }), {
      timeout: 10_000,
    });
    expect(seen).toEqual([]);
  });

  it('signs with each of several secrets, as a service rotating its secret', async () => {
    const router = createCallbackRouter({ authenticate: standardWebhooks({ secret: NEXT_SECRET }) });
    const seen: unknown[] = [];
    router.on('transfer', (transfer) => void seen.push(transfer));
    const { url, received } = await serveRecorded(router);
    sim = createPartnerSimulator({ callbacks: url, callbackSigning: { secrets: [SECRET, NEXT_SECRET] } });
    const transferId = await submitted(sim);
    await vi.waitFor(() => expect(deliveriesOf(sim!, transferId)[0]).toMatchObject({ state: 'delivered' }), {
      timeout: 10_000,
    });
    expect(seen).toHaveLength(1);
    expect(received[0]!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
  });

  it('retries a refused delivery under the same webhook-id, signed anew, and the router takes it', async () => {
    const router = createCallbackRouter({ authenticate: standardWebhooks({ secret: SECRET }) });
    let failNext = true;
    const credited: string[] = [];
    router.on('bridge_transfer_submitted', (transfer) => {
      if (failNext) {
        failNext = false;
        throw new Error('ledger down once');
      }
      credited.push(transfer.transferId);
    });
    const { url, received } = await serveRecorded(router);
    sim = createPartnerSimulator({ callbacks: url, callbackSigning: { secret: SECRET } });
    const transferId = await submitted(sim);
    await vi.waitFor(
      () => expect(deliveriesOf(sim!, transferId)[0]).toMatchObject({ state: 'delivered', attempts: 2 }),
      { timeout: 10_000 },
    );
    expect(credited).toEqual([transferId]);
    const [first, second] = received;
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
  });

  it('a secret not in the whsec_ form is an ArgumentError that does not repeat it', () => {
    createPartnerSimulator({
      callbacks: 'http://127.0.0.1:1/cb',
      callbackSigning: { secret: SECRET },
    }).close();
    const bad = Buffer.alloc(32, 7).toString('base64');
    for (const callbackSigning of [{ secret: bad }, { secrets: [] }, { secret: SECRET, secrets: [SECRET] }]) {
      let thrown: unknown;
      try {
        createPartnerSimulator({ callbacks: 'http://127.0.0.1:1/cb', callbackSigning });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ArgumentError);
      expect((thrown as Error).message).toContain('callbackSigning');
      expect((thrown as Error).message).not.toContain(bad);
    }
  });
});
