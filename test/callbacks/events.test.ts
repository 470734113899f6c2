import { describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { ArgumentError, createCallbackRouter } from '../../src/index.js';

describe('the router keeps its emitter private', () => {
  it('offers no emit, so nothing reaches a listener around the dedupe', () => {
    const router = createCallbackRouter({ authenticate: 'none' }) as unknown as Record<string, unknown>;
    expect(router.emit).toBeUndefined();
  });

  it('on, once and off refuse unknown events and listeners that are no function', () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    for (const method of ['on', 'once', 'off'] as const) {
      expect(() => router[method]('bridge_transfer_deliverd' as never, (() => {}) as never)).toThrow(
        ArgumentError,
      );
      expect(() => router[method]('transfer', 'listener' as never)).toThrow(ArgumentError);
    }
  });

  it('once calls its listener for one delivery; off removes a listener', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    const always = (t: { transferId: string }) => void seen.push(`on:${t.transferId}`);
    router.once('transfer', (t) => void seen.push(`once:${t.transferId}`));
    router.on('transfer', always);
    await router.dispatch(transfer({ transferId: 'a', status: 'submitted' }));
    await router.dispatch(transfer({ transferId: 'b', status: 'submitted' }));
    router.off('transfer', always);
    await router.dispatch(transfer({ transferId: 'c', status: 'submitted' }));
    expect(seen).toEqual(['once:a', 'on:a', 'on:b']);
  });

  it('a once listener is called once when deliveries of two transfers run together', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    let calls = 0;
    router.once('transfer', () => void calls++);
    await Promise.all(
      ['a', 'b', 'c'].map((id) => router.dispatch(transfer({ transferId: id, status: 'delivered' }))),
    );
    expect(calls).toBe(1);
  });
});
