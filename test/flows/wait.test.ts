import { EventEmitter } from 'node:events';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import {
  AbortError,
  type BridgeTransfer,
  createCallbackRouter,
  DEFAULTS,
  PartnerClient,
  TimeoutError,
  type TransferStatus,
  type WaitOptions,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { envelopeError, json, makeClient, mockService } from '../helpers/mock-fetch.js';

let sim: PartnerSimulator | undefined;
afterEach(() => {
  vi.useRealTimers();
  sim?.close();
  sim = undefined;
});

const MIN = 60_000;
const HOUR = 60 * MIN;
const { sourceConfirmation, delivery, refund } = DEFAULTS.wait.phaseTimeoutsMs;
/** Reads as fast as the event loop allows: the clock is moved by the reads themselves. */
const FAST: WaitOptions = { pollIntervalMs: 1, maxPollIntervalMs: 1 };

/**
 * A service on a frozen clock whose reads of tr_1 answer `reads` in turn, each at its time (ms
 * after the start), as if the transfer moved on while the wait slept; after the last, the last
 * status again, every `thenEveryMs`.
 */
function timeline(reads: [TransferStatus, number][], thenEveryMs: number) {
  vi.useFakeTimers({ toFake: ['Date'] });
  const start = Date.now();
  let i = 0;
  return mockService({
    routes: {
      'GET /bridge/transfers/tr_1': () => {
        const [status, at] = reads[Math.min(i, reads.length - 1)]!;
        const extra = Math.max(0, i - reads.length + 1) * thenEveryMs;
        i++;
        vi.setSystemTime(start + at + extra);
        return json({ data: transfer({ status }) });
      },
    },
  });
}

function timeoutOf(promise: Promise<unknown>): Promise<TimeoutError> {
  return promise.then(
    () => expect.unreachable('the wait resolved'),
    (error: unknown) => {
      expect(error).toBeInstanceOf(TimeoutError);
      return error as TimeoutError;
    },
  );
}

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
      .wait({ userId: 'user-1', transferId: 'tr_1' }, { totalTimeoutMs: 30, pollIntervalMs: 5 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    // The deadline's error says which transfer gave up waiting, and where it stood.
    expect(error).toMatchObject({ transferId: 'tr_1', lastStatus: 'submitted', timeoutMs: 30 });
    expect((error as Error).message).toContain('tr_1');
    const controller = new AbortController();
    const pending = client.bridge.transfers.wait(
      { userId: 'user-1', transferId: 'tr_1' },
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
      client.bridge.transfers.wait(
        { userId: 'user-1', transferId: 'tr_1' },
        { timeoutMs: 30, pollIntervalMs: 5 },
      ),
    ).rejects.toBeInstanceOf(TimeoutError);
    const reads = service.count('GET /bridge/transfers/tr_1');
    await expect(
      client.bridge.transfers.wait(
        { userId: 'user-1', transferId: 'tr_1' },
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
        { userId: 'user-1', transferId: 'tr_1' },
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
      makeClient(service).bridge.transfers.wait({ userId: 'user-1', transferId: 'tr_1' }),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe('transfers.wait: a deadline per phase', () => {
  const ids = { userId: 'user-1', transferId: 'tr_1' };

  it('follows a refund for hours, past the deadlines of the phases before it', async () => {
    const service = timeline(
      [
        ['submitted', 0],
        ['source_confirmed', 8 * MIN],
        ['refund_pending', 16 * MIN],
        ['refund_pending', 1 * HOUR],
        ['refund_pending', 3 * HOUR],
        ['refunded', 5 * HOUR],
      ],
      0,
    );
    const done = await makeClient(service).bridge.transfers.wait(ids, FAST);
    expect(done.status).toBe('refunded');
    expect(service.count('GET /bridge/transfers/tr_1')).toBe(6);
  });

  it.each([
    ['pending', 'sourceConfirmation', sourceConfirmation],
    ['submitted', 'sourceConfirmation', sourceConfirmation],
    ['source_confirmed', 'delivery', delivery],
    ['refund_pending', 'refund', refund],
  ] as const)('gives up on a transfer stuck in %s, naming the %s phase', async (status, phase, ms) => {
    // Five reads a phase: the sixth, at the phase's deadline, is the last.
    const service = timeline([[status, 0]], ms / 5);
    const error = await timeoutOf(makeClient(service).bridge.transfers.wait(ids, FAST));
    expect(error).toMatchObject({ transferId: 'tr_1', lastStatus: status, phase, timeoutMs: ms });
    expect(error.message).toContain(`${phase} phase`);
    expect(service.count('GET /bridge/transfers/tr_1')).toBe(6);
  });

  it('counts a phase from the read that first saw it', async () => {
    // Confirmed at 9 min: delivery may take until 19 min, although the first phase ended at 10.
    const service = timeline(
      [
        ['submitted', 0],
        ['source_confirmed', 9 * MIN],
        ['source_confirmed', 18 * MIN],
        ['delivered', 18.5 * MIN],
      ],
      0,
    );
    expect((await makeClient(service).bridge.transfers.wait(ids, FAST)).status).toBe('delivered');
    const late = timeline(
      [
        ['submitted', 0],
        ['source_confirmed', 9 * MIN],
      ],
      5 * MIN,
    );
    const error = await timeoutOf(makeClient(late).bridge.transfers.wait(ids, FAST));
    expect(error).toMatchObject({ phase: 'delivery', lastStatus: 'source_confirmed' });
    expect(late.count('GET /bridge/transfers/tr_1')).toBe(4); // 9, 14, 19 min: past 9 + 10
  });

  it('never goes back a phase, and keeps the phase through a state it does not know', async () => {
    // A read that answers an earlier state (a lagging replica) or a new one grants no new time.
    const service = timeline(
      [
        ['source_confirmed', 0],
        ['submitted', 3 * MIN],
        ['relaying' as TransferStatus, 6 * MIN],
      ],
      3 * MIN,
    );
    const error = await timeoutOf(makeClient(service).bridge.transfers.wait(ids, FAST));
    expect(error).toMatchObject({ phase: 'delivery', lastStatus: 'relaying', timeoutMs: delivery });
    expect(service.count('GET /bridge/transfers/tr_1')).toBe(5); // 0, 3, 6, 9, 12 min
  });

  it('takes phaseTimeoutsMs, each phase left out keeping its default', async () => {
    const service = timeline(
      [
        ['source_confirmed', 0],
        ['source_confirmed', 3 * HOUR],
        ['refund_pending', 3.5 * HOUR],
        ['refunded', 23 * HOUR],
      ],
      0,
    );
    const done = await makeClient(service).bridge.transfers.wait(ids, {
      ...FAST,
      phaseTimeoutsMs: { delivery: 4 * HOUR, refund: 24 * HOUR },
    });
    expect(done.status).toBe('refunded');
    const stuck = timeline([['submitted', 0]], 2 * MIN);
    const error = await timeoutOf(
      makeClient(stuck).bridge.transfers.wait(ids, { ...FAST, phaseTimeoutsMs: { refund: 24 * HOUR } }),
    );
    expect(error).toMatchObject({ phase: 'sourceConfirmation', timeoutMs: sourceConfirmation });
  });

  it('with totalTimeoutMs alone, has that one deadline and no phase deadlines', async () => {
    const slow = timeline(
      [
        ['source_confirmed', 0],
        ['source_confirmed', 40 * MIN],
        ['delivered', 50 * MIN],
      ],
      0,
    );
    const done = await makeClient(slow).bridge.transfers.wait(ids, { ...FAST, totalTimeoutMs: HOUR });
    expect(done.status).toBe('delivered');
    const stuck = timeline([['refund_pending', 0]], 20 * MIN);
    const error = await timeoutOf(
      makeClient(stuck).bridge.transfers.wait(ids, { ...FAST, totalTimeoutMs: HOUR }),
    );
    expect(error).toMatchObject({ phase: 'refund', lastStatus: 'refund_pending', timeoutMs: HOUR });
    expect(stuck.count('GET /bridge/transfers/tr_1')).toBe(4);
  });

  it('with totalTimeoutMs and phaseTimeoutsMs, caps the phases with the total', async () => {
    const capped = timeline(
      [
        ['submitted', 0],
        ['refund_pending', 5 * MIN],
      ],
      30 * MIN,
    );
    const error = await timeoutOf(
      makeClient(capped).bridge.transfers.wait(ids, {
        ...FAST,
        totalTimeoutMs: 2 * HOUR,
        phaseTimeoutsMs: { refund: 12 * HOUR },
      }),
    );
    expect(error).toMatchObject({ phase: 'refund', timeoutMs: 2 * HOUR });
    expect(capped.count('GET /bridge/transfers/tr_1')).toBe(6); // 0, 5, 35, 65, 95, 125 min
    const phaseFirst = timeline([['source_confirmed', 0]], 5 * MIN);
    await expect(
      makeClient(phaseFirst).bridge.transfers.wait(ids, {
        ...FAST,
        totalTimeoutMs: 2 * HOUR,
        phaseTimeoutsMs: {},
      }),
    ).rejects.toMatchObject({ phase: 'delivery', timeoutMs: delivery });
  });

  it('follows the same deadlines with a router', async () => {
    const router = new EventEmitter<{ transfer: [BridgeTransfer] }>();
    const service = timeline(
      [
        ['submitted', 0],
        ['source_confirmed', 8 * MIN],
        ['refund_pending', 16 * MIN],
        ['refunded', 4 * HOUR],
      ],
      0,
    );
    const done = await makeClient(service).bridge.transfers.wait(ids, { ...FAST, router });
    expect(done.status).toBe('refunded');
    expect(router.listenerCount('transfer')).toBe(0);
    const stuck = timeline([['refund_pending', 0]], HOUR);
    const error = await timeoutOf(makeClient(stuck).bridge.transfers.wait(ids, { ...FAST, router }));
    expect(error).toMatchObject({ phase: 'refund', timeoutMs: refund });
  });

  it('cuts a read that hangs at the deadline of the phase the transfer is in', async () => {
    let reads = 0;
    const service = mockService({
      routes: {
        'GET /bridge/transfers/tr_1': ({ signal }) =>
          reads++ === 0
            ? json({ data: transfer({ status: 'submitted' }) })
            : new Promise<Response>((_, reject) =>
                signal.addEventListener('abort', () => reject(signal.reason)),
              ),
      },
    });
    const error = await timeoutOf(
      makeClient(service).bridge.transfers.wait(ids, {
        ...FAST,
        phaseTimeoutsMs: { sourceConfirmation: 1_000, delivery: HOUR, refund: HOUR },
      }),
    );
    expect(error).toMatchObject({ phase: 'sourceConfirmation', lastStatus: 'submitted', timeoutMs: 1_000 });
  });

  it('refuses bad phase timeouts with an ArgumentError naming each, before any read', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'submitted' }) }) },
    });
    const client = makeClient(service);
    const refused = (options: unknown) =>
      client.bridge.transfers.wait(ids, options as WaitOptions).then(
        () => expect.unreachable('accepted'),
        (error: unknown) => error as { name: string; issues: { path: string }[] },
      );
    const error = await refused({ phaseTimeoutsMs: { delivery: -1, refund: 1.5, refunds: 5 } });
    expect(error.name).toBe('ArgumentError');
    expect(error.issues.map((issue) => issue.path).sort()).toEqual(
      ['phaseTimeoutsMs', 'phaseTimeoutsMs.delivery', 'phaseTimeoutsMs.refund'].sort(),
    );
    for (const bad of [
      { phaseTimeoutsMs: 600_000 },
      { phaseTimeoutsMs: null },
      { phaseTimeoutsMs: { sourceConfirmation: 2 ** 31 } },
      { phaseTimeoutsMs: { refund: '6h' } },
    ])
      expect((await refused(bad)).name).toBe('ArgumentError');
    expect(service.count('GET /bridge/transfers/tr_1')).toBe(0);
  });
});

