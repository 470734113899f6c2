import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { route } from '../../fixtures/wire.js';
import {
  AuthenticationError,
  ConnectionError,
  InvalidClientError,
  InvalidRequestError,
  InvalidScopeError,
  MemoryTokenStore,
  OAuthError,
  PartnerClient,
  ResponseValidationError,
  type TokenEvent,
  UnsupportedGrantTypeError,
} from '../../src/index.js';
import { BASE_URL, json, makeClient, mockService, SECRET } from '../helpers/mock-fetch.js';

const routes = { 'GET /bridge/routes': () => json({ data: [route()] }) };

afterEach(() => {
  vi.useRealTimers();
});

describe('token request', () => {
  it('sends the credential in a form body by default', async () => {
    const service = mockService({ routes });
    await makeClient(service, { scope: ['bridge:read', 'transactions:write'] }).bridge.routes();
    const tokenCall = service.calls[0]!;
    expect(tokenCall.path).toBe('/auth/token');
    expect(tokenCall.method).toBe('POST');
    expect(tokenCall.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(tokenCall.headers.get('authorization')).toBeNull();
    const form = new URLSearchParams(tokenCall.body);
    expect(form.get('grant_type')).toBe('client_credentials');
    expect(form.get('client_id')).toBe('client-1');
    expect(form.get('client_secret')).toBe(SECRET);
    expect(form.get('scope')).toBe('bridge:read transactions:write');
  });

  it('sends HTTP Basic with RFC 6749 2.3.1 encoding, so any character in a secret survives', async () => {
    const service = mockService({ routes });
    const clientId = 'id:with+odd/chars';
    await makeClient(service, { clientAuth: 'basic', clientId, scope: 'bridge:read' }).bridge.routes();
    const tokenCall = service.calls[0]!;
    const header = tokenCall.headers.get('authorization')!;
    expect(header.startsWith('Basic ')).toBe(true);
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const [user, password] = decoded.split(':');
    // Each side is form-encoded: a ':' in the id or secret cannot split the pair wrongly.
    expect(decodeURIComponent(user!.replace(/\+/g, ' '))).toBe(clientId);
    expect(decodeURIComponent(password!.replace(/\+/g, ' '))).toBe(SECRET);
    const form = new URLSearchParams(tokenCall.body);
    expect(form.get('client_id')).toBeNull();
    expect(form.get('client_secret')).toBeNull();
    expect(form.get('scope')).toBe('bridge:read');
  });

  it('omits scope when none is asked for', async () => {
    const service = mockService({ routes });
    await makeClient(service).bridge.routes();
    expect(new URLSearchParams(service.calls[0]!.body).has('scope')).toBe(false);
  });

  it('sends the bearer token on data calls', async () => {
    const service = mockService({ routes });
    await makeClient(service).bridge.routes();
    expect(service.calls[1]!.headers.get('authorization')).toBe('Bearer token-1');
  });
});

describe('token cache', () => {
  it('makes one token request for 200 concurrent calls on a cold client', async () => {
    const service = mockService({ routes });
    const client = makeClient(service);
    const results = await Promise.all(Array.from({ length: 200 }, () => client.bridge.routes()));
    expect(results).toHaveLength(200);
    expect(service.count('POST /auth/token')).toBe(1);
    expect(service.count('GET /bridge/routes')).toBe(200);
  });

  it('reuses the token until refresh is due, then refreshes in the background without making callers wait', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T00:00:00Z'));
    let releaseSecond: (() => void) | undefined;
    let releaseRoute: (() => void) | undefined;
    let holdRoute = false;
    let issued = 0;
    const service = mockService({
      routes: {
        'GET /bridge/routes': async () => {
          if (holdRoute) {
            holdRoute = false;
            await new Promise<void>((resolve) => (releaseRoute = resolve));
          }
          return json({ data: [route()] });
        },
      },
      token: async () => {
        issued++;
        if (issued === 2) await new Promise<void>((resolve) => (releaseSecond = resolve));
        return json({
          access_token: `token-${issued}`,
          token_type: 'Bearer',
          expires_in: 3600,
          scope: 'bridge:read',
        });
      },
    });
    const client = makeClient(service);
    await client.bridge.routes();
    vi.setSystemTime(new Date('2026-11-22T00:40:00Z'));
    await client.bridge.routes();
    expect(issued).toBe(1);

    // 50 minutes in: past the refresh point, still valid. The call goes out with the cached token
    // while the new one is being fetched; the refresh runs as long as a call is under way.
    vi.setSystemTime(new Date('2026-11-22T00:50:00Z'));
    holdRoute = true;
    const slow = client.bridge.routes();
    await vi.waitFor(() => expect(releaseRoute).toBeDefined());
    expect(issued).toBe(2);
    const lastData = service.calls.filter((call) => call.path === '/bridge/routes').at(-1)!;
    expect(lastData.headers.get('authorization')).toBe('Bearer token-1');
    releaseSecond!();
    await vi.waitFor(async () => {
      await client.bridge.routes();
      const latest = service.calls.filter((call) => call.path === '/bridge/routes').at(-1)!;
      expect(latest.headers.get('authorization')).toBe('Bearer token-2');
    });
    releaseRoute!();
    await slow;
    expect(issued).toBe(2);
  });

  it('a background refresh outlives the call that started it, bounded by timeoutMs', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T00:00:00Z'));
    const service = mockService({
      routes,
      token: () =>
        service.count('POST /auth/token') === 1
          ? json({ access_token: 'token-1', token_type: 'Bearer', expires_in: 3600 })
          : new Promise<Response>(() => {}),
    });
    const client = makeClient(service, { timeoutMs: 200 });
    const events: TokenEvent[] = [];
    client.on('token', (event) => events.push(event));
    await client.bridge.routes();
    vi.setSystemTime(new Date('2026-11-22T00:50:00Z'));
    await client.bridge.routes();
    // Not aborted when its call ended (that says nothing: the token would be thrown away), and not
    // left hanging either: the token request's own time ends it. (Waited for generously: a loaded
    // machine may fire a 200 ms timer late.)
    await vi.waitFor(() => expect(events.map((event) => [event.action, event.error])).toHaveLength(2), {
      timeout: 10_000,
    });
    expect(events.map((event) => [event.action, event.error])).toEqual([
      ['fetched', undefined],
      ['failed', 'TimeoutError'],
    ]);
    // The cached token still serves calls, and the next refresh waits out the failed one's pause.
    await client.bridge.routes();
    expect(service.count('POST /auth/token')).toBe(2);
  });

  it('takes expires_in as authoritative', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T00:00:00Z'));
    const service = mockService({ routes, expiresIn: 120 });
    const client = makeClient(service);
    await client.bridge.routes();
    vi.setSystemTime(new Date('2026-11-22T00:01:30Z'));
    await client.bridge.routes(); // within 120 s: background refresh may start, no wait
    vi.setSystemTime(new Date('2026-11-22T00:02:30Z'));
    await client.bridge.routes(); // past expiry: a new token is needed
    const last = service.calls.filter((call) => call.path === '/bridge/routes').at(-1)!;
    expect(last.headers.get('authorization')).not.toBe('Bearer token-1');
  });

  it('relies on a huge expires_in for a day at most, and stores a finite expiry', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T00:00:00Z'));
    const tokenStore = new MemoryTokenStore();
    const stored: number[] = [];
    const store = {
      get: (key: string) => tokenStore.get(key),
      delete: (key: string) => tokenStore.delete(key),
      set: (key: string, token: Parameters<MemoryTokenStore['set']>[1]) => {
        stored.push(token.expiresAt);
        return tokenStore.set(key, token);
      },
    };
    const service = mockService({ routes, expiresIn: 1e308 });
    const client = makeClient(service, { tokenStore: store });
    const events: TokenEvent[] = [];
    client.on('token', (event) => events.push(event));
    await client.bridge.routes();
    expect(stored).toEqual([Date.parse('2026-11-23T00:00:00Z')]);
    expect(events[0]!.expiresInSec).toBe(86_400);
    vi.setSystemTime(new Date('2026-11-22T12:00:00Z'));
    await client.bridge.routes();
    expect(service.count('POST /auth/token')).toBe(1);
    vi.setSystemTime(new Date('2026-11-23T00:00:01Z'));
    await client.bridge.routes();
    expect(service.count('POST /auth/token')).toBe(2);
  });

  it('treats a token store that fails as empty: calls still succeed and keep their own token', async () => {
    const service = mockService({ routes });
    const failing = {
      get: async () => {
        throw new Error('store down');
      },
      set: async () => {
        throw new Error('store down');
      },
      delete: async () => {
        throw new Error('store down');
      },
    };
    const client = makeClient(service, { tokenStore: failing });
    await client.bridge.routes();
    await client.bridge.routes();
    expect(service.count('POST /auth/token')).toBe(1);
  });

  it('ignores what a token store holds when it is not a token', async () => {
    for (const held of [
      { accessToken: 'has space', expiresAt: Date.now() + 3_600_000, issuedAt: Date.now(), scopes: [] },
      { accessToken: 'ok', expiresAt: '2099-01-01', issuedAt: Date.now(), scopes: [] },
      { accessToken: 'ok', expiresAt: Number.POSITIVE_INFINITY, issuedAt: 0, scopes: [] },
      'a string',
      null,
    ]) {
      const service = mockService({ routes });
      const tokenStore = { get: async () => held as never, set: async () => {}, delete: async () => {} };
      await makeClient(service, { tokenStore }).bridge.routes();
      expect(service.calls.at(-1)!.headers.get('authorization'), JSON.stringify(held)).toBe('Bearer token-1');
    }
  });

  it('passes over a token store that hangs', async () => {
    vi.useFakeTimers();
    const service = mockService({ routes });
    const hanging = {
      get: () => new Promise<undefined>(() => {}),
      set: () => new Promise<void>(() => {}),
      delete: () => new Promise<void>(() => {}),
    };
    const pending = makeClient(service, { tokenStore: hanging }).bridge.routes();
    await vi.advanceTimersByTimeAsync(2_000);
    await vi.advanceTimersByTimeAsync(2_000);
    await expect(pending).resolves.toHaveLength(1);
    expect(service.count('POST /auth/token')).toBe(1);
  });

  it('shares one token between clients through a token store', async () => {
    const service = mockService({ routes });
    const tokenStore = new MemoryTokenStore();
    await makeClient(service, { tokenStore }).bridge.routes();
    await makeClient(service, { tokenStore }).bridge.routes();
    expect(service.count('POST /auth/token')).toBe(1);
    expect(service.calls.at(-1)!.headers.get('authorization')).toBe('Bearer token-1');
  });

  it('a store with a lock lets concurrent cold clients make one token request', async () => {
    const service = mockService({ routes });
    const tokenStore = new MemoryTokenStore();
    let held = false;
    const locking = {
      get: (key: string) => tokenStore.get(key),
      set: (key: string, token: Parameters<MemoryTokenStore['set']>[1]) => tokenStore.set(key, token),
      delete: (key: string) => tokenStore.delete(key),
      lock: async () => {
        if (held) return { acquired: false as const };
        held = true;
        return { acquired: true as const, release: async () => void (held = false) };
      },
    };
    // Without the lock each of these clients (processes, in a fleet) fetches its own token.
    const clients = Array.from({ length: 5 }, () => makeClient(service, { tokenStore: locking }));
    await Promise.all(clients.map((client) => client.bridge.routes()));
    expect(service.count('POST /auth/token')).toBe(1);
  });

  it('a lock holder that never stores a token delays the others, then they fetch their own', async () => {
    vi.useFakeTimers();
    const service = mockService({ routes });
    const tokenStore = new MemoryTokenStore();
    const locking = {
      get: (key: string) => tokenStore.get(key),
      set: (key: string, token: Parameters<MemoryTokenStore['set']>[1]) => tokenStore.set(key, token),
      delete: (key: string) => tokenStore.delete(key),
      lock: async () => ({ acquired: false as const }),
    };
    const pending = makeClient(service, { tokenStore: locking }).bridge.routes();
    await vi.advanceTimersByTimeAsync(6_000);
    await expect(pending).resolves.toHaveLength(1);
    expect(service.count('POST /auth/token')).toBe(1);
  });

  it('emits a token event without the token', async () => {
    const service = mockService({ routes });
    const client = makeClient(service);
    const events: TokenEvent[] = [];
    client.on('token', (event) => events.push(event));
    await client.bridge.routes();
    expect(events).toEqual([
      expect.objectContaining({
        action: 'fetched',
        scopes: ['bridge:read', 'transactions:write'],
        expiresInSec: 3600,
      }),
    ]);
    expect(JSON.stringify(events)).not.toContain('token-1');
  });

  it('reads the granted scopes from the token', async () => {
    const service = mockService({ routes, scope: 'bridge:read users:read' });
    expect(await makeClient(service).getScopes()).toEqual(['bridge:read', 'users:read']);
  });
});

