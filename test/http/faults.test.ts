import type { ServerResponse } from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { route, transfer } from '../../fixtures/wire.js';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  InternalServerError,
  InvalidClientError,
  isPartnerError,
  PartnerClient,
  type PartnerClientOptions,
  RateLimitError,
  ResponseValidationError,
  ServiceUnavailableError,
  SubmitOutcomeUnknownError,
  TimeoutError,
} from '../../src/index.js';
import { freshConstruct } from '../helpers/batches.js';
import { faultServer, jsonReply, token } from '../helpers/fault-server.js';

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
    timeoutMs: 300,
    retry: { minDelayMs: 5, maxDelayMs: 20, maxRetryTimeMs: 5_000 },
    ...options,
  });
  return { server, client };
}

const routesBody = JSON.stringify({ data: [route()] });

describe('faults on a real connection', () => {
  it('a connection reset mid-body: bounded attempts, then ConnectionError', async () => {
    const { server, client } = await setup(
      {
        'GET /bridge/routes': (_req, res) => {
          res.writeHead(200, {
            'content-type': 'application/json',
            'content-length': String(routesBody.length),
          });
          res.write(routesBody.slice(0, 40));
          setTimeout(() => res.socket?.destroy(), 5);
        },
      },
      // The reset is the fault: a timeout long enough that a loaded runner's first (cold) attempt
      // is not cut short by it instead.
      { timeoutMs: 5_000 },
    );
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(server.count('GET /bridge/routes')).toBe(3);
  });

  it('a body slower than the timeout: TimeoutError within bounded attempts', async () => {
    const { server, client } = await setup({
      'GET /bridge/routes': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(routesBody.slice(0, 40));
        const drip = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(drip));
      },
    });
    const error = await client.bridge.routes({ maxRetries: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(server.count('GET /bridge/routes')).toBe(2);
    // The body is cancelled at the deadline. Whether undici then closes the pooled socket at once
    // depends on its version and pool state (aborting does no better); that nothing is left that
    // keeps the process alive is checked by the child-process test below.
  });

  it('headers that never come: TimeoutError within bounded time', async () => {
    const { server, client } = await setup({ 'GET /bridge/routes': () => {} });
    const started = Date.now();
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(server.count('GET /bridge/routes')).toBe(3);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it.each([
    [503, ServiceUnavailableError],
    [500, InternalServerError],
    [501, InternalServerError],
    [505, InternalServerError],
  ])('a %i storm: maxRetries + 1 attempts, then the typed error saying so', async (status, type) => {
    const { server, client } = await setup({
      'GET /bridge/routes': (_req, res) =>
        jsonReply(res, status, { statusCode: status, error: 'Down', code: 'DOWN', message: 'down' }),
    });
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect((error as InternalServerError).attempts).toBe(3);
    expect(server.count('GET /bridge/routes')).toBe(3);
  });

  it('429 with Retry-After is waited for, then succeeds', async () => {
    const { server, client } = await setup({
      'GET /bridge/routes': (_req, res, attempt) =>
        attempt === 1
          ? jsonReply(
              res,
              429,
              { statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED', message: 'slow' },
              { 'retry-after': '0' },
            )
          : jsonReply(res, 200, { data: [route()] }),
    });
    await expect(client.bridge.routes()).resolves.toHaveLength(1);
    expect(server.count('GET /bridge/routes')).toBe(2);
  });

  it('429 that never clears ends as RateLimitError with the server delay', async () => {
    const { client } = await setup({
      'GET /bridge/routes': (_req, res) =>
        jsonReply(
          res,
          429,
          { statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED', message: 'slow' },
          { 'retry-after': '0' },
        ),
    });
    const error = (await client.bridge.routes().catch((e: unknown) => e)) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfterMs).toBe(0);
  });

  it('a token endpoint that is down: bounded token attempts, typed error, no data request', async () => {
    const { server, client } = await setup({
      'POST /auth/token': (_req, res) => jsonReply(res, 503, { error: 'temporarily_unavailable' }),
      'GET /bridge/routes': (_req, res) => jsonReply(res, 200, { data: [] }),
    });
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(server.count('POST /auth/token')).toBe(3);
    expect(server.count('GET /bridge/routes')).toBe(0);
  });

  it('a credential revoked mid-run: one refresh, then a typed error; no loop', async () => {
    let revoked = false;
    const { server, client } = await setup({
      'POST /auth/token': (req, res, attempt) =>
        revoked
          ? jsonReply(res, 401, { error: 'invalid_client', error_description: 'revoked' })
          : token(req, res, attempt),
      'GET /bridge/routes': (_req, res) =>
        revoked
          ? jsonReply(
              res,
              401,
              { statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message: 'revoked' },
              { 'www-authenticate': 'Bearer error="invalid_token"' },
            )
          : jsonReply(res, 200, { data: [route()] }),
    });
    await client.bridge.routes();
    revoked = true;
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidClientError);
    expect(server.count('GET /bridge/routes')).toBe(2);
    expect(server.count('POST /auth/token')).toBe(2);
    const again = await client.bridge.routes().catch((e: unknown) => e);
    expect(isPartnerError(again)).toBe(true);
  });

  it('a revoked token with a working token endpoint: AuthenticationError, credential stopped', async () => {
    const { server, client } = await setup({
      'GET /bridge/routes': (_req, res) =>
        jsonReply(
          res,
          401,
          { statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message: 'stopped' },
          { 'www-authenticate': 'Bearer error="invalid_token"' },
        ),
    });
    const error = (await client.bridge.routes().catch((e: unknown) => e)) as AuthenticationError;
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.credentialStopped).toBe(true);
    expect(server.count('GET /bridge/routes')).toBe(2);
    // Stopped: the next call fails at once and sends nothing.
    await expect(client.bridge.routes()).rejects.toMatchObject({ credentialStopped: true });
    expect(server.count('GET /bridge/routes')).toBe(2);
    expect(server.count('POST /auth/token')).toBe(2);
  });

  it('a submit whose connection breaks is sent once', async () => {
    const { server, client } = await setup({
      'POST /bridge/transaction/batch/send': (_req, res) => res.socket?.destroy(),
    });
    const error = await client.bridge
      .send({ userId: 'u', intentId: 'i', signature: `0xff00${'11'.repeat(64)}1b` })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(server.count('POST /bridge/transaction/batch/send')).toBe(1);
  });

  it('an endless body is cut off at maxResponseBytes, long before the timeout, and not retried', async () => {
    let written = 0;
    const { server } = await setup({
      'GET /bridge/routes': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"data":["');
        const chunk = 'a'.repeat(64 * 1024);
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) written += chunk.length;
        };
        res.on('drain', pump);
        pump();
      },
    });
    const client = new PartnerClient({
      baseUrl: server.url,
      clientId: 'c',
      clientSecret: 's',
      timeoutMs: 60_000,
      maxResponseBytes: 1024 * 1024,
    });
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(String((error as Error).message)).toContain('maxResponseBytes');
    expect(server.count('GET /bridge/routes')).toBe(1);
    // The client stopped reading: the server could not push much past the limit.
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('a declared length over maxResponseBytes is refused unread; an oversized error page keeps its status', async () => {
    const { server } = await setup({
      'GET /bridge/routes': (_req, res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': String(routesBody.length),
        });
        res.end(routesBody);
      },
      'GET /me': (_req, res, attempt) => {
        if (attempt > 1) return jsonReply(res, 200, { data: { scopes: ['bridge:read'] } });
        res.writeHead(503, { 'content-type': 'text/html' });
        res.end(`<html>${' '.repeat(4096)}</html>`);
      },
    });
    const client = new PartnerClient({
      baseUrl: server.url,
      clientId: 'c',
      clientSecret: 's',
      maxResponseBytes: 256,
      retry: { minDelayMs: 5, maxDelayMs: 10 },
    });
    await expect(client.bridge.routes()).rejects.toBeInstanceOf(ResponseValidationError);
    // The 503 is still a 503, so it is retried like any other.
    await expect(client.me()).resolves.toEqual({ scopes: ['bridge:read'] });
    expect(server.count('GET /me')).toBe(2);
  });

  it('a status past 599 is a plain ApiError, neither a server error nor retried', async () => {
    const { server, client } = await setup({
      'GET /bridge/routes': (_req, res) => {
        res.writeHead(600, { 'content-type': 'application/json' });
        res.end('{}');
      },
    });
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(InternalServerError);
    expect((error as ApiError).status).toBe(600);
    expect(server.count('GET /bridge/routes')).toBe(1);
  });

  it('a redirect is an error, never followed: no token or secret goes to the other address', async () => {
    const elsewhere = await faultServer({ 'POST *': token, 'GET *': token });
    closers.push(elsewhere.close);
    const { server, client } = await setup({
      'GET /bridge/routes': (_req, res) => {
        res.writeHead(302, { location: `${elsewhere.url}/api/v1/s2s/bridge/routes` });
        res.end();
      },
    });
    const error = await client.bridge.routes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(302);
    expect((error as Error).message).toContain('not followed');
    expect(server.count('GET /bridge/routes')).toBe(1);

    const tokenRedirect = await faultServer({
      'POST /auth/token': (_req, res) => {
        res.writeHead(307, { location: `${elsewhere.url}/api/v1/s2s/auth/token` });
        res.end();
      },
    });
    closers.push(tokenRedirect.close);
    const redirected = new PartnerClient({ baseUrl: tokenRedirect.url, clientId: 'c', clientSecret: 's' });
    await expect(redirected.bridge.routes()).rejects.toBeInstanceOf(ApiError);
    expect(elsewhere.count('POST /auth/token') + elsewhere.count('GET /bridge/routes')).toBe(0);
  });
});

