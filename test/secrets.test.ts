import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ApiError,
  AuthenticationError,
  ConnectionError,
  InternalServerError,
  InvalidClientError,
  type PartnerClient,
  type PartnerError,
} from '../src/index.js';
import {
  envelopeError,
  json,
  type MockRequest,
  type MockService,
  makeClient as makeQuietClient,
  mockService,
  SECRET,
} from './helpers/mock-fetch.js';

const TOKEN = 'tok_live_0123456789abcdef';

function leaks(text: string): boolean {
  return (
    text.includes(SECRET) ||
    text.includes(TOKEN) ||
    text.includes(encodeURIComponent(SECRET)) ||
    text.includes(Buffer.from(SECRET).toString('base64'))
  );
}

/** Every line every client of this file logs, at the most detailed level. */
const logged: string[] = [];
const logger = {
  debug: (line: string) => logged.push(line),
  info: (line: string) => logged.push(line),
  warn: (line: string) => logged.push(line),
  error: (line: string) => logged.push(line),
};
const makeClient = (service: MockService, options: Parameters<typeof makeQuietClient>[1] = {}) =>
  makeQuietClient(service, { logger, logLevel: 'debug', ...options });

beforeEach(() => {
  logged.length = 0;
});

// The logger sees every path of every test here: errors, retries, refused and failed tokens.
afterEach(() => {
  expect(logged.length).toBeGreaterThan(0);
  for (const line of logged) {
    expect(leaks(line), line).toBe(false);
    expect(line).not.toMatch(/Bearer|Basic /);
  }
});

const tokenOk = () =>
  json({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600, scope: 'bridge:read' });

describe('secrets and tokens never leak', () => {
  async function collect(client: PartnerClient, call: () => Promise<unknown>) {
    const events: unknown[] = [];
    for (const name of ['request', 'response', 'retry', 'token'] as const)
      client.on(name, (event: unknown) => events.push(event));
    const error = (await call().catch((e: unknown) => e)) as PartnerError;
    return { events, error };
  }

  it.each([
    ['a 401', () => envelopeError(401, 'UNAUTHORIZED', 'bad token')],
    ['a 403', () => envelopeError(403, 'FORBIDDEN', 'scope')],
    ['a 503', () => envelopeError(503, 'DOWN', 'down')],
    ['a broken body', () => new Response('{', { status: 200 })],
    [
      'a connection error',
      () => {
        throw new TypeError('fetch failed');
      },
    ],
  ])('in errors, JSON, events and inspect after %s', async (_, respond) => {
    for (const clientAuth of ['body', 'basic'] as const) {
      const service = mockService({ token: tokenOk, routes: { 'GET /bridge/routes': respond } });
      const client = makeClient(service, { clientAuth, maxRetries: 1 });
      const { events, error } = await collect(client, () => client.bridge.routes());
      expect(error).toBeInstanceOf(Error);
      const texts = [
        error.message,
        String(error.stack),
        JSON.stringify(error),
        inspect(error, { depth: 10, showHidden: true }),
        JSON.stringify(events),
        inspect(client, { depth: 10, showHidden: true }),
        JSON.stringify(client),
      ];
      for (const text of texts) expect(leaks(text), text).toBe(false);
    }
  });

  it('in OAuth errors of the token endpoint', async () => {
    const service = mockService({
      token: () => json({ error: 'invalid_client', error_description: 'unknown client' }, 401),
    });
    const client = makeClient(service, { clientAuth: 'basic' });
    const { events, error } = await collect(client, () => client.bridge.routes());
    expect(error.name).toBe('InvalidClientError');
    for (const text of [JSON.stringify(error), inspect(error, { depth: 10 }), JSON.stringify(events)]) {
      expect(leaks(text)).toBe(false);
    }
  });

  it('in a token response that does not validate', async () => {
    const service = mockService({
      token: () => json({ access_token: TOKEN, token_type: 'MAC', expires_in: 3600 }),
    });
    const client = makeClient(service);
    const { error } = await collect(client, () => client.bridge.routes());
    expect(error.name).toBe('ResponseValidationError');
    expect(leaks(inspect(error, { depth: 10 }))).toBe(false);
  });
});