describe('401 handling', () => {
  it('invalidates the token and replays the request once', async () => {
    let first = true;
    const service = mockService({
      routes: {
        'GET /bridge/routes': (request) => {
          if (first && request.headers.get('authorization') === 'Bearer token-1') {
            return json(
              { statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message: 'expired' },
              401,
              {
                'www-authenticate': 'Bearer error="invalid_token"',
              },
            );
          }
          return json({ data: [route()] });
        },
      },
    });
    const client = makeClient(service);
    await client.getScopes(); // token-1 cached: the next call does not use a just-issued token
    first = true;
    const routesRead = await client.bridge.routes();
    expect(routesRead).toHaveLength(1);
    expect(service.count('POST /auth/token')).toBe(2);
    expect(service.count('GET /bridge/routes')).toBe(2);
    expect(service.calls.at(-1)!.headers.get('authorization')).toBe('Bearer token-2');
  });

  it('treats a 401 with the token fetched after its own 401 as final: the credential is stopped, no loop', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': () =>
          json({ statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message: 'revoked' }, 401, {
            'www-authenticate': 'Bearer error="invalid_token"',
          }),
      },
    });
    const client = makeClient(service);
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).credentialStopped).toBe(true);
    expect((error as AuthenticationError).invalidToken).toBe(true);
    expect((error as Error).message).toMatch(/credential or its organisation is stopped/);
    // The first token was shared with any caller of a cold client: only a second one, fetched
    // after this call's own 401, tells a revoked token from a stopped credential.
    expect(service.count('GET /bridge/routes')).toBe(2);
    expect(service.count('POST /auth/token')).toBe(2);
  });

  it('replays at most once when a cached token and the new one are both rejected', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': () =>
          json({ statusCode: 401, error: 'Unauthorized', code: 'X', message: 'no' }, 401),
      },
    });
    const client = makeClient(service);
    await client.getScopes();
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).credentialStopped).toBe(true);
    expect(service.count('GET /bridge/routes')).toBe(2);
    expect(service.count('POST /auth/token')).toBe(2);
  });
});

