import { describe, expect, it } from 'vitest';
import { constructResult, quote, route, transfer } from '../../fixtures/wire.js';
import { ArgumentError } from '../../src/index.js';
import { json, makeClient, mockService } from '../helpers/mock-fetch.js';

describe('endpoints', () => {
  it('me() echoes the token scopes', async () => {
    const service = mockService({
      routes: { 'GET /me': () => json({ data: { scopes: ['bridge:read'], partnerId: 'p1' } }) },
    });
    const me = await makeClient(service).me();
    expect(me.scopes).toEqual(['bridge:read']);
    expect(me.partnerId).toBe('p1');
    expect(service.calls[1]!.url.pathname).toBe('/api/v1/s2s/me');
  });

  it('routes() reads every route', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': () => json({ data: [route(), route({ routeId: 'back', limits: null })] }),
      },
    });
    const routes = await makeClient(service).bridge.routes();
    expect(routes.map((r) => r.routeId)).toEqual(['base-usdc-to-bsc-usdc', 'back']);
    expect(routes[1]!.limits).toBeNull();
    expect(routes[0]!.to.decimals).toBe(18);
  });

  it('quote() posts the amount digit for digit', async () => {
    const service = mockService({ routes: { 'POST /bridge/quote': () => json({ data: quote() }) } });
    const result = await makeClient(service).bridge.quote({
      userId: 'user-1',
      routeId: 'r1',
      amount: '0.123456789012345678',
    });
    expect(result.amountOutRaw).toBe('25450000000000000000');
    const call = service.calls.at(-1)!;
    expect(call.body).toBe('{"userId":"user-1","routeId":"r1","amount":0.123456789012345678}');
    expect(call.headers.get('content-type')).toBe('application/json');
  });

  it('accepts numbers for amounts and writes them without exponent', async () => {
    const service = mockService({ routes: { 'POST /bridge/quote': () => json({ data: quote() }) } });
    const client = makeClient(service);
    await client.bridge.quote({ userId: 'u', routeId: 'r', amount: 25.5 });
    await client.bridge.quote({ userId: 'u', routeId: 'r', amount: 1e-7 });
    await client.bridge.quote({ userId: 'u', routeId: 'r', amount: 1e21 });
    const bodies = service.calls.filter((c) => c.path === '/bridge/quote').map((c) => c.body);
    expect(bodies).toEqual([
      '{"userId":"u","routeId":"r","amount":25.5}',
      '{"userId":"u","routeId":"r","amount":0.0000001}',
      '{"userId":"u","routeId":"r","amount":1000000000000000000000}',
    ]);
  });

  it('feeEstimate() sends routeId and amount in the query', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/fee-estimate': () =>
          json({ data: { gasFee: '0.12', finalAmount: '99.88', feePercent: 0, systemFeeUsd: 0 } }),
      },
    });
    const estimate = await makeClient(service).bridge.feeEstimate({
      routeId: 'r 1',
      amount: '100.000000000000000001',
    });
    expect(estimate.finalAmount).toBe('99.88');
    expect(estimate.gasFee).toBe('0.12');
    const { searchParams } = service.calls.at(-1)!.url;
    expect(searchParams.get('routeId')).toBe('r 1');
    expect(searchParams.get('amount')).toBe('100.000000000000000001');
  });

  it('construct() sends amount or maxAmount, never both', async () => {
    const service = mockService({
      routes: { 'POST /bridge/construct/transaction/batch': () => json({ data: constructResult() }) },
    });
    const client = makeClient(service);
    const built = await client.bridge.construct({ userId: 'u', routeId: 'r', amount: '25.5' });
    expect(built.intentId).toBe('int_1');
    expect(built.bundle.userOp.nonce).toBe('0x10000000000000000');
    await client.bridge.construct({ userId: 'u', routeId: 'r', maxAmount: true });
    const bodies = service.calls
      .filter((c) => c.path === '/bridge/construct/transaction/batch')
      .map((c) => c.body);
    expect(bodies).toEqual([
      '{"userId":"u","routeId":"r","amount":25.5}',
      '{"userId":"u","routeId":"r","maxAmount":true}',
    ]);
  });

  it('send() includes authorization only when given', async () => {
    const service = mockService({
      routes: {
        'POST /bridge/transaction/batch/send': () =>
          json({ data: { userOpHash: `0x${'ab'.repeat(32)}`, transferId: 'tr_1' } }),
      },
    });
    const client = makeClient(service);
    const signature = `0xff00${'11'.repeat(64)}1b` as const;
    const authorization = { r: `0x${'22'.repeat(32)}`, s: `0x${'33'.repeat(32)}`, yParity: 1 } as const;
    await client.bridge.send({ userId: 'u', intentId: 'i', signature });
    // Another intent: a re-send of one the service took returns its result without a request.
    const result = await client.bridge.send({ userId: 'u', intentId: 'j', signature, authorization });
    expect(result.transferId).toBe('tr_1');
    const bodies = service.calls
      .filter((c) => c.path === '/bridge/transaction/batch/send')
      .map((c) => JSON.parse(c.body));
    expect(bodies[0]).toEqual({ userId: 'u', intentId: 'i', signature });
    expect(bodies[1]).toEqual({ userId: 'u', intentId: 'j', signature, authorization });
  });

  it('transfers.get() reads one transfer of a user', async () => {
    const service = mockService({
      // ':' is an id character the path must still encode; a slash is no longer a valid id.
      routes: { 'GET /bridge/transfers/tr%3A1': () => json({ data: transfer({ transferId: 'tr:1' }) }) },
    });
    const result = await makeClient(service).bridge.transfers.get({ userId: 'user-1', transferId: 'tr:1' });
    expect(result.transferId).toBe('tr:1');
    expect(service.calls.at(-1)!.url.searchParams.get('userId')).toBe('user-1');
  });
});

