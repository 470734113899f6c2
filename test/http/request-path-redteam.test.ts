import { fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { route } from '../../fixtures/wire.js';
import { TimeoutError } from '../../src/index.js';
import { faultServer, jsonReply, token } from '../helpers/fault-server.js';
import { json, makeClient, mockService } from '../helpers/mock-fetch.js';

afterEach(() => {
  vi.useRealTimers();
});

const routes = { 'GET /bridge/routes': () => json({ data: [route()] }) };
/** An answer that never comes, whatever the signal says: only the SDK's own deadline ends it. */
const never = () => new Promise<Response>(() => {});

describe('timeouts under a test clock', () => {
  it.each([
    ['every timer faked', undefined],
    ['setTimeout alone faked', { toFake: ['setTimeout', 'clearTimeout'] as const }],
  ])(
    'a call made under fake timers after real-timer calls times out when its clock is moved (%s)',
    async (_, fake) => {
      // Calls made with the real clock first: a short one and one with the default time.
      const warm = mockService({ routes });
      await makeClient(warm, { timeoutMs: 500 }).bridge.routes();
      await makeClient(warm).bridge.routes();

      vi.useFakeTimers(fake ? { toFake: [...fake.toFake] } : undefined);
      const service = mockService({ routes: { 'GET /bridge/routes': never } });
      const pending = makeClient(service, { timeoutMs: 60_000, maxRetries: 0 })
        .bridge.routes()
        .catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(61_000);
      vi.useRealTimers();
      const outcome = await Promise.race([
        pending,
        new Promise((resolve) => setTimeout(resolve, 2_000, 'still pending')),
      ]);
      expect(outcome).toBeInstanceOf(TimeoutError);
    },
  );

  it('a call under fake timers does not time out before its clock is moved, whatever real timers were armed', async () => {
    await makeClient(mockService({ routes }), { timeoutMs: 200 }).bridge.routes();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const pending = makeClient(mockService({ routes: { 'GET /bridge/routes': never } }), {
      timeoutMs: 60_000,
      maxRetries: 0,
    })
      .bridge.routes()
      .catch((error: unknown) => error);
    // Past the real timer the first call armed: the fake clock has not moved, so nothing is due.
    await new Promise((resolve) => setImmediate(resolve));
    vi.useRealTimers();
    const early = await Promise.race([
      pending,
      new Promise((resolve) => setTimeout(resolve, 600, 'pending')),
    ]);
    expect(early).toBe('pending');
  });
});

describe('the global fetch', () => {
  it("one put in the runtime's place before the SDK was loaded (undici's own) still gets requests it can read", async () => {
    const server = await faultServer({
      'POST /auth/token': token,
      'GET /bridge/routes': (_req, res) => jsonReply(res, 200, { data: [route()] }),
    });
    vi.stubGlobal('fetch', undiciFetch);
    try {
      vi.resetModules();
      const sdk: typeof import('../../src/index.js') = await import('../../src/index.js');
      const client = new sdk.PartnerClient({
        baseUrl: server.url,
        clientId: 'c',
        clientSecret: 's',
        maxRetries: 0,
      });
      await expect(client.bridge.routes()).resolves.toHaveLength(1);
      expect(server.count('GET /bridge/routes')).toBe(1);
    } finally {
      vi.unstubAllGlobals();
      await server.close();
    }
  });
});
