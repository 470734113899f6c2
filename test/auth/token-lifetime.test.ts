import { afterEach, describe, expect, it, vi } from 'vitest';
import { route } from '../../fixtures/wire.js';
import {
  InvalidClientError,
  MemoryTokenStore,
  PartnerClient,
  type ResponseEvent,
  ResponseValidationError,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { json, makeClient, mockService } from '../helpers/mock-fetch.js';

const routes = { 'GET /bridge/routes': () => json({ data: [route()] }) };
const START = Date.parse('2026-11-22T00:00:00Z');

afterEach(() => {
  vi.useRealTimers();
});

/** A simulator issuing tokens of `ttl` seconds, with the clock (only) faked at START for both sides. */
function simAt(ttl: number) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(START);
  return createPartnerSimulator({ tokenTtlSec: ttl });
}

/** A client of `sim` whose answers are all recorded, so a test can see any 401. */
function simClient(sim: PartnerSimulator, tokenStore?: MemoryTokenStore) {
  const client = new PartnerClient({
    baseUrl: sim.baseUrl,
    ...sim.demo.credentials,
    fetch: sim.fetch,
    ...(tokenStore ? { tokenStore } : {}),
  });
  const responses: ResponseEvent[] = [];
  client.on('response', (event) => responses.push(event));
  return { client, responses };
}

const count = (sim: PartnerSimulator, key: string) =>
  sim.requests.filter((request) => `${request.method} ${request.path}` === key).length;

describe('expires_in is authoritative, however short', () => {
  it.each([1, 2])(
    'a token of expires_in %i is never presented after it expired: a call past expiry fetches a new one',
    async (ttl) => {
      const sim = simAt(ttl);
      const { client, responses } = simClient(sim);
      await client.bridge.routes();
      vi.setSystemTime(START + ttl * 1000 + 100);
      await client.bridge.routes();
      expect(count(sim, 'POST /auth/token')).toBe(2);
      // The expired token was never sent: no 401 and no replay.
      expect(count(sim, 'GET /bridge/routes')).toBe(2);
      expect(responses.map((event) => event.status)).not.toContain(401);
    },
  );

  it('a tiny lifetime costs a token request per call, but concurrent calls still share one', async () => {
    const sim = simAt(1);
    const { client, responses } = simClient(sim);
    await Promise.all(Array.from({ length: 50 }, () => client.bridge.routes()));
    expect(count(sim, 'POST /auth/token')).toBe(1);
    vi.setSystemTime(START + 1_500);
    await Promise.all(Array.from({ length: 50 }, () => client.bridge.routes()));
    expect(count(sim, 'POST /auth/token')).toBe(2);
    expect(count(sim, 'GET /bridge/routes')).toBe(100);
    expect(responses.map((event) => event.status)).not.toContain(401);
  });

  it('a token is dropped before its expiry, by a tenth of its life (30 s at most)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(START);
    const service = mockService({ routes, expiresIn: 10 });
    const client = makeClient(service);
    await client.bridge.routes();
    vi.setSystemTime(START + 9_000);
    await client.bridge.routes();
    const presented = service.calls.filter((call) => call.path === '/bridge/routes');
    expect(presented.map((call) => call.headers.get('authorization'))).toEqual([
      'Bearer token-1',
      'Bearer token-2',
    ]);
  });

  it('a token from a shared store is not taken past its expiry either', async () => {
    const sim = simAt(1);
    const tokenStore = new MemoryTokenStore();
    const first = simClient(sim, tokenStore);
    const second = simClient(sim, tokenStore);
    await first.client.bridge.routes();
    // Within its life the stored token is shared…
    await second.client.bridge.routes();
    expect(count(sim, 'POST /auth/token')).toBe(1);
    // …and once the service says it died, neither client presents it.
    vi.setSystemTime(START + 1_500);
    await second.client.bridge.routes();
    await first.client.bridge.routes();
    expect(count(sim, 'POST /auth/token')).toBe(2);
    expect([...first.responses, ...second.responses].map((event) => event.status)).not.toContain(401);
  });

  it('a token that expired before its answer was read is refused, never sent', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(START);
    const service = mockService({
      routes,
      token: () => {
        // The answer takes 5 ms to arrive; the token lived 1 ms.
        vi.setSystemTime(Date.now() + 5);
        return json({ access_token: 'token-1', token_type: 'Bearer', expires_in: 0.001 });
      },
    });
    const error = await makeClient(service, { maxRetries: 0 })
      .bridge.routes()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).issues[0]!.path).toBe('expires_in');
    expect(service.count('GET /bridge/routes')).toBe(0);
  });

  it('the stopped-credential backoff still holds with a short lifetime', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(START);
    let refuse = false;
    const service = mockService({
      routes,
      token: () =>
        refuse
          ? json({ error: 'invalid_client' }, 401)
          : json({ access_token: 'token-1', token_type: 'Bearer', expires_in: 1 }),
    });
    const client = makeClient(service);
    await client.bridge.routes();
    refuse = true;
    vi.setSystemTime(START + 1_500);
    const errors = await Promise.all(
      Array.from({ length: 20 }, () => client.bridge.routes().catch((e: unknown) => e)),
    );
    expect(errors.every((error) => error instanceof InvalidClientError)).toBe(true);
    const later = await client.bridge.routes().catch((e: unknown) => e);
    expect(later).toBeInstanceOf(InvalidClientError);
    expect(service.count('POST /auth/token')).toBe(2);
  });

  it('a huge expires_in is still relied on for a day at most, refreshed ahead of it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(START);
    const service = mockService({ routes, expiresIn: 1e9 });
    const client = makeClient(service);
    await client.bridge.routes();
    vi.setSystemTime(START + 86_400_000);
    await client.bridge.routes();
    expect(service.count('POST /auth/token')).toBe(2);
  });
});

