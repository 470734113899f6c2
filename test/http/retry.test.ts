import { describe, expect, it, vi } from 'vitest';
import { quote, route, transfer } from '../../fixtures/wire.js';
import {
  AbortError,
  ConnectionError,
  InternalServerError,
  type PartnerClient,
  RateLimitError,
  type RetryEvent,
  ServiceUnavailableError,
  SubmitOutcomeUnknownError,
  TimeoutError,
} from '../../src/index.js';
import { validConstruct } from '../helpers/batches.js';
import { envelopeError, json, makeClient, mockService } from '../helpers/mock-fetch.js';

const ok = () => json({ data: [route()] });

function flaky(failures: (() => Response | Promise<Response>)[], good: () => Response = ok) {
  let n = 0;
  return () => {
    const next = failures[n++];
    return next ? next() : good();
  };
}

describe('retries', () => {
  it('retries 503 up to maxRetries, then throws the typed error', async () => {
    const service = mockService({
      routes: { 'GET /bridge/routes': () => envelopeError(503, 'BRIDGE_UNREACHABLE', 'down') },
    });
    const client = makeClient(service, { maxRetries: 2 });
    const retries: RetryEvent[] = [];
    client.on('retry', (event) => retries.push(event));
    await expect(client.bridge.routes()).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(service.count('GET /bridge/routes')).toBe(3);
    expect(retries.map((event) => [event.attempt, event.status, event.reason])).toEqual([
      [1, 503, 'ServiceUnavailableError'],
      [2, 503, 'ServiceUnavailableError'],
    ]);
  });

  it.each([500, 501, 502, 503, 504, 505, 599, 429])('recovers from one %i', async (status) => {
    const service = mockService({
      routes: { 'GET /bridge/routes': flaky([() => envelopeError(status, 'X', 'x')]) },
    });
    await expect(makeClient(service).bridge.routes()).resolves.toHaveLength(1);
    expect(service.count('GET /bridge/routes')).toBe(2);
  });

  it.each([400, 401, 403, 404, 409])('never retries %i', async (status) => {
    const service = mockService({ routes: { 'GET /bridge/routes': () => envelopeError(status, 'X', 'x') } });
    await makeClient(service, { maxRetries: 3 })
      .bridge.routes()
      .catch(() => undefined);
    // a 401 is not retried, but replayed once with a newer token: the first may have been revoked alone
    expect(service.count('GET /bridge/routes')).toBe(status === 401 ? 2 : 1);
  });

  it('retries a connection reset', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': flaky([
          () => {
            throw new TypeError('fetch failed', {
              cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
            });
          },
        ]),
      },
    });
    await expect(makeClient(service).bridge.routes()).resolves.toHaveLength(1);
    expect(service.count('GET /bridge/routes')).toBe(2);
  });

  it('reports a connection that never works as ConnectionError', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': () => {
          throw new TypeError('fetch failed');
        },
      },
    });
    const error = await makeClient(service, { maxRetries: 1 })
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).cause).toBeInstanceOf(TypeError);
    expect(service.count('GET /bridge/routes')).toBe(2);
  });

  it('honours Retry-After in seconds, capped', async () => {
    vi.useFakeTimers();
    try {
      const service = mockService({
        routes: {
          'GET /bridge/routes': flaky([
            () => envelopeError(429, 'RATE_LIMITED', 'slow down', {}, { 'retry-after': '1' }),
          ]),
        },
      });
      const client = makeClient(service, { retry: { minDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 120 } });
      const retries: RetryEvent[] = [];
      client.on('retry', (event) => retries.push(event));
      const pending = client.bridge.routes();
      await vi.advanceTimersByTimeAsync(100);
      expect(service.count('GET /bridge/routes')).toBe(1);
      await vi.advanceTimersByTimeAsync(30);
      expect(service.count('GET /bridge/routes')).toBe(2);
      await expect(pending).resolves.toHaveLength(1);
      expect(retries[0]!.delayMs).toBe(120);
    } finally {
      vi.useRealTimers();
    }
  });

  it('honours Retry-After as an HTTP date', async () => {
    const when = new Date(Date.now() + 60_000).toUTCString();
    const service = mockService({
      routes: {
        'GET /bridge/routes': flaky([
          () => envelopeError(429, 'RATE_LIMITED', 'x', {}, { 'retry-after': when }),
        ]),
      },
    });
    const client = makeClient(service, { retry: { minDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 80 } });
    const retries: RetryEvent[] = [];
    client.on('retry', (event) => retries.push(event));
    await client.bridge.routes();
    expect(retries[0]!.delayMs).toBe(80);
  });

  it('gives up at once when Retry-After is past the time left to retry', async () => {
    vi.useFakeTimers();
    try {
      const service = mockService({
        routes: {
          'GET /bridge/routes': () =>
            envelopeError(429, 'RATE_LIMITED', 'slow down', {}, { 'retry-after': '30' }),
        },
      });
      const client = makeClient(service, {
        maxRetries: 5,
        retry: { minDelayMs: 1, maxDelayMs: 2, maxRetryTimeMs: 10_000, maxRetryAfterMs: 60_000 },
      });
      const retries: RetryEvent[] = [];
      client.on('retry', (event) => retries.push(event));
      const outcome = client.bridge.routes().catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(0);
      const error = await outcome;
      expect(error).toBeInstanceOf(RateLimitError);
      // The caller learns when the service will take it again, without having waited for nothing.
      expect((error as RateLimitError).retryAfterMs).toBe(30_000);
      expect(service.count('GET /bridge/routes')).toBe(1);
      expect(retries).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops retrying at the total time bound', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': () => envelopeError(503, 'X', 'x') } });
    const client = makeClient(service, {
      maxRetries: 10,
      retry: { minDelayMs: 40, maxDelayMs: 40, maxRetryTimeMs: 100 },
    });
    await expect(client.bridge.routes()).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(service.count('GET /bridge/routes')).toBeLessThan(6);
  });

  it('takes maxRetries per call', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': () => envelopeError(503, 'X', 'x') } });
    await makeClient(service, { maxRetries: 5 })
      .bridge.routes({ maxRetries: 0 })
      .catch(() => undefined);
    expect(service.count('GET /bridge/routes')).toBe(1);
  });

  it("takes maxRetryTimeMs per call: a Retry-After past the call's own bound ends it at once", async () => {
    vi.useFakeTimers();
    try {
      const service = mockService({
        routes: {
          'GET /bridge/routes': flaky([() => envelopeError(503, 'BUSY', 'busy', {}, { 'retry-after': '2' })]),
        },
      });
      // The client would wait the 2 s and succeed; this call allows 1 s of retrying only.
      const client = makeClient(service, { maxRetries: 3 });
      const outcome = client.bridge.routes({ maxRetryTimeMs: 1_000 }).catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(3_000);
      expect(await outcome).toBeInstanceOf(ServiceUnavailableError);
      expect(service.count('GET /bridge/routes')).toBe(1);
      const patient = client.bridge.routes();
      await vi.advanceTimersByTimeAsync(2_500);
      await expect(patient).resolves.toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a maxRetryTimeMs that is not a positive whole number of milliseconds', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': ok } });
    await expect(makeClient(service).bridge.routes({ maxRetryTimeMs: -1 })).rejects.toThrow(/maxRetryTimeMs/);
    expect(service.count('GET /bridge/routes')).toBe(0);
  });

  it('never re-sends a submit, whatever the failure', async () => {
    for (const failure of [
      () => envelopeError(503, 'X', 'x'),
      () => {
        throw new TypeError('fetch failed');
      },
    ]) {
      const service = mockService({ routes: { 'POST /bridge/transaction/batch/send': failure } });
      await makeClient(service, { maxRetries: 3 })
        .bridge.send({ userId: 'u', intentId: 'i', signature: `0xff00${'11'.repeat(64)}1b` })
        .catch(() => undefined);
      expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
    }
  });
});

