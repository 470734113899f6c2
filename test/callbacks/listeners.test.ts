import { describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { createCallbackRouter, DEFAULTS } from '../../src/index.js';

const delivered = (transferId: string) => transfer({ transferId, status: 'delivered' });

describe('the router calls the listeners it holds as they were when a delivery began', () => {
  it('off removes a once listener that has not fired yet', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    const first = (t: { transferId: string }) => void seen.push(t.transferId);
    router.once('transfer', first);
    router.off('transfer', first);
    await router.dispatch(delivered('a'));
    expect(seen).toEqual([]);
  });

  it('a listener added by a listener is called from the next delivery on, not this one', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    router.once('transfer', () => {
      router.on('transfer', (t) => void seen.push(`late:${t.transferId}`));
    });
    await router.dispatch(delivered('a'));
    await router.dispatch(delivered('b'));
    expect(seen).toEqual(['late:b']);
  });

  it('a once listener removed by an earlier listener of the same delivery is not called', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    const later = (t: { transferId: string }) => void seen.push(`later:${t.transferId}`);
    router.on('transfer', async () => {
      await Promise.resolve();
      router.off('transfer', later);
    });
    router.once('transfer', later);
    await router.dispatch(delivered('a'));
    await router.dispatch(delivered('b'));
    expect(seen).toEqual([]);
  });

  it('a listener added twice is called twice per delivery, and one off removes both', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    let calls = 0;
    const count = () => void calls++;
    router.on('bridge_transfer_delivered', count).on('bridge_transfer_delivered', count);
    await router.dispatch(delivered('a'));
    expect(calls).toBe(2);
    router.off('bridge_transfer_delivered', count);
    await router.dispatch(delivered('b'));
    expect(calls).toBe(2);
  });

  it('a listener that awaits holds the delivery until it settles, once listeners included', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const steps: string[] = [];
    router.once('transfer', async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      steps.push('listener settled');
    });
    const outcome = await router.dispatch(delivered('a'));
    steps.push(`dispatch ${outcome.outcome}`);
    expect(steps).toEqual(['listener settled', 'dispatch dispatched']);
  });
});

describe('the router takes its bounds from DEFAULTS.callbacks', () => {
  const post = (router: ReturnType<typeof createCallbackRouter>, body: string) =>
    router.fetchHandler(new Request('http://localhost/callbacks', { method: 'POST', body }));

  it('accepts a body of exactly DEFAULTS.callbacks.maxBodyBytes and refuses one byte more (413)', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const json = JSON.stringify(delivered('a'));
    const padded = json + ' '.repeat(DEFAULTS.callbacks.maxBodyBytes - Buffer.byteLength(json));
    expect((await post(router, padded)).status).toBe(200);
    expect((await post(router, `${padded} `)).status).toBe(413);
  });
});
