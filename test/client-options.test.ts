import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { z } from 'zod';
import {
  ArgumentError,
  ConnectionError,
  PartnerClient,
  PermissionDeniedError,
  ResponseValidationError,
  ServiceUnavailableError,
  type StandardSchemaV1,
  TimeoutError,
} from '../src/index.js';
import {
  BASE_URL,
  envelopeError,
  json,
  type MockRequest,
  makeClient,
  mockService,
  SECRET,
} from './helpers/mock-fetch.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const routesOk = () => json({ data: [] }, 200, { 'x-request-id': 'req-routes-1' });

describe('client.request, get and post', () => {
  it.each([
    ['../auth/token'],
    ['/../auth/token'],
    ['/bridge/../../auth/token'],
    ['/bridge/%2e%2e/%2E%2E/auth/token'],
    ['https://elsewhere.example/api/v1/s2s/me'],
    ['//elsewhere.example/me'],
    ['http:elsewhere'],
    ['/users/a%2fb'],
    ['/me?token=1'],
    ['/me#x'],
    ['/me\\..\\x'],
    [''],
  ])('refuses %j before any request, the token request included', async (path) => {
    const service = mockService();
    const client = makeClient(service);
    for (const call of [
      () => client.get(path),
      () => client.post(path, { body: {} }),
      () => client.request({ method: 'GET', path }),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArgumentError);
      expect((error as ArgumentError).issues[0]?.path).toBe('path');
    }
    expect(service.calls).toHaveLength(0);
  });

  it('refuses a parameter that is missing or would leave its segment, and encodes the others', async () => {
    const service = mockService({ routes: { 'GET *': (request) => json({ data: request.url.pathname }) } });
    const client = makeClient(service);
    await expect(client.get('/users/{userId}', { params: {} })).rejects.toBeInstanceOf(ArgumentError);
    expect(service.calls).toHaveLength(0);
    for (const userId of ['..', '.', '../../auth/token', 'a\\b'])
      await expect(client.get('/users/{userId}', { params: { userId } })).rejects.toBeInstanceOf(
        ArgumentError,
      );
    expect(service.calls).toHaveLength(0);
    const seen = await client.get('/users/{userId}/portfolio', { params: { userId: 'a b?c#d%' } });
    expect(seen).toBe('/api/v1/s2s/users/a%20b%3Fc%23d%25/portfolio');
  });

  it('unwraps data, checks it with the schema, and types it', async () => {
    const service = mockService({
      routes: {
        'GET /staking/pools': () => json({ data: [{ poolId: 'p1', apy: '4.2' }], extra: 1 }),
        'GET /staking/broken': () => json({ data: [{ poolId: 7 }] }),
        'GET /staking/bare': () => json([1, 2]),
      },
    });
    const client = makeClient(service);
    const Pool = z.object({ poolId: z.string(), apy: z.string() });
    const pools = await client.get('/staking/pools', { schema: z.array(Pool) });
    expectTypeOf(pools).toEqualTypeOf<{ poolId: string; apy: string }[]>();
    expect(pools).toEqual([{ poolId: 'p1', apy: '4.2' }]);
    const untyped = await client.request({ path: '/staking/pools' });
    expectTypeOf(untyped).toEqualTypeOf<unknown>();
    expect(await client.get('/staking/pools', { unwrap: false })).toEqual({
      data: [{ poolId: 'p1', apy: '4.2' }],
      extra: 1,
    });

    const broken = await client.get('/staking/broken', { schema: z.array(Pool) }).catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(ResponseValidationError);
    expect((broken as ResponseValidationError).issues.map((i) => i.path)).toContain('data.0.poolId');
    const bare = await client.get('/staking/bare').catch((e: unknown) => e);
    expect(bare).toBeInstanceOf(ResponseValidationError);
  });

  it('takes any Standard Schema, an asynchronous one included, and types the answer by it', async () => {
    const service = mockService({
      routes: {
        'GET /staking/pools': () => json({ data: { poolId: 'p1' } }),
        'GET /staking/broken': () => json({ data: { poolId: 7 } }),
      },
    });
    const client = makeClient(service);
    // Not zod: a schema written to the Standard Schema interface alone, checking asynchronously.
    const Pool: StandardSchemaV1<unknown, { poolId: string }> = {
      '~standard': {
        version: 1,
        vendor: 'hand-written',
        validate: async (value) => {
          const poolId = (value as { poolId?: unknown } | null)?.poolId;
          return typeof poolId === 'string'
            ? { value: { poolId } }
            : { issues: [{ message: 'must be a string', path: [{ key: 'poolId' }] }] };
        },
      },
    };
    const pool = await client.get('/staking/pools', { schema: Pool });
    expectTypeOf(pool).toEqualTypeOf<{ poolId: string }>();
    expect(pool).toEqual({ poolId: 'p1' });
    const broken = await client.request({ path: '/staking/broken', schema: Pool }).catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(ResponseValidationError);
    expect((broken as ResponseValidationError).issues).toEqual([
      { path: 'data.poolId', message: 'must be a string' },
    ]);
    const refused = await client
      .request({ path: '/staking/pools', schema: {} as never })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ArgumentError);
  });

  it('sends the query and a JSON body, and refuses a bigint or a body on a GET before sending', async () => {
    const service = mockService({
      routes: {
        'POST /users': (request) => json({ data: { got: JSON.parse(request.body), q: request.url.search } }),
      },
    });
    const client = makeClient(service);
    const answer = await client.post('/users', {
      body: { email: 'a@example.com', amount: '10.5' },
      query: { dryRun: true, tag: ['a', 'b'], skip: undefined },
    });
    expect(answer).toEqual({
      got: { email: 'a@example.com', amount: '10.5' },
      q: '?dryRun=true&tag=a&tag=b',
    });
    const before = service.calls.length;
    await expect(client.post('/users', { body: { amount: 10n } })).rejects.toBeInstanceOf(ArgumentError);
    await expect(client.post('/users', { body: { amount: Number.NaN } })).rejects.toBeInstanceOf(
      ArgumentError,
    );
    await expect(client.request({ method: 'GET', path: '/users', body: {} })).rejects.toBeInstanceOf(
      ArgumentError,
    );
    expect(service.calls.length).toBe(before);
  });

  it('names the scopes on a 403, like the SDK methods', async () => {
    const service = mockService({ routes: { 'GET /stocks': () => envelopeError(403, 'FORBIDDEN', 'no') } });
    const error = await makeClient(service)
      .get('/stocks', { scopes: ['stocks:read'] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect((error as PermissionDeniedError).requiredScopes).toEqual(['stocks:read']);
    expect((error as Error).message).toContain('stocks:read');
  });

  it('retries a GET after a 503, a POST only after a 429 unless it is idempotent', async () => {
    let calls = 0;
    const flaky = () => (++calls % 2 === 1 ? envelopeError(503, 'DOWN', 'down') : json({ data: 'ok' }));
    const service = mockService({ routes: { 'GET /x': flaky, 'POST /x': flaky } });
    const client = makeClient(service);
    expect(await client.get('/x')).toBe('ok');
    expect(service.count('GET /x')).toBe(2);

    calls = 0;
    await expect(client.post('/x', { body: {} })).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(service.count('POST /x')).toBe(1);

    calls = 0;
    expect(await client.post('/x', { body: {}, idempotent: true })).toBe('ok');
    expect(service.count('POST /x')).toBe(3);

    let limited = 0;
    const rateLimited = mockService({
      routes: {
        'POST /y': () =>
          ++limited === 1
            ? envelopeError(429, 'RATE', 'slow', {}, { 'retry-after': '0' })
            : json({ data: 1 }),
      },
    });
    expect(await makeClient(rateLimited).post('/y', { body: {} })).toBe(1);
    expect(rateLimited.count('POST /y')).toBe(2);
  });

  it('retries a POST whose connection was refused, not one that broke after sending', async () => {
    for (const [code, expected] of [
      ['ECONNREFUSED', 2],
      ['ECONNRESET', 1],
    ] as const) {
      const service = mockService({ routes: { 'POST /z': () => json({ data: 1 }) } });
      let refused = 0;
      const fetch = async (url: string, init: RequestInit) => {
        if (url.endsWith('/z') && refused++ === 0)
          throw new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
        return service.fetch(url, init);
      };
      const client = makeClient(service, { fetch });
      const result = await client.post('/z', { body: {} }).catch((e: unknown) => e);
      expect(refused).toBe(expected);
      if (expected === 1) expect(result).toBeInstanceOf(ConnectionError);
      else expect(result).toBe(1);
    }
  });

  it('shows the path template in events, never the filled ids', async () => {
    const service = mockService({ routes: { 'GET *': () => json({ data: 1 }) } });
    const client = makeClient(service);
    const paths: string[] = [];
    client.on('response', (e) => paths.push(e.path));
    await client.get('/users/{userId}', { params: { userId: 'user-secret-id' } });
    expect(paths).toEqual(['/auth/token', '/users/{userId}']);
  });
});

describe('withResponse and request ids', () => {
  it('gives data, the HTTP answer and its request id, for every kind of method', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': routesOk,
        'GET /me': () => json({ data: { scopes: ['bridge:read'] } }, 200, { 'x-request-id': 'req-me' }),
        'GET /bridge/transfers': () =>
          json({ data: [], pagination: { nextCursor: null } }, 200, { 'x-request-id': 'req-list' }),
      },
    });
    const client = makeClient(service);
    const { data, response, requestId } = await client.bridge.routes().withResponse();
    expect(data).toEqual([]);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req-routes-1');
    expect(requestId).toBe('req-routes-1');
    expect((await client.me().withResponse()).requestId).toBe('req-me');
    expect((await client.get('/me').withResponse()).requestId).toBe('req-me');
    const listed = await client.bridge.transfers.list({ userId: 'u1' }).withResponse();
    expect(listed.requestId).toBe('req-list');
    expect(listed.data.data).toEqual([]);
    // Awaited as usual, it is the data, and it is a real promise.
    const promise = client.bridge.routes();
    expect(promise).toBeInstanceOf(Promise);
    expect(await promise).toEqual([]);
  });

  it('puts the request id on API errors and in response events', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': () => envelopeError(404, 'NOT_FOUND', 'no', {}, { 'x-request-id': 'req-404' }),
      },
    });
    const client = makeClient(service);
    const events: (string | undefined)[] = [];
    client.on('response', (e) => events.push(e.requestId));
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect((error as { requestId?: string }).requestId).toBe('req-404');
    expect(events).toContain('req-404');
  });

  it('rejects withResponse without an unhandled rejection of the plain promise', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const service = mockService({
        routes: { 'GET /bridge/routes': () => envelopeError(400, 'BAD', 'no') },
      });
      await expect(makeClient(service).bridge.routes().withResponse()).rejects.toMatchObject({ status: 400 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});

describe('headers and the User-Agent', () => {
  it('sends default headers and per-call headers over them, with the SDK User-Agent', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': routesOk } });
    const client = makeClient(service, {
      defaultHeaders: { 'X-Partner-Env': 'staging', 'x-team': 'payments' },
    });
    await client.bridge.routes({ headers: { 'x-team': 'ops', 'X-Correlation-Id': 'job-7' } });
    await client.bridge.routes({ headers: { 'x-team': null } });
    const [token, first, second] = service.calls as [MockRequest, MockRequest, MockRequest];
    expect(first.headers.get('x-partner-env')).toBe('staging');
    expect(first.headers.get('x-team')).toBe('ops');
    expect(first.headers.get('x-correlation-id')).toBe('job-7');
    expect(first.headers.get('authorization')).toMatch(/^Bearer token-1$/);
    expect(second.headers.has('x-team')).toBe(false);
    expect(second.headers.get('x-partner-env')).toBe('staging');
    // The token request carries the default headers, never a call's own.
    expect(token.headers.get('x-partner-env')).toBe('staging');
    expect(token.headers.has('x-correlation-id')).toBe(false);
    for (const call of [token, first, second]) {
      expect(call.headers.get('user-agent')).toBe(`partner-s2s-sdk/${VERSION} node/${process.versions.node}`);
    }
  });

  it('refuses to override the authorization and content headers, before any request', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': routesOk } });
    for (const name of ['Authorization', 'content-type', 'Content-Length', 'host']) {
      expect(() => makeClient(service, { defaultHeaders: { [name]: 'x' } })).toThrow(ArgumentError);
      const client = makeClient(service);
      await expect(client.bridge.routes({ headers: { [name]: 'Bearer stolen' } })).rejects.toBeInstanceOf(
        ArgumentError,
      );
    }
    await expect(
      makeClient(service).bridge.routes({ headers: { 'x-a': 'one\r\nx-b: two' } }),
    ).rejects.toBeInstanceOf(ArgumentError);
    expect(service.calls).toHaveLength(0);
  });

  it('lets the caller name the User-Agent', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': routesOk } });
    await makeClient(service, { defaultHeaders: { 'user-agent': 'acme-backend/2.0' } }).bridge.routes();
    expect(service.calls.every((call) => call.headers.get('user-agent') === 'acme-backend/2.0')).toBe(true);
  });

  it('leaves the User-Agent out of a call whose headers set it to null, and only that call', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': routesOk } });
    const client = makeClient(service);
    await client.bridge.routes({ headers: { 'user-agent': null } });
    await client.bridge.routes({ headers: { 'user-agent': 'job-runner/1' } });
    await client.bridge.routes();
    const [, bare, named, plain] = service.calls as [MockRequest, MockRequest, MockRequest, MockRequest];
    expect(bare.headers.has('user-agent')).toBe(false);
    expect(named.headers.get('user-agent')).toBe('job-runner/1');
    expect(plain.headers.get('user-agent')).toMatch(/^partner-s2s-sdk\//);
  });
});