describe('a server that echoes the request never puts a secret into an error', () => {
  const form = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  const basic = () => Buffer.from(`${form('client-1')}:${form(SECRET)}`).toString('base64');
  /** Everything a request carried that may be secret, as a gateway would echo it back. */
  const echo = (request: MockRequest) =>
    `got ${request.body} with ${request.headers.get('authorization') ?? ''} (${SECRET})`;

  function texts(error: unknown) {
    const e = error as PartnerError;
    return [e.message, String(e.stack), JSON.stringify(e), inspect(e, { depth: Infinity, showHidden: true })];
  }
  function leaksAny(text: string, extra: string[]) {
    return leaks(text) || [form(SECRET), ...extra].some((secret) => text.includes(secret));
  }

  it.each(['body', 'basic'] as const)(
    'in error_description of the token endpoint (%s)',
    async (clientAuth) => {
      const service = mockService({
        token: (request) => json({ error: 'invalid_client', error_description: echo(request) }, 401),
      });
      const client = makeClient(service, { clientAuth });
      const error = await client.bridge.routes().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidClientError);
      for (const text of texts(error)) expect(leaksAny(text, [basic()]), text).toBe(false);
      expect((error as InvalidClientError).errorDescription).toContain('got');
    },
  );

  it.each(['body', 'basic'] as const)('in a 500 message of the token endpoint (%s)', async (clientAuth) => {
    const service = mockService({
      token: (request) =>
        json(
          { statusCode: 500, error: 'Internal', code: 'ECHO', message: echo(request), seen: echo(request) },
          500,
        ),
    });
    const error = await makeClient(service, { clientAuth, maxRetries: 0 })
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500 });
    for (const text of texts(error)) expect(leaksAny(text, [basic()]), text).toBe(false);
  });

  it('in a 500 message and extra fields of a data endpoint', async () => {
    const service = mockService({
      token: tokenOk,
      routes: {
        'GET /bridge/routes': (request) =>
          json(
            {
              statusCode: 500,
              error: 'Internal',
              code: 'ECHO',
              message: echo(request),
              seen: [echo(request)],
            },
            500,
          ),
      },
    });
    const error = await makeClient(service, { maxRetries: 0 })
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500 });
    for (const text of texts(error)) expect(leaksAny(text, []), text).toBe(false);
  });

  /** `{"k":{"k":…value…}}`, `depth` objects deep. */
  const nest = (depth: number, value: unknown): unknown =>
    Array.from({ length: depth }).reduce<unknown>((inner) => ({ k: inner }), value);

  it.each([
    ['a data endpoint', 'GET /bridge/routes'],
    ['the token endpoint', 'token'],
  ])('in an extra field of %s nested 40 levels deep', async (_, where) => {
    const answer = (request: MockRequest) =>
      json(
        {
          statusCode: 500,
          error: 'Internal',
          code: 'ECHO',
          message: 'echo',
          seen: nest(40, { echoed: echo(request), [echo(request)]: 1 }),
          shallow: nest(3, 'kept'),
        },
        500,
      );
    const service = mockService(
      where === 'token' ? { token: answer } : { token: tokenOk, routes: { 'GET /bridge/routes': answer } },
    );
    const error = (await makeClient(service, { clientAuth: 'basic', maxRetries: 0 })
      .bridge.routes()
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ status: 500, code: 'ECHO' });
    for (const text of [
      ...texts(error),
      JSON.stringify(error.details),
      inspect(error.details, { depth: Infinity }),
    ])
      expect(leaksAny(text, [basic()]), text).toBe(false);
    // Past the bound the rest is replaced, not kept; nearer fields are as sent.
    expect(JSON.stringify(error.details)).toContain('"[truncated]"');
    expect(error.details.shallow).toEqual(nest(3, 'kept'));
  });

  it('in a body nested 100,000 levels deep: a typed error whose toJSON is bounded', async () => {
    const depth = 100_000;
    // Built as text: serialising so deep a value would itself overflow the stack.
    const body = `{"statusCode":500,"error":"Internal","code":"DEEP","message":"deep","echo":${'{"k":'.repeat(depth)}"${TOKEN}"${'}'.repeat(depth)},"arr":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const service = mockService({
      token: tokenOk,
      routes: {
        'GET /bridge/routes': () =>
          new Response(body, { status: 500, headers: { 'content-type': 'application/json' } }),
      },
    });
    const error = (await makeClient(service, { maxRetries: 0 })
      .bridge.routes()
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.code).toBe('DEEP');
    const logged = JSON.stringify(error.toJSON());
    expect(logged.length).toBeLessThan(10_000);
    for (const text of [...texts(error), logged]) expect(leaks(text), text).toBe(false);
  });

  it('in the error_description of a WWW-Authenticate challenge', async () => {
    const service = mockService({
      token: tokenOk,
      routes: {
        'GET /bridge/routes': (request) =>
          json({ statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message: 'no' }, 401, {
            'www-authenticate': `Bearer error="invalid_token", error_description="${request.headers.get('authorization')}"`,
          }),
      },
    });
    const error = await makeClient(service)
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    for (const text of texts(error)) expect(leaksAny(text, []), text).toBe(false);
  });

  it('in the cause of a ConnectionError whose fetch threw something holding the Request', async () => {
    for (const clientAuth of ['body', 'basic'] as const) {
      const service = mockService({
        token: tokenOk,
        routes: { 'GET /bridge/routes': () => json({ data: [] }) },
      });
      const fetch = async (input: Request | URL | string, init?: RequestInit) => {
        const request = new Request(input, init);
        if (new URL(request.url).pathname.endsWith('/auth/token') && clientAuth === 'basic') {
          const error = Object.assign(
            new TypeError(`fetch failed for ${request.headers.get('authorization')}`),
            {
              request,
              code: 'ECONNRESET',
            },
          );
          throw error;
        }
        if (new URL(request.url).pathname.endsWith('/bridge/routes')) {
          throw Object.assign(new TypeError(`fetch failed: ${request.headers.get('authorization')}`), {
            request,
            headers: Object.fromEntries(request.headers),
            code: 'ECONNRESET',
          });
        }
        return service.fetch(request);
      };
      const error = await makeClient(service, { clientAuth, fetch, maxRetries: 0 })
        .bridge.routes()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      for (const text of texts(error)) expect(leaksAny(text, [basic()]), text).toBe(false);
      const cause = (error as ConnectionError).cause as Record<string, unknown>;
      expect(cause).toMatchObject({ name: 'TypeError', code: 'ECONNRESET' });
      expect(cause.request).toBeUndefined();
    }
  });
});
