import { afterEach, describe, expect, it } from 'vitest';
import { PartnerClient, ServiceUnavailableError } from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

async function start() {
  const sim: PartnerSimulator = createPartnerSimulator();
  const server = await sim.listen();
  cleanup.push(async () => {
    await server.close();
    sim.close();
  });
  const admin = (operation: string, body: unknown) =>
    fetch(`${server.url}${sim.adminPath}/${operation}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const client = new PartnerClient({ baseUrl: server.url, ...sim.demo.credentials, maxRetries: 0 });
  const routeId = sim.routes()[0]!.routeId;
  return { sim, admin, client, routeId, userId: sim.demo.userId };
}

describe('the simulator: signWindowSec and the nonce of each construct', () => {
  it('answers construct 503 while quotes live less than signWindowSec (set over the admin API)', async () => {
    const { admin, client, routeId, userId } = await start();
    expect((await admin('configureRoute', { routeId, change: { signWindowSec: 300 } })).status).toBe(200);
    const error = await client.bridge.construct({ userId, routeId, amount: '5' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as Error).message).toMatch(/quote expires too soon to sign/);
    // 120 s quotes are long enough for a 60 s window.
    await admin('configureRoute', { routeId, change: { signWindowSec: 60 } });
    await expect(client.bridge.construct({ userId, routeId, amount: '5' })).resolves.toMatchObject({});
    const refused = await admin('configureRoute', { routeId, change: { signWindowSec: -1 } });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it("hands out key 1 (the owner's validation) and the count of executed operations as the nonce, the same until one executes", async () => {
    const { sim, client, routeId, userId } = await start();
    const { privateKeyToAccount } = await import('viem/accounts');
    const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
    const nonce = async () =>
      BigInt((await client.bridge.construct({ userId, routeId, amount: '5' })).bundle.userOp.nonce as string);
    const key = 1n << 64n;
    expect(await nonce()).toBe(key);
    expect(await nonce()).toBe(key);
    await client.bridge.execute({ userId, routeId, amount: '5', signer });
    expect(await nonce()).toBe(key | 1n);
  });
});
