import { getEventListeners } from 'node:events';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import {
  AbortError,
  ApiPromise,
  ArgumentError,
  PartnerClient,
  ServiceUnavailableError,
  TimeoutError,
} from '../src/index.js';
import { BASE_URL, envelopeError, json, makeClient, mockService, SECRET } from './helpers/mock-fetch.js';

const echoPath = () =>
  mockService({
    routes: {
      'GET *': (request) => json({ data: `${request.url.pathname}${request.url.search}` }),
      'POST *': (request) => json({ data: request.body }),
    },
  });

async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('the bearer token goes only below /api/v1/s2s', () => {
  it.each([
    ['/..;/auth/token'],
    ['/bridge/..;x/y'],
    ['/x/%252e%252e/y'],
    ['/x/%25252e%25252E/y'],
    ['/x/a%252fb'],
    ['/x/.%252e'],
  ])('refuses %j, which a server or proxy that decodes again reads as a way out', async (path) => {
    const service = echoPath();
    const error = await rejection(makeClient(service).get(path));
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as ArgumentError).issues[0]?.path).toBe('path');
    expect(service.calls).toHaveLength(0);
  });

  it.each([
    [{ a: '%2e%2e' }, '/x/{a}'],
    [{ a: '%252E' }, '/x/{a}'],
    [{ a: '..;' }, '/x/{a}'],
    [{ a: 'a%2Fb' }, '/x/{a}'],
    [{ a: '%5c' }, '/x/{a}'],
    [{ a: 'lone \uD800' }, '/x/{a}'],
    // Neither value alone is a dot, but the two together decode to `..`.
    [{ a: '%2', b: 'e%2e' }, '/x/{a}{b}'],
  ])('refuses params %j in %j before any request', async (params, path) => {
    const service = echoPath();
    const error = await rejection(makeClient(service).get(path, { params }));
    expect(error).toBeInstanceOf(ArgumentError);
    expect(service.calls).toHaveLength(0);
  });

  it('still sends ids that hold a percent sign or a semicolon inside their segment', async () => {
    const client = makeClient(echoPath());
    expect(await client.get('/x/{a}', { params: { a: '50%off;v=1' } })).toBe(
      '/api/v1/s2s/x/50%25off%3Bv%3D1',
    );
  });

  it.each([['..;'], ['.;x'], ['..%00'], ['%252e%252e']])(
    "refuses a transferId %j of the SDK's own methods as well",
    async (transferId) => {
      const service = echoPath();
      const client = makeClient(service);
      await expect(client.bridge.transfers.get({ userId: 'u1', transferId })).rejects.toBeInstanceOf(
        ArgumentError,
      );
      await expect(client.bridge.transfers.wait({ userId: 'u1', transferId })).rejects.toBeInstanceOf(
        ArgumentError,
      );
      expect(service.calls).toHaveLength(0);
    },
  );

  it.each([['constructor'], ['__proto__'], ['toString'], ['hasOwnProperty']])(
    'wants a param of its own for the placeholder {%s}, not an inherited property',
    async (name) => {
      const service = echoPath();
      const error = await rejection(makeClient(service).get(`/x/{${name}}`, { params: {} }));
      expect(error).toBeInstanceOf(ArgumentError);
      expect((error as ArgumentError).issues.map((i) => i.path)).toContain(`params.${name}`);
      expect(service.calls).toHaveLength(0);
    },
  );

  it('sends the entries of a URLSearchParams, whatever its toString says', async () => {
    class Lying extends URLSearchParams {
      override toString() {
        return 'token=stolen#/../../auth';
      }
    }
    const client = makeClient(echoPath());
    expect(await client.get('/x', { query: new Lying({ q: '1' }) })).toBe('/api/v1/s2s/x?q=1');
  });

  it('refuses a query that only looks like a URLSearchParams, before any request', async () => {
    const service = echoPath();
    const client = makeClient(service);
    for (const query of [
      Object.create(URLSearchParams.prototype),
      new Proxy(new URLSearchParams('q=1'), {}),
    ]) {
      const error = await rejection(client.get('/x', { query }));
      expect(error).toBeInstanceOf(ArgumentError);
      expect((error as ArgumentError).issues[0]?.path).toBe('query');
    }
    expect(service.calls).toHaveLength(0);
  });
});