describe('token endpoint errors', () => {
  it.each([
    [401, 'invalid_client', InvalidClientError],
    [400, 'invalid_scope', InvalidScopeError],
    [400, 'unsupported_grant_type', UnsupportedGrantTypeError],
    [400, 'invalid_request', InvalidRequestError],
  ] as const)('%i %s becomes its OAuth class', async (status, code, Class) => {
    const service = mockService({ token: () => json({ error: code, error_description: 'nope' }, status) });
    const error = await makeClient(service)
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(OAuthError);
    expect((error as OAuthError).error).toBe(code);
    expect((error as OAuthError).errorDescription).toBe('nope');
    expect((error as OAuthError).status).toBe(status);
    expect(service.count('POST /auth/token')).toBe(1);
    expect(service.count('GET /bridge/routes')).toBe(0);
  });

  it('keeps an unknown OAuth error code', async () => {
    const service = mockService({ token: () => json({ error: 'slow_down' }, 400) });
    const error = await makeClient(service)
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect((error as OAuthError).error).toBe('slow_down');
  });

  it('rejects a token response without a usable token', async () => {
    const service = mockService({ token: () => json({ token_type: 'Bearer', expires_in: 3600 }) });
    await expect(makeClient(service).bridge.routes()).rejects.toMatchObject({
      name: 'ResponseValidationError',
    });
  });
});

