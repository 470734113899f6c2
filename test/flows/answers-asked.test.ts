// An attacker who controls the service answers a question with another transfer, or another
// user's: nothing built on those answers may hand them to a partner as the one asked for.
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type BridgeTransfer,
  createCallbackRouter,
  createTransferTracker,
  MemoryTrackerStore,
  PartnerClient,
  ResponseValidationError,
  SubmitOutcomeUnknownError,
  signBridgeBatch,
  TimeoutError,
  TrackerError,
  verifyBridgeBatch,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { leaping, useTestClock } from '../helpers/clock.js';
import { FAST, ROUTE, until } from '../tracker/helpers.js';

type Rewrite = (request: { method: string; path: string }, body: any) => unknown;

/** The simulator's fetch with its JSON answers rewritten by `rewrite` while it is set. */
function hostile(sim: PartnerSimulator) {
  const state: { rewrite: Rewrite | undefined } = { rewrite: undefined };
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const response = await sim.fetch(request);
    const rewrite = state.rewrite;
    if (!rewrite || !response.ok) return response;
    const path = new URL(request.url).pathname.replace(/^\/api\/v1\/s2s/, '');
    const changed = rewrite({ method: request.method, path }, await response.json());
    return new Response(JSON.stringify(changed), {
      status: response.status,
      headers: { 'content-type': 'application/json' },
    });
  };
  return { fetch, state };
}

interface World {
  sim: PartnerSimulator;
  client: PartnerClient;
  state: { rewrite: Rewrite | undefined };
  userId: string;
  /** A second user of the same organisation, with a transfer of its own. */
  other: { userId: string; transferId: string };
}

const worlds: PartnerSimulator[] = [];
afterEach(() => {
  for (const sim of worlds.splice(0)) sim.close();
});

async function world(): Promise<World> {
  const sim = createPartnerSimulator({ autoAdvance: false });
  worlds.push(sim);
  const { fetch, state } = hostile(sim);
  const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch, maxRetries: 0 });
  const user = sim.createUser({ organisationId: sim.demo.organisationId });
  sim.fund(user.userId, 8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 10_000_000n);
  const built = await client.bridge.construct({ userId: user.userId, routeId: ROUTE, amount: '1' });
  return {
    sim,
    client,
    state,
    userId: sim.demo.userId,
    other: { userId: user.userId, transferId: built.transferId },
  };
}

async function submitted(w: World): Promise<{ transferId: string; userOpHash: string }> {
  const signer = privateKeyToAccount(w.sim.demo.wallet.privateKey);
  const { transferId, userOpHash } = await w.client.bridge.execute({
    userId: w.userId,
    routeId: ROUTE,
    amount: '1',
    signer,
  });
  return { transferId, userOpHash };
}

/** The other user's transfer, as the service would show it, under `status`. */
function othersTransfer(w: World, status = 'delivered'): BridgeTransfer {
  return { ...w.sim.transfer(w.other.transferId), status } as BridgeTransfer;
}

/** What a call rejected with, typed loosely so that a test reads its fields. */
const caught = (error: unknown): any => error;

const isRead = (path: string, id: string) => path === `/bridge/transfers/${id}`;

describe('bridge.transfers.get holds the answer against what was asked', () => {
  it('refuses another transfer, naming the field and not the other transfer', async () => {
    const w = await world();
    const { transferId } = await submitted(w);
    w.state.rewrite = ({ path }, body) => (isRead(path, transferId) ? { data: othersTransfer(w) } : body);
    const error = await w.client.bridge.transfers.get({ userId: w.userId, transferId }).catch(caught);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.mismatched).toContain('transferId');
    expect(error.issues.map((issue: { path: string }) => issue.path)).toContain('data.transferId');
    expect(error.message).not.toContain(w.other.transferId);
    expect(error.message).not.toContain(w.other.userId);
  });

  it('refuses this transfer under another user, without naming that user', async () => {
    const w = await world();
    const { transferId } = await submitted(w);
    w.state.rewrite = ({ path }, body) =>
      isRead(path, transferId) ? { data: { ...body.data, userId: w.other.userId } } : body;
    const error = await w.client.bridge.transfers.get({ userId: w.userId, transferId }).catch(caught);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.mismatched).toEqual(['userId']);
    expect(JSON.stringify(error.toJSON())).not.toContain(w.other.userId);
    w.state.rewrite = undefined;
    const right = await w.client.bridge.transfers.get({ userId: w.userId, transferId });
    expect(right.userId).toBe(w.userId);
  });
});

