import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCallbackRouter, PartnerClient } from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';

/** What docs/simulator.md warns of, shown on the simulator, and what the router makes of it. */
describe('retried callbacks', () => {
  let sim: PartnerSimulator | undefined;
  afterEach(() => sim?.close());

  it('may arrive out of order; the router dispatches only the newest state', async () => {
    const arrived: string[] = [];
    const router = createCallbackRouter({ authenticate: 'none' });
    const dispatched: string[] = [];
    router.on('transfer', (transfer) => void dispatched.push(transfer.status));
    let refused = false;
    sim = createPartnerSimulator({
      callbacks: async (body) => {
        // The receiver refuses the first try of `submitted` (a deploy, a hiccup): the service retries it.
        if (body.status === 'submitted' && !refused) {
          refused = true;
          throw new Error('receiver unavailable');
        }
        arrived.push(body.status);
        await router.dispatch(body);
      },
    });
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    const built = await client.bridge.construct({
      userId: sim.demo.userId,
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '5',
    });
    sim.advance(built.transferId, 'submitted');
    sim.advance(built.transferId, 'source_confirmed');
    sim.advance(built.transferId, 'delivered');
    await vi.waitFor(() => expect(arrived).toHaveLength(3), { timeout: 15_000, interval: 50 });
    expect(arrived).toEqual(['source_confirmed', 'delivered', 'submitted']);
    expect(dispatched).toEqual(['source_confirmed', 'delivered']);
  });
});
