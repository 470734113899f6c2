import type { IncomingMessage, ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import { fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { route } from '../../fixtures/wire.js';
import { AuthenticationError, ConnectionError, PartnerClient, TimeoutError } from '../../src/index.js';
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

describe('secrets on the runtime fetch', () => {
  it('a server that echoes the bearer token and the secret: never in errors, causes, events or logs', async () => {
    const secret = 'client-secret-value-1234';
    const issued: string[] = [];
    const echo = (req: IncomingMessage, res: ServerResponse) => {
      const authorization = req.headers.authorization ?? '';
      res.writeHead(401, { 'content-type': 'application/json', 'x-request-id': `req ${authorization}` });
      res.end(
        JSON.stringify({
          statusCode: 401,
          error: 'Unauthorized',
          code: 'UNAUTHORIZED',
          message: `bad ${authorization} ${secret}`,
        }),
      );
    };
    const server = await faultServer({
      'POST /auth/token': (_req, res, attempt) => {
        const value = `bearer-token-value-${attempt}-abcdef`;
        issued.push(value);
        jsonReply(res, 200, {
          access_token: value,
          token_type: 'Bearer',
          expires_in: 3600,
          scope: 'bridge:read',
        });
      },
      'GET /bridge/routes': echo,
      'GET /bridge/broken': (req, res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-request-id': `id ${req.headers.authorization}`,
        });
        res.write('{"data":');
        setTimeout(() => res.socket?.destroy(), 5);
      },
    });
    const lines: string[] = [];
    const log = (...args: unknown[]) => lines.push(inspect(args, { depth: 10 }));
    const client = new PartnerClient({
      baseUrl: server.url,
      clientId: 'c',
      clientSecret: secret,
      maxRetries: 1,
      retry: { minDelayMs: 1, maxDelayMs: 5 },
      logger: { debug: log, info: log, warn: log, error: log },
      logLevel: 'debug',
    });
    const events: unknown[] = [];
    for (const name of ['request', 'response', 'retry', 'token'] as const)
      client.on(name, (event: unknown) => events.push(event));
    try {
      const errors = [
        await client.get('/bridge/broken').catch((e: unknown) => e),
        await client
          .get('/bridge/broken', {}, { fetchOptions: { keepalive: true } })
          .catch((e: unknown) => e),
        await client.bridge.routes().catch((e: unknown) => e),
      ];
      expect(errors[0]).toBeInstanceOf(ConnectionError);
      expect(errors[1]).toBeInstanceOf(ConnectionError);
      expect(errors[2]).toBeInstanceOf(AuthenticationError);
      expect(issued.length).toBeGreaterThan(0);
      const seen = [
        ...errors.map((error) => `${String(error)} ${inspect(error, { depth: 10 })}`),
        inspect(events, { depth: 10 }),
        ...lines,
      ].join('\n');
      for (const value of [secret, ...issued]) expect(seen).not.toContain(value);
    } finally {
      await server.close();
    }
  });
});