describe('bridge.transfers.list holds one user', () => {
  it("refuses a page holding another user's transfer", async () => {
    const w = await world();
    await submitted(w);
    w.state.rewrite = ({ path }, body) =>
      path === '/bridge/transfers' ? { ...body, data: [...body.data, othersTransfer(w, 'pending')] } : body;
    const error = await w.client.bridge.transfers.list({ userId: w.userId }).catch(caught);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.mismatched).toEqual(['userId']);
    expect(error.message).not.toContain(w.other.userId);
  });

  it('refuses an item of another status than the one filtered for', async () => {
    const w = await world();
    await submitted(w);
    w.state.rewrite = ({ path }, body) =>
      path === '/bridge/transfers'
        ? {
            ...body,
            data: [
              {
                ...w.sim.transfer(body.data[0]?.transferId ?? w.other.transferId),
                userId: w.userId,
                status: 'submitted',
              },
            ],
          }
        : body;
    const error = await w.client.bridge.transfers
      .list({ userId: w.userId, status: 'delivered' })
      .catch(caught);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.mismatched).toEqual(['status']);
  });
});

describe('bridge.transfers.wait never resolves with another transfer', () => {
  it('reads again after a wrong answer and resolves with the transfer asked for', async () => {
    const w = await world();
    const { transferId } = await submitted(w);
    let wrong = 2;
    w.state.rewrite = ({ path }, body) => {
      if (!isRead(path, transferId)) return body;
      if (wrong > 0) {
        wrong--;
        return { data: othersTransfer(w) };
      }
      return body;
    };
    w.sim.advance(transferId, 'source_confirmed');
    w.sim.advance(transferId, 'delivered');
    const done = await w.client.bridge.transfers.wait(
      { userId: w.userId, transferId },
      { pollIntervalMs: 5, maxPollIntervalMs: 5 },
    );
    expect(wrong).toBe(0);
    expect(done.transferId).toBe(transferId);
    expect(done.userId).toBe(w.userId);
  });

  it('times out, with the refused answer as its cause, when every answer is another transfer', async () => {
    const w = await world();
    const { transferId } = await submitted(w);
    w.state.rewrite = ({ path }, body) => (isRead(path, transferId) ? { data: othersTransfer(w) } : body);
    const error = await w.client.bridge.transfers
      .wait(
        { userId: w.userId, transferId },
        { pollIntervalMs: 5, maxPollIntervalMs: 5, totalTimeoutMs: 200 },
      )
      .catch(caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.cause).toBeInstanceOf(ResponseValidationError);
  });
});

describe('bridge.send holds its answer against the batch it sent', () => {
  async function signedBatch(w: World) {
    const built = await w.client.bridge.construct({ userId: w.userId, routeId: ROUTE, amount: '1' });
    const route = (await w.client.bridge.routes()).find((r) => r.routeId === ROUTE)!;
    const verified = verifyBridgeBatch({
      route,
      construct: built,
      wallet: w.sim.demo.wallet.address,
      amount: '1',
    });
    const signed = await signBridgeBatch({
      verified,
      signer: privateKeyToAccount(w.sim.demo.wallet.privateKey),
    });
    return { built, signed };
  }

  it("resolves an answer naming another transfer as an unclear submit: this batch's transfer", async () => {
    const w = await world();
    const { built, signed } = await signedBatch(w);
    w.state.rewrite = ({ path }, body) =>
      path === '/bridge/transaction/batch/send'
        ? { data: { transferId: w.other.transferId, userOpHash: body.data.userOpHash } }
        : body;
    const result = await w.client.bridge.send({ userId: w.userId, intentId: built.intentId, ...signed });
    expect(result.transferId).toBe(built.transferId);
    expect(result.userOpHash).toBe(built.bundle.userOpHash);
  });

  it('throws SubmitOutcomeUnknownError with the batch ids when a changed hash cannot be resolved', async () => {
    const w = await world();
    const { built, signed } = await signedBatch(w);
    w.state.rewrite = ({ path }, body) => {
      if (path === '/bridge/transaction/batch/send')
        return { data: { transferId: body.data.transferId, userOpHash: `0x${'ab'.repeat(32)}` } };
      // The transfer reads as still pending: nothing says the batch was taken.
      if (isRead(path, built.transferId)) return { data: { ...body.data, status: 'pending' } };
      return body;
    };
    // The reads that look for the outcome are seconds apart: on the test's clock, no real wait.
    useTestClock();
    const error = await leaping(
      w.client.bridge.send({ userId: w.userId, intentId: built.intentId, ...signed }, { timeoutMs: 1_000 }),
    ).catch(caught);
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(error.transferId).toBe(built.transferId);
    expect(error.userOpHash).toBe(built.bundle.userOpHash);
    expect(error.cause).toBeInstanceOf(ResponseValidationError);
    expect(error.cause.mismatched).toEqual(['userOpHash']);
  });
});