describe('fetchOptions cannot change what the SDK sends', () => {
  it('never sends a body from fetchOptions', async () => {
    const service = echoPath();
    const client = makeClient(service, { maxRetries: 0 });
    expect(await client.post('/x', {}, { fetchOptions: { body: 'smuggled' } })).toBe('');
    expect(await client.get('/x', {}, { fetchOptions: { body: 'smuggled' } })).toBe('/api/v1/s2s/x');
    expect(await makeClient(service, { fetchOptions: { body: 'smuggled' } }).post('/x')).toBe('');
  });

  it('refuses fetchOptions whose reading throws, before any request', async () => {
    const service = echoPath();
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('trap');
        },
      },
    );
    expect(() => makeClient(service, { fetchOptions: hostile })).toThrow(ArgumentError);
    const client = makeClient(service);
    expect(() => client.withOptions({ fetchOptions: hostile })).toThrow(ArgumentError);
    await expect(client.get('/x', {}, { fetchOptions: hostile })).rejects.toBeInstanceOf(ArgumentError);
    expect(service.calls).toHaveLength(0);
  });
});

describe('bad headers and signals are ArgumentErrors before any request', () => {
  it('refuses a header value that is not Latin-1, which fetch cannot send', async () => {
    const service = echoPath();
    expect(() => makeClient(service, { defaultHeaders: { 'x-label': '日本' } })).toThrow(ArgumentError);
    const error = await rejection(makeClient(service).get('/x', {}, { headers: { 'x-label': 'Zoë ✓' } }));
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as Error).message).not.toContain('Zoë');
    expect(service.calls).toHaveLength(0);
    // Latin-1 is what fetch sends as is.
    expect(await makeClient(service).get('/x', {}, { headers: { 'x-label': 'Zoë' } })).toBe('/api/v1/s2s/x');
  });

  it('refuses an object that only inherits from AbortSignal', async () => {
    const service = echoPath();
    const signal = Object.create(AbortSignal.prototype) as AbortSignal;
    await expect(makeClient(service).get('/x', {}, { signal })).rejects.toBeInstanceOf(ArgumentError);
    expect(service.calls).toHaveLength(0);
  });
});

describe('what a server echoes never carries a secret', () => {
  it('masks the bearer token and the secret in an x-request-id that echoes them', async () => {
    const echo = (request: { headers: Headers }) => `${request.headers.get('authorization')} ${SECRET}`;
    const service = mockService({
      routes: {
        'GET /ok': (request) => json({ data: 1 }, 200, { 'x-request-id': echo(request) }),
        'GET /fail': (request) => envelopeError(400, 'BAD', 'no', {}, { 'x-request-id': echo(request) }),
      },
    });
    const lines: string[] = [];
    const push = (line: string) => {
      lines.push(line);
    };
    const exporter = new InMemorySpanExporter();
    const client = makeClient(service, {
      logLevel: 'debug',
      logger: { debug: push, info: push, warn: push, error: push },
      tracing: {
        tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
      },
    });
    const events: unknown[] = [];
    client.on('response', (event) => events.push(event));
    const { requestId } = await client.get('/ok').withResponse();
    const error = (await rejection(client.get('/fail'))) as { requestId?: string };
    const spans = exporter.getFinishedSpans().map((span) => span.attributes);
    expect(JSON.stringify(spans)).toContain('x-request-id');
    const seen = JSON.stringify({ requestId, errorId: error.requestId, events, lines, spans });
    expect(seen).toContain('[redacted]');
    expect(seen).not.toContain('token-1');
    expect(seen).not.toContain(SECRET);
  });

  it('masks credential headers of the caller (default or per call) that a server echoes', async () => {
    const apiKey = 'key-0123456789abcdef';
    const proxyAuth = 'Basic cHJveHk6cGFzc3dvcmQ=';
    const service = mockService({
      routes: {
        'GET /fail': (request) =>
          envelopeError(
            400,
            'BAD',
            `got x-api-key ${request.headers.get('x-api-key')} and ${request.headers.get('proxy-authorization')}`,
          ),
      },
    });
    const client = makeClient(service, { defaultHeaders: { 'X-Api-Key': apiKey } });
    const error = await rejection(client.get('/fail', {}, { headers: { 'proxy-authorization': proxyAuth } }));
    expect((error as Error).message).toContain('[redacted]');
    expect((error as Error).message).not.toContain(apiKey);
    expect((error as Error).message).not.toContain('cHJveHk6cGFzc3dvcmQ=');
  });
});