describe('fetch and fetchOptions', () => {
  it('calls fetch with a URL string and a plain init, never a Request', async () => {
    const service = mockService({ routes: { 'GET /bridge/transfers/{id}': routesOk, 'GET *': routesOk } });
    const seen: { url: unknown; init: Record<string, unknown> }[] = [];
    const fetch = async (url: unknown, init: Record<string, unknown>) => {
      seen.push({ url, init });
      return service.fetch(url as string, init as RequestInit);
    };
    const client = makeClient(service, { fetch, fetchOptions: { keepalive: true, dispatcher: 'pool-a' } });
    await client.bridge.routes({
      fetchOptions: { dispatcher: 'pool-b', redirect: 'follow', method: 'DELETE' },
    });
    expect(seen).toHaveLength(2);
    for (const { url, init } of seen) {
      expect(typeof url).toBe('string');
      expect(init).not.toBeInstanceOf(Request);
      expect(init.redirect).toBe('manual');
      expect(init.keepalive).toBe(true);
      expect(init.signal).toBeInstanceOf(AbortSignal);
    }
    expect(seen[0]?.url).toBe(`${BASE_URL}/api/v1/s2s/auth/token`);
    expect(seen[0]?.init.dispatcher).toBe('pool-a');
    expect(seen[1]?.url).toBe(`${BASE_URL}/api/v1/s2s/bridge/routes`);
    expect(seen[1]?.init.dispatcher).toBe('pool-b');
    expect(seen[1]?.init.method).toBe('GET');
  });

  it('ends an attempt on time even when fetch ignores the signal', async () => {
    const service = mockService();
    const fetch = (url: string, init: RequestInit) =>
      url.endsWith('/auth/token') ? service.fetch(url, init) : new Promise<Response>(() => {});
    const error = await makeClient(service, { fetch, timeoutMs: 50, maxRetries: 0 })
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
  });

  it('reports whole milliseconds in events', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': routesOk } });
    const client = makeClient(service);
    const times: number[] = [];
    client.on('response', (e) => times.push(e.elapsedMs));
    await client.bridge.routes();
    expect(times.length).toBe(2);
    for (const ms of times) expect(Number.isInteger(ms)).toBe(true);
  });
});