describe('construction', () => {
  it.each([
    [{ baseUrl: 'not a url' }, 'baseUrl'],
    [{ baseUrl: 'ftp://x.test' }, 'baseUrl'],
    [{ clientId: '' }, 'clientId'],
    [{ clientSecret: 42 }, 'clientSecret'],
    [{ scope: ['bridge read'] }, 'scope'],
    [{ clientAuth: 'header' }, 'clientAuth'],
    [{ timeoutMs: -1 }, 'timeoutMs'],
    [{ maxRetries: 1.5 }, 'maxRetries'],
    [{ fetch: 'nope' }, 'fetch'],
    [{ tokenStore: {} }, 'tokenStore'],
    [{ retries: 3 }, ''],
  ])('rejects %o with an ArgumentError naming %s', (override, path) => {
    const make = () =>
      new PartnerClient({
        baseUrl: BASE_URL,
        clientId: 'c',
        clientSecret: SECRET,
        ...(override as object),
      } as never);
    expect(make).toThrowError(
      expect.objectContaining({
        name: 'ArgumentError',
        issues: expect.arrayContaining([expect.objectContaining({ path })]),
      }),
    );
  });

  it('takes a base URL with or without the API prefix and trailing slash', () => {
    for (const baseUrl of [
      'https://p.test',
      'https://p.test/',
      'https://p.test/api/v1/s2s',
      'https://p.test/api/v1/s2s/',
    ]) {
      expect(new PartnerClient({ baseUrl, clientId: 'c', clientSecret: 's' }).baseUrl).toBe('https://p.test');
    }
  });

  it('on, once and off refuse an unknown event or a listener that is no function', () => {
    const client = new PartnerClient({ baseUrl: BASE_URL, clientId: 'c', clientSecret: SECRET });
    for (const method of ['on', 'once', 'off'] as const) {
      // A typo would otherwise never fire, and a non-function would throw inside the emitter later.
      expect(() => client[method]('reponse' as never, (() => {}) as never)).toThrowError(
        expect.objectContaining({
          name: 'ArgumentError',
          issues: [expect.objectContaining({ path: 'event' })],
        }),
      );
      expect(() => client[method]('retry', 'log' as never)).toThrowError(
        expect.objectContaining({
          name: 'ArgumentError',
          issues: [expect.objectContaining({ path: 'listener' })],
        }),
      );
    }
    const listener = () => {};
    expect(client.on('retry', listener).off('retry', listener)).toBe(client);
  });
});