describe('ApiPromise', () => {
  it("gives plain working promises from the Promise statics, as the class's own are not for callers", async () => {
    expect(await ApiPromise.resolve(1)).toBe(1);
    await expect(ApiPromise.reject(new Error('x'))).rejects.toThrow('x');
    expect(await ApiPromise.all([1, Promise.resolve(2)])).toEqual([1, 2]);
    expect(await ApiPromise.race([3])).toBe(3);
    const service = mockService({ routes: { 'GET *': () => json({ data: 4 }) } });
    const promise = makeClient(service).get('/x');
    expect(await (promise.constructor as typeof Promise).resolve(promise)).toBe(4);
  });
});

describe('a POST that may act twice', () => {
  it('is sent again after a 401 only once, with a new token, and never a third time', async () => {
    let n = 0;
    const service = mockService({
      routes: {
        'POST /w': () =>
          ++n === 1 ? envelopeError(401, 'UNAUTHORIZED', 'expired') : envelopeError(503, 'DOWN', 'd'),
      },
    });
    const error = await rejection(makeClient(service).post('/w', { body: {} }));
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    const sent = service.calls.filter((call) => call.path === '/w');
    expect(sent.map((call) => call.headers.get('authorization'))).toEqual([
      'Bearer token-1',
      'Bearer token-2',
    ]);
  });
});

describe('a token fetch its last caller gave up on', () => {
  it('is not joined by the next call, which fetches its own instead of failing with AbortError', async () => {
    let tokens = 0;
    const service = mockService({
      token: () =>
        ++tokens === 1
          ? new Promise<Response>(() => {})
          : json({ access_token: 'token-2', token_type: 'Bearer', expires_in: 3600, scope: 'bridge:read' }),
      routes: { 'GET *': () => json({ data: 'ok' }) },
    });
    const client = makeClient(service, { timeoutMs: 50, maxRetries: 0 });
    // Straight on, as a loop of calls would: no tick for the abandoned fetch to be cleared first.
    const first = await client.get('/x').catch((error: unknown) => error);
    expect(first).toBeInstanceOf(TimeoutError);
    const next = await client.get('/x').catch((error: unknown) => error);
    expect(next).not.toBeInstanceOf(AbortError);
    expect(next).toBe('ok');
  });
});

