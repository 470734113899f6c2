import { describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { ArgumentError, type BridgeTransfer, ResponseValidationError } from '../../src/index.js';
import { json, makeClient, mockService } from '../helpers/mock-fetch.js';

describe('pagination', () => {
  function pagedService(
    pages: BridgeTransfer[][],
    place: (items: BridgeTransfer[], next: string | null) => unknown,
  ) {
    return mockService({
      routes: {
        'GET /bridge/transfers': (request) => {
          const cursor = request.url.searchParams.get('cursor');
          const index = cursor ? Number(cursor.slice(1)) : 0;
          const next = index + 1 < pages.length ? `c${index + 1}` : null;
          return json(place(pages[index]!, next));
        },
      },
    });
  }
  const pages = [
    [transfer({ transferId: 't1' }), transfer({ transferId: 't2' })],
    [transfer({ transferId: 't3' })],
    [transfer({ transferId: 't4' })],
  ];

  it.each([
    ['beside data', (items: BridgeTransfer[], nextCursor: string | null) => ({ data: items, nextCursor })],
    [
      'inside data',
      (items: BridgeTransfer[], nextCursor: string | null) => ({ data: { items, nextCursor } }),
    ],
    [
      'in meta',
      (items: BridgeTransfer[], nextCursor: string | null) => ({ data: items, meta: { nextCursor } }),
    ],
  ])('walks every page with the cursor %s', async (_, place) => {
    const service = pagedService(pages, place);
    const client = makeClient(service);
    const seen: string[] = [];
    for await (const item of client.bridge.transfers.list({
      userId: 'user-1',
      limit: 2,
      status: 'submitted',
    })) {
      seen.push(item.transferId);
    }
    expect(seen).toEqual(['t1', 't2', 't3', 't4']);
    const listCalls = service.calls.filter((c) => c.path === '/bridge/transfers');
    expect(listCalls.map((c) => c.url.searchParams.get('cursor'))).toEqual([null, 'c1', 'c2']);
    expect(listCalls.every((c) => c.url.searchParams.get('limit') === '2')).toBe(true);
    expect(listCalls.every((c) => c.url.searchParams.get('status') === 'submitted')).toBe(true);
  });

  it('reads its arguments when called: a later change to them is not sent', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/transfers': (request) =>
          json({ data: [], pagination: { nextCursor: null }, q: request.url.search }),
      },
    });
    const client = makeClient(service);
    const params: { userId: string; limit?: number } = { userId: 'usr_a', limit: 5 };
    const listed = client.bridge.transfers.list(params);
    params.userId = 'usr_b';
    params.limit = 7;
    await listed;
    const sent = service.calls.find((call) => call.path === '/bridge/transfers');
    expect(sent?.url.searchParams.get('userId')).toBe('usr_a');
    expect(sent?.url.searchParams.get('limit')).toBe('5');
    // A bad argument still rejects the first use, never throws from the call.
    const bad = client.bridge.transfers.list({ userId: '' });
    await expect(bad).rejects.toBeInstanceOf(ArgumentError);
  });

  it('awaits to the first page with its cursor', async () => {
    const service = pagedService(pages, (items, nextCursor) => ({ data: items, nextCursor }));
    const page = await makeClient(service).bridge.transfers.list({ userId: 'user-1' });
    expect(page.data.map((t) => t.transferId)).toEqual(['t1', 't2']);
    expect(page.nextCursor).toBe('c1');
    expect(page.hasNextPage()).toBe(true);
    const second = await page.getNextPage();
    expect(second.data.map((t) => t.transferId)).toEqual(['t3']);
  });

  it('asking the last page for the next one is an ArgumentError, and sends nothing', async () => {
    const service = pagedService(pages, (items, nextCursor) => ({ data: items, nextCursor }));
    let page = await makeClient(service).bridge.transfers.list({ userId: 'user-1' });
    while (page.hasNextPage()) page = await page.getNextPage();
    const sent = service.calls.length;
    await expect(page.getNextPage()).rejects.toBeInstanceOf(ArgumentError);
    expect(service.calls.length).toBe(sent);
  });

  it('stops on a cursor the service repeats', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers': () => json({ data: [transfer()], nextCursor: 'same' }) },
    });
    const seen: string[] = [];
    const walk = async () => {
      for await (const item of makeClient(service).bridge.transfers.list({ userId: 'user-1' }))
        seen.push(item.transferId);
    };
    await expect(walk()).rejects.toBeInstanceOf(ResponseValidationError);
    expect(seen.length).toBeLessThanOrEqual(2);
  });
});