describe('logging', () => {
  function capture() {
    const lines: { level: string; line: string }[] = [];
    const logger = Object.fromEntries(
      ['debug', 'info', 'warn', 'error'].map((level) => [
        level,
        (line: string) => lines.push({ level, line }),
      ]),
    ) as unknown as Console;
    return { lines, logger };
  }

  it('logs nothing by default, and never through console', async () => {
    const spies = (['debug', 'info', 'warn', 'error', 'log'] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation(() => {}),
    );
    try {
      vi.stubEnv('PARTNER_S2S_LOG', '');
      const { lines, logger } = capture();
      let n = 0;
      const service = mockService({
        routes: { 'GET /bridge/routes': () => (n++ === 0 ? envelopeError(503, 'DOWN', 'x') : routesOk()) },
      });
      await makeClient(service, { logger }).bridge.routes();
      await makeClient(service).bridge.routes();
      expect(lines).toEqual([]);
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      vi.unstubAllEnvs();
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('at debug: a line per attempt with method, path, status, ms, attempt and request id; retries at info', async () => {
    const { lines, logger } = capture();
    let n = 0;
    const service = mockService({
      routes: { 'GET /bridge/routes': () => (n++ === 0 ? envelopeError(503, 'DOWN', 'x') : routesOk()) },
    });
    await makeClient(service, { logger, logLevel: 'debug' }).bridge.routes();
    const debug = lines.filter((l) => l.level === 'debug').map((l) => l.line);
    expect(debug).toContainEqual(expect.stringMatching(/GET \/bridge\/routes 503 \d+ms attempt 1/));
    expect(debug).toContainEqual(
      expect.stringMatching(/GET \/bridge\/routes 200 \d+ms attempt 2 request-id req-routes-1/),
    );
    expect(lines.filter((l) => l.level === 'info').map((l) => l.line)).toEqual([
      expect.stringMatching(
        /retrying GET \/bridge\/routes in \d+ms after attempt 1 \(ServiceUnavailableError, status 503\)/,
      ),
    ]);
  });

  it('at info: retries but no attempt lines; the level can come from PARTNER_S2S_LOG', async () => {
    vi.stubEnv('PARTNER_S2S_LOG', 'info');
    try {
      const { lines, logger } = capture();
      let n = 0;
      const service = mockService({
        routes: { 'GET /bridge/routes': () => (n++ === 0 ? envelopeError(429, 'RATE', 'x') : routesOk()) },
      });
      await makeClient(service, { logger }).bridge.routes();
      expect(lines.map((l) => l.level)).toEqual(['info']);
      expect(lines[0]?.line).toContain('RateLimitError');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('reports a refused credential at error, and a throwing logger never fails a call', async () => {
    const { lines, logger } = capture();
    const service = mockService({
      token: () => json({ error: 'invalid_client', error_description: `bad ${SECRET}` }, 401),
    });
    await expect(makeClient(service, { logger, logLevel: 'error' }).bridge.routes()).rejects.toMatchObject({
      name: 'InvalidClientError',
    });
    expect(lines.map((l) => l.level)).toEqual(['error']);
    expect(lines[0]?.line).not.toContain(SECRET);

    const throwing = {
      debug: () => {
        throw new Error('log down');
      },
      info() {},
      warn() {},
      error() {},
    };
    const ok = mockService({ routes: { 'GET /bridge/routes': routesOk } });
    expect(await makeClient(ok, { logger: throwing, logLevel: 'debug' }).bridge.routes()).toEqual([]);
  });

  it('refuses a bad level or logger before any request', () => {
    const service = mockService();
    expect(() => makeClient(service, { logLevel: 'verbose' as never })).toThrow(ArgumentError);
    expect(() => makeClient(service, { logger: { debug() {} } as never })).toThrow(ArgumentError);
  });
});

describe('withOptions', () => {
  it('shares the token cache: no second token request, and its own timeout, retries and headers', async () => {
    let n = 0;
    const service = mockService({
      routes: {
        'GET /bridge/routes': () => (n++ % 2 === 0 ? envelopeError(503, 'DOWN', 'x') : routesOk()),
      },
    });
    const client = makeClient(service, { defaultHeaders: { 'x-a': '1' }, maxRetries: 2 });
    await client.bridge.routes();
    const patient = client.withOptions({ maxRetries: 0, defaultHeaders: { 'x-b': '2' } });
    await expect(patient.bridge.routes()).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(await patient.bridge.routes()).toEqual([]);
    expect(service.count('POST /auth/token')).toBe(1);
    const last = service.calls.at(-1) as MockRequest;
    expect(last.headers.get('x-a')).toBe('1');
    expect(last.headers.get('x-b')).toBe('2');
    expect(patient.baseUrl).toBe(client.baseUrl);
    // The original keeps its own settings.
    n = 0;
    expect(await client.bridge.routes()).toEqual([]);
  });

  it('refuses what belongs to the credential', () => {
    const client = makeClient(mockService());
    for (const key of ['clientSecret', 'baseUrl', 'scope', 'tokenStore', 'fetch']) {
      expect(() => client.withOptions({ [key]: 'x' } as never)).toThrow(ArgumentError);
    }
    expect(() => client.withOptions({ timeoutMs: -1 })).toThrow(ArgumentError);
  });
});

describe('the browser guard', () => {
  it('refuses a client with a secret where window and document exist, unless allowed', () => {
    const scope = globalThis as Record<string, unknown>;
    scope.window = {};
    scope.document = {};
    try {
      const error = (() => {
        try {
          makeClient(mockService());
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ArgumentError);
      expect((error as Error).message).toContain('dangerouslyAllowBrowser');
      expect((error as Error).message).not.toContain(SECRET);
      expect(makeClient(mockService(), { dangerouslyAllowBrowser: true })).toBeInstanceOf(PartnerClient);
    } finally {
      delete scope.window;
      delete scope.document;
    }
  });
});
