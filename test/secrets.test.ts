import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { PartnerClient, PartnerError } from '../src/index.js';
import { envelopeError, json, makeClient, mockService, SECRET } from './helpers/mock-fetch.js';

const TOKEN = 'tok_live_0123456789abcdef';

function leaks(text: string): boolean {
  return (
    text.includes(SECRET) ||
    text.includes(TOKEN) ||
    text.includes(encodeURIComponent(SECRET)) ||
    text.includes(Buffer.from(SECRET).toString('base64'))
  );
}

describe('secrets and tokens never leak', () => {
  const tokenOk = () =>
    json({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600, scope: 'bridge:read' });

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