const unauthorized = (message = 'revoked') =>
  json({ statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message }, 401, {
    'www-authenticate': 'Bearer error="invalid_token"',
  });

describe('one revoked token is not a stopped credential', () => {
  it('200 calls sharing a cold token that is revoked once all replay once and succeed', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': (request) =>
          request.headers.get('authorization') === 'Bearer token-1'
            ? unauthorized()
            : json({ data: [route()] }),
      },
    });
    const client = makeClient(service);
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => client.bridge.routes()));
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    expect(service.count('POST /auth/token')).toBe(2);
    expect(service.count('GET /bridge/routes')).toBe(400);
  });

  it('a 401 with the token this call waited for on a cold client is replayed once', async () => {
    let rejectNext = true;
    const service = mockService({
      routes: {
        'GET /bridge/routes': () => {
          if (!rejectNext) return json({ data: [route()] });
          rejectNext = false;
          return unauthorized();
        },
      },
    });
    await expect(makeClient(service).bridge.routes()).resolves.toHaveLength(1);
    expect(service.count('GET /bridge/routes')).toBe(2);
  });
});

describe('a stopped credential stops asking', () => {
  it('after credentialStopped, calls fail at once for a window that doubles; a success ends it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-23T00:00:00Z'));
    let accepted = false;
    const service = mockService({
      routes: { 'GET /bridge/routes': () => (accepted ? json({ data: [route()] }) : unauthorized()) },
    });
    const client = makeClient(service);
    const events: TokenEvent[] = [];
    client.on('token', (event) => events.push(event));
    const first = (await client.bridge.routes().catch((e: unknown) => e)) as AuthenticationError;
    expect(first).toBeInstanceOf(AuthenticationError);
    expect(first.credentialStopped).toBe(true);
    expect(first.retryAfterMs).toBe(1_000);
    expect(events.at(-1)).toMatchObject({ action: 'failed', retryAfterMs: 1_000 });
    const sent = service.calls.length;

    for (let i = 0; i < 50; i++) {
      const again = (await client.bridge.routes().catch((e: unknown) => e)) as AuthenticationError;
      expect(again).toBeInstanceOf(AuthenticationError);
      expect(again.credentialStopped).toBe(true);
      expect(again.retryAfterMs).toBeGreaterThan(0);
      expect(again.retryAfterMs).toBeLessThanOrEqual(1_000);
    }
    await expect(client.getScopes()).rejects.toBeInstanceOf(AuthenticationError);
    expect(service.calls.length).toBe(sent);

    // The window is over: one call probes, fails, and the next window is twice as long.
    vi.setSystemTime(new Date('2026-11-23T00:00:01.001Z'));
    const probe = (await client.bridge.routes().catch((e: unknown) => e)) as AuthenticationError;
    expect(probe.credentialStopped).toBe(true);
    expect(probe.retryAfterMs).toBe(2_000);
    expect(service.calls.length).toBeGreaterThan(sent);
    const afterProbe = service.calls.length;
    await expect(client.bridge.routes()).rejects.toMatchObject({ retryAfterMs: 2_000 });
    expect(service.calls.length).toBe(afterProbe);

    // The credential works again: the next probe succeeds and every later call goes through.
    accepted = true;
    vi.setSystemTime(new Date('2026-11-23T00:00:03.002Z'));
    await expect(client.bridge.routes()).resolves.toHaveLength(1);
    await expect(client.bridge.routes()).resolves.toHaveLength(1);
  });

  it('the window grows to 60 s at most', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let now = Date.parse('2026-11-23T00:00:00Z');
    vi.setSystemTime(now);
    const service = mockService({ token: () => json({ error: 'invalid_client' }, 401) });
    const client = makeClient(service);
    const windows: number[] = [];
    for (let i = 0; i < 9; i++) {
      const error = (await client.bridge.routes().catch((e: unknown) => e)) as InvalidClientError;
      windows.push(error.retryAfterMs!);
      now += error.retryAfterMs! + 1;
      vi.setSystemTime(now);
    }
    expect(windows).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    expect(service.count('POST /auth/token')).toBe(9);
  });

  it('after invalid_client, 200 calls make one token request; the event and error show the window', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-23T00:00:00Z'));
    let valid = false;
    const service = mockService({
      routes,
      token: () =>
        valid
          ? json({ access_token: 'token-ok', token_type: 'Bearer', expires_in: 3600 })
          : json({ error: 'invalid_client', error_description: 'unknown client' }, 401),
    });
    const client = makeClient(service);
    const events: TokenEvent[] = [];
    client.on('token', (event) => events.push(event));
    const errors: unknown[] = [];
    for (let i = 0; i < 200; i++) errors.push(await client.bridge.routes().catch((e: unknown) => e));
    expect(errors.every((error) => error instanceof InvalidClientError)).toBe(true);
    expect((errors[0] as InvalidClientError).retryAfterMs).toBe(1_000);
    expect((errors[199] as InvalidClientError).retryAfterMs).toBeLessThanOrEqual(1_000);
    expect(service.count('POST /auth/token')).toBe(1);
    expect(service.count('GET /bridge/routes')).toBe(0);
    expect(events).toEqual([expect.objectContaining({ action: 'failed', retryAfterMs: 1_000 })]);

    valid = true;
    vi.setSystemTime(new Date('2026-11-23T00:00:01.001Z'));
    await expect(client.bridge.routes()).resolves.toHaveLength(1);
    await expect(client.bridge.routes()).resolves.toHaveLength(1);
    expect(service.count('POST /auth/token')).toBe(2);
  });

  it('while one call probes, the others fail at once instead of probing too', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-23T00:00:00Z'));
    let release: (() => void) | undefined;
    let calls = 0;
    const service = mockService({
      token: async () => {
        calls++;
        if (calls === 2) await new Promise<void>((resolve) => (release = resolve));
        return json({ error: 'invalid_client' }, 401);
      },
    });
    const client = makeClient(service);
    await client.bridge.routes().catch(() => {});
    vi.setSystemTime(new Date('2026-11-23T00:00:01.001Z'));
    const probe = client.bridge.routes().catch((e: unknown) => e);
    await vi.waitFor(() => expect(release).toBeDefined());
    const others = await Promise.all(
      Array.from({ length: 20 }, () => client.bridge.routes().catch((e: unknown) => e)),
    );
    expect(others.every((error) => error instanceof InvalidClientError)).toBe(true);
    expect(service.count('POST /auth/token')).toBe(2);
    release!();
    expect(await probe).toMatchObject({ retryAfterMs: 2_000 });
  });
});

