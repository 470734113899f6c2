import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  InvalidClientError,
  InvalidRequestError,
  InvalidScopeError,
  MemoryTokenStore,
  OAuthError,
  PartnerClient,
  type TokenEvent,
  UnsupportedGrantTypeError,
} from '../src/index.js';
import { route } from './helpers/fixtures.js';
import { BASE_URL, json, makeClient, mockService, SECRET } from './helpers/mock-fetch.js';

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
    let issued = 0;
    const service = mockService({
      routes,
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
    // while the new one is being fetched.
    vi.setSystemTime(new Date('2026-11-22T00:50:00Z'));
    await client.bridge.routes();
    expect(issued).toBe(2);
    const lastData = service.calls.filter((call) => call.path === '/bridge/routes').at(-1)!;
    expect(lastData.headers.get('authorization')).toBe('Bearer token-1');
    releaseSecond!();
    await vi.waitFor(async () => {
      await client.bridge.routes();
      const latest = service.calls.filter((call) => call.path === '/bridge/routes').at(-1)!;
      expect(latest.headers.get('authorization')).toBe('Bearer token-2');
    });
    expect(issued).toBe(2);
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

  it('treats a 401 with a freshly issued token as final: the credential is stopped, no loop', async () => {
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
    expect(service.count('GET /bridge/routes')).toBe(1);
    expect(service.count('POST /auth/token')).toBe(1);
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
});