describe('transfers.wait against the simulator', () => {
  const ROUTE = 'base-usdc-to-bsc-usdc';

  /** A submitted transfer of the simulator's demo user, and a client on a frozen clock. */
  async function submitted(options: Parameters<typeof createPartnerSimulator>[0] = {}) {
    sim?.close();
    const s = createPartnerSimulator(options);
    sim = s;
    const client = new PartnerClient({ baseUrl: s.baseUrl, ...s.demo.credentials, fetch: s.fetch });
    const signer = privateKeyToAccount(s.demo.wallet.privateKey);
    const { transferId } = await client.bridge.execute({
      userId: s.demo.userId,
      routeId: ROUTE,
      amount: '10',
      signer,
    });
    vi.useFakeTimers({ toFake: ['Date'] });
    const reads = () =>
      s.requests.filter((request) => request.path === `/bridge/transfers/${transferId}`).length;
    /** Moves the clock (the simulator's with it) once the wait has read what the service holds now. */
    const later = async (ms: number) => {
      const seen = reads();
      await vi.waitFor(() => expect(reads()).toBeGreaterThan(seen + 1));
      vi.setSystemTime(Date.now() + ms);
    };
    return { sim: s, client, transferId, ids: { userId: s.demo.userId, transferId }, later };
  }

  it('waits through a refund for hours, and gives up on a stuck delivery naming the phase', async () => {
    const { sim: s, client, transferId, ids, later } = await submitted();
    const waiting = client.bridge.transfers.wait(ids, FAST);
    await later(5 * MIN);
    s.advance(transferId, 'source_confirmed');
    await later(9 * MIN);
    s.advance(transferId, 'refund_pending');
    await later(5 * HOUR);
    s.advance(transferId, 'refunded');
    expect((await waiting).status).toBe('refunded');

    const stuck = await submitted();
    const stuckWait = timeoutOf(stuck.client.bridge.transfers.wait(stuck.ids, FAST));
    stuck.sim.advance(stuck.transferId, 'source_confirmed');
    await stuck.later(delivery + MIN);
    expect(await stuckWait).toMatchObject({
      transferId: stuck.transferId,
      phase: 'delivery',
      lastStatus: 'source_confirmed',
    });
  });

  it('caps the wait with totalTimeoutMs', async () => {
    const { sim: s, client, transferId, ids, later } = await submitted();
    const waiting = timeoutOf(client.bridge.transfers.wait(ids, { ...FAST, totalTimeoutMs: 2 * HOUR }));
    s.advance(transferId, 'source_confirmed');
    s.advance(transferId, 'refund_pending');
    await later(2 * HOUR);
    expect(await waiting).toMatchObject({ phase: 'refund', timeoutMs: 2 * HOUR });
  });

  it('follows the same deadlines with a router fed by its callbacks', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const {
      sim: s,
      client,
      transferId,
      ids,
      later,
    } = await submitted({
      callbacks: (body) => router.dispatch(body).then(() => undefined),
    });
    const waiting = client.bridge.transfers.wait(ids, { ...FAST, router });
    s.advance(transferId, 'source_confirmed');
    await later(9 * MIN);
    s.advance(transferId, 'refund_pending');
    await later(5 * HOUR);
    s.advance(transferId, 'refunded');
    expect((await waiting).status).toBe('refunded');

    const stuck = await submitted({ callbacks: (body) => router.dispatch(body).then(() => undefined) });
    const stuckWait = timeoutOf(stuck.client.bridge.transfers.wait(stuck.ids, { ...FAST, router }));
    stuck.sim.advance(stuck.transferId, 'source_confirmed');
    stuck.sim.advance(stuck.transferId, 'refund_pending');
    await stuck.later(refund + MIN);
    expect(await stuckWait).toMatchObject({ phase: 'refund', lastStatus: 'refund_pending' });
  });
});