describe('arguments are checked before any request', () => {
  const service = mockService({ routes: { 'POST *': () => json({}) } });
  const client = makeClient(service);
  const cases: [string, () => Promise<unknown>, string][] = [
    ['negative amount', () => client.bridge.quote({ userId: 'u', routeId: 'r', amount: '-1' }), 'amount'],
    ['zero amount', () => client.bridge.quote({ userId: 'u', routeId: 'r', amount: '0.00' }), 'amount'],
    ['exponent', () => client.bridge.quote({ userId: 'u', routeId: 'r', amount: '1e5' }), 'amount'],
    ['leading zeros', () => client.bridge.quote({ userId: 'u', routeId: 'r', amount: '007' }), 'amount'],
    ['NaN', () => client.bridge.quote({ userId: 'u', routeId: 'r', amount: Number.NaN }), 'amount'],
    [
      'bigint amount',
      () => client.bridge.quote({ userId: 'u', routeId: 'r', amount: 5n as never }),
      'amount',
    ],
    ['empty user', () => client.bridge.quote({ userId: ' ', routeId: 'r', amount: '1' }), 'userId'],
    [
      'unknown key',
      () => client.bridge.quote({ userId: 'u', routeId: 'r', amount: '1', amout: 2 } as never),
      '',
    ],
    [
      'both amounts',
      () => client.bridge.construct({ userId: 'u', routeId: 'r', amount: '1', maxAmount: true } as never),
      'maxAmount',
    ],
    ['no amount', () => client.bridge.construct({ userId: 'u', routeId: 'r' } as never), 'amount'],
    [
      'short signature',
      () => client.bridge.send({ userId: 'u', intentId: 'i', signature: '0xff00' }),
      'signature',
    ],
    [
      'wrong prefix',
      () => client.bridge.send({ userId: 'u', intentId: 'i', signature: `0x1234${'11'.repeat(65)}` }),
      'signature',
    ],
    [
      'bad yParity',
      () =>
        client.bridge.send({
          userId: 'u',
          intentId: 'i',
          signature: `0xff00${'11'.repeat(64)}1b`,
          authorization: { r: `0x${'22'.repeat(32)}`, s: `0x${'33'.repeat(32)}`, yParity: 2 as never },
        }),
      'authorization.yParity',
    ],
    [
      'limit too big',
      () => client.bridge.transfers.list({ userId: 'u', limit: 101 }).then((p) => p),
      'limit',
    ],
    [
      'bad status',
      () => client.bridge.transfers.list({ userId: 'u', status: 'done' as never }).then((p) => p),
      'status',
    ],
    ['no transfer id', () => client.bridge.transfers.get({ userId: 'u', transferId: '' }), 'transferId'],
    ['no params', () => client.bridge.quote(undefined as never), ''],
  ];
  it.each(cases)('%s', async (_, call, path) => {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as ArgumentError).issues.map((issue) => issue.path)).toContain(path);
    expect(service.calls).toHaveLength(0);
  });

  it('names every problem at once', async () => {
    const error = (await client.bridge
      .quote({ userId: '', routeId: '', amount: 'x' })
      .catch((e: unknown) => e)) as ArgumentError;
    expect(error.issues.map((issue) => issue.path).sort()).toEqual(['amount', 'routeId', 'userId']);
    expect(error.message).toMatch(/bridge\.quote/);
  });
});