describe('every 5xx is retried where repeating is safe', () => {
  const down = (status: number) => () => envelopeError(status, 'INTERNAL', 'broken');
  // Each call whose repetition cannot act twice, with its route and a good answer.
  const calls: [string, string, () => Response, (client: PartnerClient) => Promise<unknown>][] = [
    ['routes', 'GET /bridge/routes', ok, (c) => c.bridge.routes()],
    ['me', 'GET /me', () => json({ data: { scopes: ['bridge:read'] } }), (c) => c.me()],
    [
      'feeEstimate',
      'GET /bridge/fee-estimate',
      () => json({ data: { finalAmount: '1' } }),
      (c) => c.bridge.feeEstimate({ routeId: 'r', amount: '1' }),
    ],
    [
      'transfers.get',
      'GET /bridge/transfers/tr_1',
      () => json({ data: transfer() }),
      (c) => c.bridge.transfers.get({ userId: 'user-1', transferId: 'tr_1' }),
    ],
    [
      'transfers.list',
      'GET /bridge/transfers',
      () => json({ data: [transfer()], nextCursor: null }),
      async (c) => c.bridge.transfers.list({ userId: 'user-1' }),
    ],
    [
      'quote',
      'POST /bridge/quote',
      () => json({ data: quote() }),
      (c) => c.bridge.quote({ userId: 'u', routeId: 'r', amount: '1' }),
    ],
    [
      'construct',
      'POST /bridge/construct/transaction/batch',
      () => json({ data: validConstruct() }),
      (c) => c.bridge.construct({ userId: 'u', routeId: 'r', amount: '1' }),
    ],
  ];

  for (const status of [500, 501, 505, 599]) {
    it.each(calls)(`%s: a ${status} is retried, then the call succeeds`, async (_, key, good, call) => {
      const service = mockService({ routes: { [key]: flaky([down(status), down(status)], good) } });
      const client = makeClient(service, { maxRetries: 2 });
      const retries: RetryEvent[] = [];
      client.on('retry', (event) => retries.push(event));
      await expect(call(client)).resolves.toBeDefined();
      expect(service.count(key)).toBe(3);
      expect(retries.map((event) => [event.attempt, event.status])).toEqual([
        [1, status],
        [2, status],
      ]);
    });
  }

  it.each(calls)(
    '%s: a 5xx that never clears ends after maxRetries + 1 attempts, and says so',
    async (_, key, __, call) => {
      const service = mockService({ routes: { [key]: down(500) } });
      const error = await call(makeClient(service, { maxRetries: 2 })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InternalServerError);
      expect((error as InternalServerError).attempts).toBe(3);
      expect((error as InternalServerError).toJSON()).toMatchObject({ attempts: 3 });
      expect(service.count(key)).toBe(3);
    },
  );

  it.each([500, 501, 505, 599])('the token request: a %i is retried like a data call', async (status) => {
    let n = 0;
    const service = mockService({
      token: () =>
        n++ < 2
          ? envelopeError(status, 'INTERNAL', 'x')
          : json({ access_token: 't', token_type: 'Bearer', expires_in: 3600 }),
      routes: { 'GET /bridge/routes': ok },
    });
    await expect(makeClient(service, { maxRetries: 2 }).bridge.routes()).resolves.toHaveLength(1);
    expect(service.count('POST /auth/token')).toBe(3);
  });

  it('a token endpoint that keeps answering 500: its error says how many attempts it made', async () => {
    const service = mockService({
      token: () => envelopeError(500, 'INTERNAL', 'x'),
      routes: { 'GET /bridge/routes': ok },
    });
    const error = await makeClient(service, { maxRetries: 2 })
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).attempts).toBe(3);
    expect(service.count('POST /auth/token')).toBe(3);
    expect(service.count('GET /bridge/routes')).toBe(0);
  });

  it('an error that is not retried says it came from one attempt', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': () => envelopeError(404, 'X', 'x') } });
    const error = await makeClient(service, { maxRetries: 2 })
      .bridge.routes()
      .catch((e: unknown) => e);
    expect((error as InternalServerError).attempts).toBe(1);
  });

  it.each([500, 501, 505, 599])(
    'never the submit: a %i there is an unclear outcome, resolved by reading',
    async (status) => {
      const service = mockService({
        routes: {
          'POST /bridge/construct/transaction/batch': () => json({ data: validConstruct() }),
          'POST /bridge/transaction/batch/send': down(status),
          'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'expired' }) }),
        },
      });
      const client = makeClient(service, { maxRetries: 3 });
      const built = await client.bridge.construct({ userId: 'user-1', routeId: 'r', amount: '1' });
      const error = await client.bridge
        .send({ userId: 'user-1', intentId: built.intentId, signature: `0xff00${'11'.repeat(64)}1b` })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
      expect((error as SubmitOutcomeUnknownError).cause).toBeInstanceOf(InternalServerError);
      expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
      expect(service.count('GET /bridge/transfers/tr_1')).toBe(1);
    },
  );
});