describe("the runtime's own fetch (no fetch option)", () => {
  it('fetchOptions never replace the method, headers, body or redirect the SDK sends', async () => {
    const elsewhere = await faultServer({ 'GET *': token, 'DELETE *': token });
    closers.push(elsewhere.close);
    const seen: {
      method: string | undefined;
      authorization: string | undefined;
      userAgent: string | undefined;
      body: string;
    }[] = [];
    const { server, client } = await setup({
      'GET /bridge/routes': (req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        req.on('end', () => {
          seen.push({
            method: req.method,
            authorization: req.headers.authorization,
            userAgent: req.headers['user-agent'],
            body,
          });
          res.writeHead(302, { location: `${elsewhere.url}/api/v1/s2s/bridge/routes` });
          res.end();
        });
      },
    });
    const hostile = {
      method: 'DELETE',
      headers: { authorization: 'Bearer forged', 'user-agent': 'forged' },
      body: 'smuggled',
      redirect: 'follow',
    };
    const error = await client.bridge.routes({ fetchOptions: hostile }).catch((e: unknown) => e);
    // The redirect is refused, not followed: the token never reaches the other address.
    expect((error as ApiError).status).toBe(302);
    expect(elsewhere.count('GET /bridge/routes') + elsewhere.count('DELETE /bridge/routes')).toBe(0);
    expect(seen).toEqual([
      {
        method: 'GET',
        authorization: 'Bearer tok-1',
        userAgent: expect.stringMatching(/^partner-s2s-sdk\//),
        body: '',
      },
    ]);
    expect(server.count('GET /bridge/routes')).toBe(1);
  });

  it('a POST with fetchOptions that name a body sends its own body', async () => {
    const bodies: string[] = [];
    const { client } = await setup({
      'POST /echo': (req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        req.on('end', () => {
          bodies.push(body);
          jsonReply(res, 200, { data: { ok: true } });
        });
      },
    });
    const answer = await client.post(
      '/echo',
      { body: { amount: '1.50' } },
      { fetchOptions: { body: 'smuggled', keepalive: false } },
    );
    expect(answer).toEqual({ ok: true });
    expect(bodies).toEqual(['{"amount":"1.50"}']);
  });

  it("a connection closed before any answer is a ConnectionError whose cause is the socket's own error", async () => {
    const { server, client } = await setup({
      'GET /bridge/routes': (req) => req.socket.destroy(),
    });
    const error = await client.bridge.routes({ maxRetries: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    // Not the wrappers around it (undici's `fetch failed`, ky's NetworkError): what broke.
    expect((error as Error).cause).toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(server.count('GET /bridge/routes')).toBe(2);
  });

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

describe('a submit on a real connection, through execute', () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const construct = freshConstruct(account.address);
  const SEND = 'POST /bridge/transaction/batch/send';
  const READ = 'GET /bridge/transfers/tr_1';
  const ids = { intentId: 'int_1', transferId: 'tr_1', userOpHash: construct.bundle.userOpHash };
  const html = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/html' });
    res.end(body);
  };

  async function bridgeServer(submit: Parameters<typeof faultServer>[0][string], status = 'submitted') {
    return setup(
      {
        'GET /bridge/routes': (_req, res) => jsonReply(res, 200, { data: [route()] }),
        'POST /bridge/construct/transaction/batch': (_req, res) => jsonReply(res, 200, { data: construct }),
        [READ]: (_req, res) => jsonReply(res, 200, { data: transfer({ status: status as 'submitted' }) }),
        [SEND]: submit,
      },
      { maxResponseBytes: 64 * 1024 },
    );
  }
  const execute = (client: PartnerClient, signal?: AbortSignal) =>
    client.bridge.execute(
      { userId: 'user-1', routeId: 'base-usdc-to-bsc-usdc', amount: '25.5', signer: account },
      signal ? { signal } : undefined,
    );

  const unclear: [string, Parameters<typeof faultServer>[0][string]][] = [
    ['a 200 HTML page', (_req, res) => html(res, 200, '<html>accepted</html>')],
    ['an empty 200', (_req, res) => html(res, 200, '')],
    ['a 200 with JSON cut short', (_req, res) => html(res, 200, '{"data":{"transferId":"tr_1"')],
    [
      'a 200 over maxResponseBytes',
      (_req, res) => jsonReply(res, 200, { data: { ...ids, pad: 'x'.repeat(1 << 20) } }),
    ],
    [
      'a gateway 503 page',
      (_req, res) => html(res, 503, '<html>upstream connect error or disconnect/reset</html>'),
    ],
    [
      'a 500',
      (_req, res) =>
        jsonReply(res, 500, {
          statusCode: 500,
          error: 'Internal Server Error',
          code: 'INTERNAL',
          message: 'x',
        }),
    ],
    ['a 504', (_req, res) => html(res, 504, 'Gateway Timeout')],
    [
      'a 401 on a cached token',
      (_req, res) =>
        jsonReply(
          res,
          401,
          { statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message: 'revoked' },
          { 'www-authenticate': 'Bearer error="invalid_token"' },
        ),
    ],
  ];

  it.each(unclear)('%s: one submit, the transfer is read and returned', async (_, submit) => {
    const { server, client } = await bridgeServer(submit);
    const result = await execute(client);
    expect(result.transferId).toBe('tr_1');
    expect(server.count(SEND)).toBe(1);
    expect(server.count(READ)).toBeGreaterThanOrEqual(1);
  });

  it('the caller aborts once the service has the submit: one submit, one read, the transfer', async () => {
    const controller = new AbortController();
    const { server, client } = await bridgeServer(() => controller.abort());
    const result = await execute(client, controller.signal);
    expect(result.transferId).toBe('tr_1');
    expect(server.count(SEND)).toBe(1);
    expect(server.count(READ)).toBe(1);
  });

  it('the caller aborts and the transfer is still pending: SubmitOutcomeUnknownError with the ids', async () => {
    const controller = new AbortController();
    const { server, client } = await bridgeServer(() => controller.abort(), 'pending');
    const error = await execute(client, controller.signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(error).toMatchObject(ids);
    expect(server.count(SEND)).toBe(1);
    expect(server.count(READ)).toBe(1);
  });

  it("the service's own 503 is a refusal: thrown with the ids, sent once", async () => {
    const { server, client } = await bridgeServer((_req, res) =>
      jsonReply(res, 503, {
        statusCode: 503,
        error: 'Service Unavailable',
        code: 'BRIDGE_UNREACHABLE',
        message: 'x',
      }),
    );
    const error = await execute(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject(ids);
    expect(server.count(SEND)).toBe(1);
  });
});

describe('a token fetch is part of the call that needs it', () => {
  it("a token endpoint that never answers: the caller's timeoutMs and maxRetries bound its wait", async () => {
    const server = await faultServer({ 'POST /auth/token': () => {} });
    closers.push(server.close);
    const client = new PartnerClient({ baseUrl: server.url, clientId: 'c', clientSecret: 's' });
    const started = Date.now();
    const error = await client.me({ timeoutMs: 300, maxRetries: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    // Far below the client's own 30 s attempt (and its retries): the caller's bounds applied.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(server.count('POST /auth/token')).toBe(1);
  });

  it("the caller's signal ends its wait for a token", async () => {
    const server = await faultServer({ 'POST /auth/token': () => {} });
    closers.push(server.close);
    const client = new PartnerClient({ baseUrl: server.url, clientId: 'c', clientSecret: 's' });
    const controller = new AbortController();
    const pending = client.bridge.routes({ signal: controller.signal }).catch((e: unknown) => e);
    await vi.waitFor(() => expect(server.count('POST /auth/token')).toBe(1));
    controller.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
  });

  it('a shared token fetch goes on for the callers still waiting, and is aborted when the last one left', async () => {
    let closed = 0;
    let answer: (() => void) | undefined;
    const server = await faultServer({
      'POST /auth/token': (req, res, attempt) => {
        res.on('close', () => closed++);
        answer = () => token(req, res, attempt);
      },
      'GET /me': (_req, res) => jsonReply(res, 200, { data: { scopes: ['bridge:read'] } }),
    });
    closers.push(server.close);
    const client = new PartnerClient({ baseUrl: server.url, clientId: 'c', clientSecret: 's' });
    const impatient = client.me({ timeoutMs: 200, maxRetries: 0 }).catch((e: unknown) => e);
    const patient = client.me({ timeoutMs: 10_000 });
    expect(await impatient).toBeInstanceOf(TimeoutError);
    answer!();
    await expect(patient).resolves.toEqual({ scopes: ['bridge:read'] });
    expect(server.count('POST /auth/token')).toBe(1);

    const lone = new PartnerClient({ baseUrl: server.url, clientId: 'c2', clientSecret: 's' });
    closed = 0;
    await expect(lone.me({ timeoutMs: 200, maxRetries: 0 })).rejects.toBeInstanceOf(TimeoutError);
    await vi.waitFor(() => expect(closed).toBe(1));
  });
});