/**
 * `sim.fetch` wrapped to record each access token the service issued and each token a data call
 * presented, and how many token requests are still unanswered.
 */
function recordingFetch(sim: PartnerSimulator) {
  const issued: string[] = [];
  const presented = new Set<string>();
  let tokenRequestsOpen = 0;
  const fetch = async (input: Request | URL | string, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    if (!new URL(request.url).pathname.endsWith('/auth/token')) {
      presented.add(request.headers.get('authorization')?.replace(/^Bearer /, '') ?? '');
      return sim.fetch(request);
    }
    tokenRequestsOpen++;
    try {
      const response = await sim.fetch(request);
      const body = (await response.clone().json()) as { access_token?: string };
      if (body.access_token) issued.push(body.access_token);
      return response;
    } finally {
      tokenRequestsOpen--;
    }
  };
  return { fetch, issued, presented, open: () => tokenRequestsOpen };
}

describe('a background refresh is not thrown away', () => {
  it('sequential calls across several refreshes: one token request per refresh, every issued token used', async () => {
    const sim = simAt(3);
    const recorded = recordingFetch(sim);
    const client = new PartnerClient({
      baseUrl: sim.baseUrl,
      ...sim.demo.credentials,
      fetch: recorded.fetch,
    });
    const settled: string[] = [];
    client.on('token', (event) => settled.push(event.action));
    // One call every 250 ms of a 3 s token's life, for 7.25 s: a refresh starts at 80% (2.4 s) of
    // each token's life, during a call that ends before the token endpoint answers.
    for (let at = 0; at <= 7_250; at += 250) {
      vi.setSystemTime(START + at);
      await client.bridge.routes();
      // Between two calls of a real program time passes: the refresh the call started is answered.
      await vi.waitFor(() => expect(recorded.open()).toBe(0));
      // Every token the service issued reached the client (a refresh aborted after the service
      // answered would be one more request and no token).
      await vi.waitFor(() => expect(settled).toHaveLength(count(sim, 'POST /auth/token')));
    }
    // The first token at 0 s, refreshes at 2.5 s and 5 s (each past 80% of the one before).
    expect(recorded.issued).toHaveLength(3);
    expect(settled).toEqual(['fetched', 'refreshed', 'refreshed']);
    expect(recorded.issued.filter((token) => !recorded.presented.has(token))).toEqual([]);
  });
});
