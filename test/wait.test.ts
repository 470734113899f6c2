import { afterEach, describe, expect, it, vi } from 'vitest';
import { transfer } from '../fixtures/wire.js';
import { AbortError, TimeoutError, type TransferStatus } from '../src/index.js';
import { envelopeError, json, makeClient, mockService } from './helpers/mock-fetch.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('transfers.wait', () => {
  function sequence(statuses: TransferStatus[]) {
    let i = 0;
    return () => json({ data: transfer({ status: statuses[Math.min(i++, statuses.length - 1)]! }) });
  }

  it('resolves at a final state', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/transfers/tr_1': sequence(['pending', 'submitted', 'source_confirmed', 'delivered']),
      },
    });
    const done = await makeClient(service).bridge.transfers.wait(
      { userId: 'user-1', transferId: 'tr_1' },
      { pollIntervalMs: 1 },
    );
    expect(done.status).toBe('delivered');
    expect(service.count('GET /bridge/transfers/tr_1')).toBe(4);
  });

  it('resolves at the state asked for, or one past it', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers/tr_1': sequence(['submitted', 'delivered']) },
    });
    const reached = await makeClient(service).bridge.transfers.wait(
      { userId: 'user-1', transferId: 'tr_1', until: 'source_confirmed' },
      { pollIntervalMs: 1 },
    );
    expect(reached.status).toBe('delivered');
  });

  it('keeps waiting through a state it does not know', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/transfers/tr_1': sequence(['submitted', 'relaying' as TransferStatus, 'refunded']),
      },
    });
    const done = await makeClient(service).bridge.transfers.wait(
      { userId: 'user-1', transferId: 'tr_1' },
      { pollIntervalMs: 1 },
    );
    expect(done.status).toBe('refunded');
  });

  it('gives up after totalTimeoutMs, and stops on abort', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'submitted' }) }) },
    });
    const client = makeClient(service);
    const error = await client.bridge.transfers
      .wait({ userId: 'u', transferId: 'tr_1' }, { totalTimeoutMs: 30, pollIntervalMs: 5 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    // The deadline's error says which transfer gave up waiting, and where it stood.
    expect(error).toMatchObject({ transferId: 'tr_1', lastStatus: 'submitted', timeoutMs: 30 });
    expect((error as Error).message).toContain('tr_1');
    const controller = new AbortController();
    const pending = client.bridge.transfers.wait(
      { userId: 'u', transferId: 'tr_1' },
      { signal: controller.signal, pollIntervalMs: 10_000 },
    );
    setTimeout(() => controller.abort(), 10);
    await expect(pending).rejects.toBeInstanceOf(AbortError);
  });

  it('takes the deprecated timeoutMs as the whole wait, and refuses it beside totalTimeoutMs', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'submitted' }) }) },
    });
    const client = makeClient(service);
    await expect(
      client.bridge.transfers.wait({ userId: 'u', transferId: 'tr_1' }, { timeoutMs: 30, pollIntervalMs: 5 }),
    ).rejects.toBeInstanceOf(TimeoutError);
    const reads = service.count('GET /bridge/transfers/tr_1');
    await expect(
      client.bridge.transfers.wait(
        { userId: 'u', transferId: 'tr_1' },
        { timeoutMs: 30, totalTimeoutMs: 30, pollIntervalMs: 5 },
      ),
    ).rejects.toMatchObject({
      name: 'ArgumentError',
      issues: [expect.objectContaining({ path: 'timeoutMs' })],
    });
    expect(service.count('GET /bridge/transfers/tr_1')).toBe(reads);
  });

  it('gives up at the deadline even when reads never wait on I/O', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const service = mockService({
      routes: {
        'GET /bridge/transfers/tr_1': () => {
          vi.setSystemTime(Date.now() + 10_000); // each read "takes" 10 s; the real timer never gets a turn
          return json({ data: transfer({ status: 'submitted' }) });
        },
      },
    });
    await expect(
      makeClient(service).bridge.transfers.wait(
        { userId: 'u', transferId: 'tr_1' },
        { timeoutMs: 30_000, pollIntervalMs: 1 },
      ),
    ).rejects.toBeInstanceOf(TimeoutError);
    expect(service.count('GET /bridge/transfers/tr_1')).toBe(3);
  });

  it('passes errors of the read through', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers/tr_1': () => envelopeError(404, 'NOT_FOUND', 'no such transfer') },
    });
    await expect(
      makeClient(service).bridge.transfers.wait({ userId: 'u', transferId: 'tr_1' }),
    ).rejects.toMatchObject({ status: 404 });
  });
});