describe('signals and timers left behind', () => {
  it('leaves no abort listener on the caller signal, whatever the outcome', async () => {
    let n = 0;
    const service = mockService({
      routes: {
        'GET /flaky': () => (++n === 1 ? envelopeError(503, 'DOWN', 'd') : json({ data: 1 })),
        'GET /hang': () => new Promise<Response>(() => {}),
        'GET /bad': () => envelopeError(400, 'BAD', 'no'),
      },
    });
    const client = makeClient(service, { timeoutMs: 50, maxRetries: 1 });
    const { signal } = new AbortController();
    await client.get('/flaky', {}, { signal });
    await client.get('/hang', {}, { signal }).catch(() => {});
    await client.get('/bad', {}, { signal }).catch(() => {});
    await client.post('/bad', {}, { signal }).catch(() => {});
    await client.getScopes({ signal });
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});

describe('an answer that comes after the attempt ended', () => {
  it('has its body cancelled, so that its connection does not keep the process alive', async () => {
    const service = mockService();
    let answer!: (response: Response) => void;
    let cancelled = false;
    const fetch = (url: string, init: RequestInit) =>
      url.endsWith('/auth/token')
        ? service.fetch(url, init)
        : // A fetch that ignores the signal, and answers only once the SDK gave up.
          new Promise<Response>((resolve) => {
            answer = resolve;
          });
    const client = makeClient(service, { fetch, timeoutMs: 50, maxRetries: 0 });
    await expect(client.get('/x')).rejects.toBeInstanceOf(TimeoutError);
    const body = new ReadableStream({
      pull() {
        return new Promise(() => {});
      },
      cancel() {
        cancelled = true;
      },
    });
    answer(new Response(body, { status: 200 }));
    await vi.waitFor(() => expect(cancelled).toBe(true));
  });
});

describe('withOptions', () => {
  it('starts from the options as they were checked, not as the caller changed them since', async () => {
    const service = mockService({
      routes: { 'GET *': (request) => json({ data: request.headers.get('x-a') }) },
    });
    const options = {
      baseUrl: BASE_URL,
      clientId: 'client-1',
      clientSecret: SECRET,
      fetch: service.fetch,
      timeoutMs: 1_000,
      defaultHeaders: { 'x-a': 'checked' },
    };
    const client = new PartnerClient(options);
    options.defaultHeaders['x-a'] = 'changed later';
    (options as { timeoutMs: unknown }).timeoutMs = 'not a number';
    const derived = client.withOptions({ maxRetries: 0 });
    expect(await derived.get('/x')).toBe('checked');
    expect(await client.get('/x')).toBe('checked');
  });

  it('derives from a derived client: settings merge, one token, the originals unchanged', async () => {
    const service = mockService({
      routes: {
        'GET *': (request) => json({ data: [request.headers.get('x-a'), request.headers.get('x-b')] }),
      },
    });
    const client = makeClient(service, { defaultHeaders: { 'x-a': '0' } });
    const first = client.withOptions({ defaultHeaders: { 'x-b': '1' } });
    const second = first.withOptions({ defaultHeaders: { 'x-a': '2' }, maxRetries: 0 });
    expect(await second.get('/x')).toEqual(['2', '1']);
    expect(await first.get('/x')).toEqual(['0', '1']);
    expect(await client.get('/x')).toEqual(['0', null]);
    expect(service.count('POST /auth/token')).toBe(1);
  });

  it('shares its token cache with the derived client only, not with a client made meanwhile', async () => {
    const service = mockService({ routes: { 'GET *': (request) => json({ data: request.url.host }) } });
    const other = mockService({ routes: { 'GET *': (request) => json({ data: request.url.host }) } });
    const client = makeClient(service);
    let made: PartnerClient | undefined;
    // A logger whose method is made on first use, by code that happens to make a client too.
    const logger = {
      get debug() {
        made ??= new PartnerClient({
          baseUrl: 'https://other.test',
          clientId: 'other',
          clientSecret: 'other-secret',
          fetch: other.fetch,
        });
        return () => {};
      },
      info() {},
      warn() {},
      error() {},
    };
    client.withOptions({ logger });
    expect(await made?.get('/x')).toBe('other.test');
    expect(service.calls).toHaveLength(0);
    expect(other.count('POST /auth/token')).toBe(1);
  });
});

describe('withOptions hands its state only to the client it makes', () => {
  const options = (fetch: typeof globalThis.fetch) => ({
    baseUrl: BASE_URL,
    clientId: 'client-1',
    clientSecret: SECRET,
    fetch,
  });

  it('a look-alike state under every symbol the constructor reads is ignored: own token, own service', async () => {
    const service = echoPath();
    const elsewhere = vi.fn(async () => json({ data: 'elsewhere' }));
    // Whatever symbol keys the constructor looks up, a proxy sees them.
    const looked = new Set<symbol>();
    const spy = new Proxy(options(service.fetch), {
      get(target, key, receiver) {
        if (typeof key === 'symbol') looked.add(key);
        return Reflect.get(target, key, receiver);
      },
      getOwnPropertyDescriptor(target, key) {
        if (typeof key === 'symbol') looked.add(key);
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
    });
    new PartnerClient(spy);
    const lookalike = {
      baseUrl: 'https://elsewhere.test',
      clientId: 'forged',
      fetch: elsewhere,
      secrets: [],
      tokens: {
        get: async () => ({ accessToken: 'forged-token', scopes: [], expiresAt: Date.now() + 60_000 }),
      },
      intents: {},
    };
    const forged: Record<PropertyKey, unknown> = { ...options(service.fetch) };
    for (const key of looked) forged[key] = lookalike;
    const client = new PartnerClient(forged as never);
    expect(client.baseUrl).toBe(BASE_URL);
    expect(await client.get('/x')).toBe('/api/v1/s2s/x');
    expect(elsewhere).not.toHaveBeenCalled();
    expect(service.count('POST /auth/token')).toBe(1);
    expect(service.calls.at(-1)?.headers.get('authorization')).not.toContain('forged');
  });

  it('a derived client shares the token and shows no secret and no token in inspect or JSON', async () => {
    const service = echoPath();
    const client = new PartnerClient(options(service.fetch));
    const derived = client.withOptions({ maxRetries: 0, defaultHeaders: { 'x-job': '1' } });
    await client.get('/x');
    await derived.get('/x');
    expect(service.count('POST /auth/token')).toBe(1);
    const token = service.calls.at(-1)?.headers.get('authorization')?.replace('Bearer ', '') ?? '';
    expect(token.length).toBeGreaterThan(0);
    const { inspect } = await import('node:util');
    for (const text of [
      inspect(derived, { depth: Infinity, showHidden: true }),
      JSON.stringify(derived),
      inspect(derived.bridge, { depth: Infinity, showHidden: true }),
    ]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(token);
    }
  });
});