describe('the tracker holds every observation against its record', () => {
  it('dispatches nothing for a read naming another transfer, and the record stays due', async () => {
    const w = await world();
    const { transferId } = await submitted(w);
    const store = new MemoryTrackerStore();
    const tracker = createTransferTracker({ ...FAST, client: w.client, store });
    const finals: BridgeTransfer[] = [];
    const errors: unknown[] = [];
    tracker.on('final', (t) => void finals.push(t));
    tracker.on('error', (e) => void errors.push(e));
    await tracker.track({ userId: w.userId, transferId });
    w.state.rewrite = ({ path }, body) => (isRead(path, transferId) ? { data: othersTransfer(w) } : body);
    await tracker.runOnce();
    expect(finals).toEqual([]);
    expect(errors[0]).toBeInstanceOf(ResponseValidationError);
    const record = await store.get(transferId);
    expect(record?.final).toBe(false);
    expect(record?.observed).toBeNull();
    // Read again on its schedule, and right this time: final once, for this transfer and user.
    w.state.rewrite = undefined;
    w.sim.advance(transferId, 'source_confirmed');
    w.sim.advance(transferId, 'delivered');
    await tracker.pollOnce(transferId);
    expect(finals.map((t) => [t.transferId, t.userId, t.status])).toEqual([
      [transferId, w.userId, 'delivered'],
    ]);
  });

  it('refuses the same checks from a client known only by its shape', async () => {
    const w = await world();
    const { transferId } = await submitted(w);
    const lying = {
      bridge: {
        transfers: {
          get: async () => ({ ...w.sim.transfer(transferId), userId: w.other.userId, status: 'delivered' }),
          list: w.client.bridge.transfers.list.bind(w.client.bridge.transfers),
        },
      },
    } as never;
    const tracker = createTransferTracker({ ...FAST, client: lying });
    const finals: unknown[] = [];
    const errors: unknown[] = [];
    tracker.on('final', (t) => void finals.push(t));
    tracker.on('error', (e) => void errors.push(e));
    await tracker.track({ userId: w.userId, transferId });
    await tracker.runOnce();
    expect(finals).toEqual([]);
    expect(errors[0]).toBeInstanceOf(ResponseValidationError);
    expect((errors[0] as ResponseValidationError).mismatched).toEqual(['userId']);
  });

  it('does not take a delivery naming another user for a tracked transfer', async () => {
    const w = await world();
    const { transferId } = await submitted(w);
    const router = createCallbackRouter({ authenticate: () => true });
    const store = new MemoryTrackerStore();
    const tracker = createTransferTracker({ ...FAST, client: w.client, store, router });
    const finals: unknown[] = [];
    const errors: unknown[] = [];
    tracker.on('final', (t) => void finals.push(t));
    tracker.on('error', (e) => void errors.push(e));
    await tracker.track({ userId: w.userId, transferId });
    const forged = { ...w.sim.transfer(transferId), userId: w.other.userId, status: 'delivered' };
    const answer = await router.fetchHandler(
      new Request('https://partner.test/callbacks', { method: 'POST', body: JSON.stringify(forged) }),
    );
    expect(answer.status).toBeLessThan(300);
    await until(() => errors.length > 0, 'the mismatch reported');
    expect(errors[0]).toBeInstanceOf(TrackerError);
    expect((errors[0] as TrackerError).stage).toBe('mismatch');
    expect((errors[0] as Error).message).not.toContain(w.other.userId);
    const record = await store.get(transferId);
    expect(record?.observed).toBeNull();
    await tracker.runOnce();
    expect(finals).toEqual([]);
  });

  it("never adopts another user's transfer in the discovery sweep", async () => {
    const w = await world();
    const { transferId } = await submitted(w);
    const otherTransfer = othersTransfer(w, 'pending');
    const listing = {
      bridge: {
        transfers: {
          get: w.client.bridge.transfers.get.bind(w.client.bridge.transfers),
          list: async () => ({
            data: [otherTransfer],
            hasNextPage: () => false,
            getNextPage: async () => {
              throw new Error('no next page');
            },
          }),
        },
      },
    } as never;
    const store = new MemoryTrackerStore();
    const tracker = createTransferTracker({ ...FAST, client: listing, store, discover: { everyMs: 1 } });
    const discovered: unknown[] = [];
    const errors: unknown[] = [];
    tracker.on('discovered', (t) => void discovered.push(t));
    tracker.on('error', (e) => void errors.push(e));
    await tracker.track({ userId: w.userId, transferId });
    await tracker.runOnce();
    expect(discovered).toEqual([]);
    expect(await store.get(w.other.transferId)).toBeUndefined();
    expect(errors.some((e) => e instanceof TrackerError && e.stage === 'mismatch')).toBe(true);
  });
});