describe('timeouts and abort', () => {
  const hang = (request: { signal: AbortSignal }) =>
    new Promise<Response>((_, reject) =>
      request.signal.addEventListener('abort', () => reject(request.signal.reason)),
    );

  it('times out an attempt that gets no answer', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': hang } });
    const error = await makeClient(service, { maxRetries: 1, timeoutMs: 30 })
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(30);
    expect(service.count('GET /bridge/routes')).toBe(2);
  });

  it('times out a body that stops coming', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': () =>
          new Response(
            new ReadableStream({
              start(controller) {
                controller.enqueue(new TextEncoder().encode('{"data":['));
              },
            }),
            { status: 200 },
          ),
      },
    });
    const error = await makeClient(service, { maxRetries: 0 })
      .bridge.routes({ timeoutMs: 40 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
  });

  it('aborts an attempt in flight', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': hang } });
    const controller = new AbortController();
    const pending = makeClient(service).bridge.routes({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user cancelled')), 20);
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).cause).toEqual(new Error('user cancelled'));
    expect(service.count('GET /bridge/routes')).toBe(1);
  });

  it('abort stops the wait between retries', async () => {
    vi.useFakeTimers();
    try {
      const service = mockService({ routes: { 'GET /bridge/routes': () => envelopeError(503, 'X', 'x') } });
      const client = makeClient(service, {
        maxRetries: 5,
        retry: { minDelayMs: 10_000, maxDelayMs: 10_000 },
      });
      const controller = new AbortController();
      let waiting = false;
      client.on('retry', () => {
        waiting = true;
      });
      const pending = client.bridge.routes({ signal: controller.signal }).catch((e: unknown) => e);
      await vi.waitFor(() => expect(waiting).toBe(true));
      controller.abort();
      // No timer is advanced: the call must settle while the backoff is still pending.
      await expect(pending).resolves.toBeInstanceOf(AbortError);
      expect(service.count('GET /bridge/routes')).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an already aborted signal sends nothing', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': () => json({ data: [] }) } });
    const error = await makeClient(service)
      .bridge.routes({ signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(service.calls).toHaveLength(0);
  });
});
