import { describe, expect, it } from 'vitest';
import { route, transfer } from '../../fixtures/wire.js';
import { ResponseValidationError } from '../../src/index.js';
import { json, makeClient, mockService } from '../helpers/mock-fetch.js';

describe('forward compatibility', () => {
  const future = () => ({ ...transfer(), status: 'bridging_slowly', newField: { x: 1 } });

  it('keeps unknown fields and lets an unknown status through', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers/tr_1': () => json({ data: future(), extra: 1 }) },
    });
    const result = await makeClient(service).bridge.transfers.get({ userId: 'user-1', transferId: 'tr_1' });
    expect(result.status).toBe('bridging_slowly');
    expect((result as unknown as Record<string, unknown>).newField).toEqual({ x: 1 });
  });

  it('lets an unknown scope through', async () => {
    const service = mockService({
      routes: { 'GET /me': () => json({ data: { scopes: ['bridge:read', 'rates:write'] } }) },
    });
    expect((await makeClient(service).me()).scopes).toContain('rates:write');
  });

  it('rejects unknown fields, statuses and scopes under strict', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/transfers/tr_1': () => json({ data: future() }),
        'GET /me': () => json({ data: { scopes: ['rates:write'] } }),
        'GET /bridge/routes': () => json({ data: [{ ...route(), surprise: true }] }),
      },
    });
    const client = makeClient(service, { strict: true });
    const error = (await client.bridge.transfers
      .get({ userId: 'user-1', transferId: 'tr_1' })
      .catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(['data.status', 'data']));
    await expect(client.me()).rejects.toBeInstanceOf(ResponseValidationError);
    await expect(client.bridge.routes()).rejects.toBeInstanceOf(ResponseValidationError);
  });

  it('a known shape passes under strict', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': () => json({ data: [route()] }) } });
    await expect(makeClient(service, { strict: true }).bridge.routes()).resolves.toHaveLength(1);
  });

  it.each([
    ['broken JSON', () => new Response('{"data": [', { status: 200 })],
    ['no data', () => json({ routes: [] })],
    ['wrong type', () => json({ data: [{ ...route(), from: { ...route().from, decimals: '6' } }] })],
    ['float amount', () => json({ data: [{ ...route(), limits: { ...route().limits, minAmount: 1.5 } }] })],
  ])('a body that does not fit (%s) is a ResponseValidationError', async (_, respond) => {
    const service = mockService({ routes: { 'GET /bridge/routes': respond } });
    await expect(makeClient(service).bridge.routes()).rejects.toBeInstanceOf(ResponseValidationError);
  });
});
