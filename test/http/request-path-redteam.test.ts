import { fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { route } from '../../fixtures/wire.js';
import { AbortError, PartnerClient, type PartnerClientOptions, TimeoutError } from '../../src/index.js';
import { faultServer, jsonReply, token } from '../helpers/fault-server.js';
import { BASE_URL, json, makeClient, mockService } from '../helpers/mock-fetch.js';

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

describe("the runtime's own fetch on a real connection", () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  async function setup(
    handlers: Parameters<typeof faultServer>[0],
    options: Partial<PartnerClientOptions> = {},
  ) {
    const server = await faultServer({ 'POST /auth/token': token, ...handlers });
    closers.push(server.close);
    const client = new PartnerClient({
      baseUrl: server.url,
      clientId: 'c',
      clientSecret: 's',
      maxRetries: 2,
      timeoutMs: 5_000,
      retry: { minDelayMs: 5, maxDelayMs: 20, maxRetryTimeMs: 5_000 },
      ...options,
    });
    return { server, client };
  }

  const routesBody = JSON.stringify({ data: [route()] });

  it("the caller's signal aborting mid-body ends the call with an AbortError carrying its reason, not retried", async () => {
    const controller = new AbortController();
    const { server, client } = await setup({
      'GET /bridge/routes': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(routesBody.slice(0, 20));
        setTimeout(() => controller.abort(new Error('caller gave up')), 20);
      },
    });
    const error = await client.bridge.routes({ signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).cause).toEqual(new Error('caller gave up'));
    expect(server.count('GET /bridge/routes')).toBe(1);
  });

  it('a timeout while the token is fetched is a TimeoutError, and the data route is never called', async () => {
    const { server, client } = await setup(
      {
        'POST /auth/token': () => {},
        'GET /bridge/routes': (_req, res) => jsonReply(res, 200, { data: [] }),
      },
      { timeoutMs: 150, maxRetries: 0 },
    );
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(server.count('GET /bridge/routes')).toBe(0);
  });

  it('a short timeout begun after long ones ends its call first', async () => {
    const { client } = await setup({ 'GET /bridge/routes': () => {} }, { maxRetries: 0 });
    const stop = new AbortController();
    const long = Array.from({ length: 5 }, () =>
      client.bridge.routes({ timeoutMs: 60_000, signal: stop.signal }).catch((e: unknown) => e),
    );
    const short = await client.bridge.routes({ timeoutMs: 100 }).catch((e: unknown) => e);
    expect(short).toBeInstanceOf(TimeoutError);
    expect((short as TimeoutError).message).toContain('100');
    stop.abort();
    for (const error of await Promise.all(long)) expect(error).toBeInstanceOf(AbortError);
  });

  it('after a token is revoked, the replay and every later call send the newer token', async () => {
    const seen: (string | undefined)[] = [];
    const { client } = await setup({
      'GET /bridge/routes': (req, res) => {
        seen.push(req.headers.authorization);
        if (req.headers.authorization === 'Bearer tok-1')
          jsonReply(res, 401, {
            statusCode: 401,
            error: 'Unauthorized',
            code: 'UNAUTHORIZED',
            message: 'revoked',
          });
        else jsonReply(res, 200, { data: [route()] });
      },
    });
    await expect(client.bridge.routes()).resolves.toHaveLength(1);
    await Promise.all([client.bridge.routes(), client.withOptions({ timeoutMs: 4_000 }).bridge.routes()]);
    expect(seen).toEqual(['Bearer tok-1', 'Bearer tok-2', 'Bearer tok-2', 'Bearer tok-2']);
  });
});

describe('a global fetch replaced after the client was made', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('gets a URL string and a plain init, with the SDK’s own method, headers and body', async () => {
    const client = new PartnerClient({ baseUrl: BASE_URL, clientId: 'c', clientSecret: 's', maxRetries: 0 });
    const service = mockService({ routes: { 'POST /echo': (request) => json({ data: request.body }) } });
    const inputs: unknown[] = [];
    vi.stubGlobal('fetch', (input: unknown, init?: RequestInit) => {
      inputs.push(input);
      return service.fetch(input as string, init);
    });
    await expect(client.post('/echo', { body: { amount: '1.50' } })).resolves.toBe('{"amount":"1.50"}');
    expect(inputs.map((input) => typeof input)).toEqual(['string', 'string']);
    expect(service.calls.at(-1)!.headers.get('authorization')).toBe('Bearer token-1');
  });

  it('one that ignores the signal still ends the attempt at its deadline', async () => {
    const client = new PartnerClient({
      baseUrl: BASE_URL,
      clientId: 'c',
      clientSecret: 's',
      maxRetries: 0,
      timeoutMs: 100,
    });
    const service = mockService({ routes: { 'GET /bridge/routes': never } });
    vi.stubGlobal('fetch', service.fetch);
    await expect(client.bridge.routes()).rejects.toBeInstanceOf(TimeoutError);
  });
});