describe('bad token answers', () => {
  it('refuses a 1 MiB access token as a ResponseValidationError and sends nothing with it', async () => {
    const service = mockService({
      routes,
      token: () => json({ access_token: 'a'.repeat(1024 * 1024), token_type: 'Bearer', expires_in: 3600 }),
    });
    const error = await makeClient(service, { maxRetries: 0 })
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(service.count('GET /bridge/routes')).toBe(0);
  });

  it.each([
    ['an empty object', {}],
    ['undefined', undefined],
    ['a string', 'ok'],
    ['an object with a status', { status: 200, headers: {} }],
  ])('a fetch that resolves to %s is a ConnectionError', async (_, value) => {
    const client = makeClient(mockService(), { fetch: (async () => value) as never, maxRetries: 0 });
    await expect(client.me()).rejects.toBeInstanceOf(ConnectionError);
    await expect(client.getScopes()).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe('URLs and ids', () => {
  const make = (baseUrl: string, extra: object = {}) =>
    new PartnerClient({ baseUrl, clientId: 'c', clientSecret: SECRET, ...extra });

  it.each(['http://partner.example.com', 'http://10.0.0.5:8080', 'http://simulator.local'])(
    'refuses plain http to %s unless allowInsecureHttp is true',
    (baseUrl) => {
      expect(() => make(baseUrl)).toThrowError(
        expect.objectContaining({
          name: 'ArgumentError',
          message: expect.stringContaining('allowInsecureHttp'),
        }),
      );
      expect(make(baseUrl, { allowInsecureHttp: true }).baseUrl).toBe(new URL(baseUrl).origin);
    },
  );

  it.each(['http://127.0.0.1:3000', 'http://localhost:3000', 'http://[::1]:3000', 'http://sim.localhost'])(
    'takes plain http to the loopback host %s',
    (baseUrl) => {
      expect(make(baseUrl).baseUrl).toBe(baseUrl);
    },
  );

  it.each([
    'https://user:pw@partner.test',
    'https://:pw@partner.test',
    'https://user@partner.test',
    'https://partner.test/a?',
    'https://partner.test/a?x=1',
    'https://partner.test/a#',
    'https://partner.test/a#frag',
  ])('refuses %s', (baseUrl) => {
    let error: unknown;
    try {
      make(baseUrl);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ name: 'ArgumentError' });
    expect(inspect(error, { depth: Infinity })).not.toContain('pw');
  });

  it('builds the base from the parsed URL', () => {
    expect(make('HTTPS://Partner.TEST:443/base/').baseUrl).toBe('https://partner.test/base');
  });

  it.each(['.', '..', 'a/b', '/', '%2e%2e', 'a\\b'])(
    'checks the transfer id %j before any request',
    async (transferId) => {
      const service = mockService({ routes: { 'GET *': () => json({ data: {} }) } });
      const client = makeClient(service);
      await expect(client.bridge.transfers.get({ userId: 'u', transferId })).rejects.toMatchObject({
        name: 'ArgumentError',
        issues: [expect.objectContaining({ path: 'transferId' })],
      });
      await expect(client.bridge.transfers.wait({ userId: 'u', transferId })).rejects.toMatchObject({
        name: 'ArgumentError',
      });
      expect(service.calls).toEqual([]);
    },
  );
});

describe('shared token store keys', () => {
  it('a client with the same id but a wrong secret is never handed the other client token', async () => {
    const tokenStore = new MemoryTokenStore();
    const keys: string[] = [];
    const store = {
      get: (key: string) => {
        keys.push(key);
        return tokenStore.get(key);
      },
      set: (key: string, token: Parameters<MemoryTokenStore['set']>[1]) => tokenStore.set(key, token),
      delete: (key: string) => tokenStore.delete(key),
    };
    const service = mockService({ routes });
    await makeClient(service, { tokenStore: store }).bridge.routes();
    await makeClient(service, { tokenStore: store, clientSecret: 'wrong' }).bridge.routes();
    expect(service.count('POST /auth/token')).toBe(2);
    expect(keys.some((key) => key.includes(SECRET) || key.includes('wrong'))).toBe(false);
  });

  it('keys cannot collide through a separator inside a part', async () => {
    const tokenStore = new MemoryTokenStore();
    const service = mockService({ routes });
    await makeClient(service, { tokenStore, clientId: 'a:b', scope: 'c' }).bridge.routes();
    await makeClient(service, { tokenStore, clientId: 'a', scope: 'b:c' }).bridge.routes();
    expect(service.count('POST /auth/token')).toBe(2);
  });
});

describe('a call that is never repeated still gets its token under the retry policy', () => {
  it('a submit whose token request meets one 503 is sent once and succeeds', async () => {
    let tokenCalls = 0;
    const service = mockService({
      token: () => {
        tokenCalls++;
        if (tokenCalls === 1)
          return json({ statusCode: 503, error: 'Unavailable', code: 'DOWN', message: 'down' }, 503);
        return json({ access_token: 'token-ok', token_type: 'Bearer', expires_in: 3600 });
      },
      routes: {
        'POST /bridge/transaction/batch/send': () =>
          json({ data: { userOpHash: `0x${'ab'.repeat(32)}`, transferId: 'tr_1' } }),
      },
    });
    const result = await makeClient(service).bridge.send({
      userId: 'u',
      intentId: 'i',
      signature: `0xff00${'11'.repeat(64)}1b`,
    });
    expect(result.transferId).toBe('tr_1');
    expect(service.count('POST /auth/token')).toBe(2);
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
  });
});
