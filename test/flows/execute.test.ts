import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AbortError,
  ArgumentError,
  BatchVerificationError,
  type BridgeSigner,
  type ExecuteProgress,
  PartnerClient,
  TimeoutError,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { ATTACKER, addressWord, freshConstruct, setWord } from '../helpers/batches.js';
import { account, bridgeService } from '../helpers/bridge-service.js';
import { makeClient } from '../helpers/mock-fetch.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('bridge.execute', () => {
  it('runs route → construct → verify → sign → send and reports each step', async () => {
    const service = bridgeService();
    const steps: ExecuteProgress['step'][] = [];
    const result = await makeClient(service).bridge.execute({
      userId: 'user-1',
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '25.5',
      signer: account,
      onProgress: (progress) => steps.push(progress.step),
    });
    expect(steps).toEqual(['route', 'constructed', 'verified', 'signed', 'submitted']);
    expect(result.transferId).toBe('tr_1');
    expect(result.route.routeId).toBe('base-usdc-to-bsc-usdc');
    expect(result.summary.totalDebit.amount).toBe('25.62');
    const sent = JSON.parse(service.calls.find((c) => c.path === '/bridge/transaction/batch/send')!.body);
    expect(sent.intentId).toBe('int_1');
    expect(sent.signature).toMatch(/^0xff00/);
    expect(sent.authorization).toMatchObject({ yParity: expect.any(Number) });
    expect(
      JSON.parse(service.calls.find((c) => c.path === '/bridge/construct/transaction/batch')!.body),
    ).toEqual({
      userId: 'user-1',
      routeId: 'base-usdc-to-bsc-usdc',
      amount: 25.5,
    });
  });

  it('a progress callback that throws changes nothing: the transfer id still comes back', async () => {
    const service = bridgeService();
    const result = await makeClient(service).bridge.execute({
      userId: 'user-1',
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '25.5',
      signer: account,
      onProgress: () => {
        throw new Error('observer bug');
      },
    });
    expect(result.transferId).toBe('tr_1');
    expect(service.calls.filter((c) => c.path === '/bridge/transaction/batch/send')).toHaveLength(1);
  });

  it('reads the signer address once: the batch is verified for the wallet that signs', async () => {
    const service = bridgeService();
    let reads = 0;
    const signer = {
      get address() {
        reads++;
        return reads === 1 ? account.address : ATTACKER;
      },
      signMessage: account.signMessage,
      signAuthorization: account.signAuthorization,
    };
    await makeClient(service).bridge.execute({
      userId: 'user-1',
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '25.5',
      signer: signer as BridgeSigner,
    });
    expect(reads).toBe(1);
  });

  it('signs nothing and sends nothing when the batch fails a check', async () => {
    const tampered = freshConstruct(account.address, (c) => {
      c.bundle.calls[1]!.data = setWord(c.bundle.calls[1]!.data, 1, addressWord(ATTACKER));
    });
    const service = bridgeService({}, tampered);
    let signed = false;
    const signer: BridgeSigner = {
      address: account.address,
      signMessage: async (args) => {
        signed = true;
        return account.signMessage(args);
      },
      signAuthorization: account.signAuthorization,
    };
    const error = await makeClient(service)
      .bridge.execute({ userId: 'user-1', routeId: 'base-usdc-to-bsc-usdc', amount: '25.5', signer })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BatchVerificationError);
    expect(signed).toBe(false);
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(0);
  });

  it('checks the batch against the signer wallet', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    const service = bridgeService();
    await expect(
      makeClient(service).bridge.execute({
        userId: 'user-1',
        routeId: 'base-usdc-to-bsc-usdc',
        amount: '25.5',
        signer: other,
      }),
    ).rejects.toBeInstanceOf(BatchVerificationError);
  });

  it('looks the route up by id and never assumes one', async () => {
    const service = bridgeService();
    const error = await makeClient(service)
      .bridge.execute({ userId: 'user-1', routeId: 'bsc-usdc-to-base-usdc', amount: '1', signer: account })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArgumentError);
    expect(service.count('POST /bridge/construct/transaction/batch')).toBe(0);
  });

  it('caches routes for up to a minute', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const service = bridgeService();
    const client = makeClient(service);
    const run = () =>
      client.bridge.execute({
        userId: 'user-1',
        routeId: 'base-usdc-to-bsc-usdc',
        amount: '25.5',
        signer: account,
      });
    await run();
    await run();
    expect(service.count('GET /bridge/routes')).toBe(1);
    vi.setSystemTime(Date.now() + 61_000);
    await run().catch(() => undefined); // the quote's expiry moved with the clock: only the read counts here
    expect(service.count('GET /bridge/routes')).toBe(2);
  });

  it('checks its arguments before any request', async () => {
    const service = bridgeService();
    const client = makeClient(service);
    await expect(
      client.bridge.execute({ userId: 'u', routeId: 'r', amount: '1', signer: {} as never }),
    ).rejects.toBeInstanceOf(ArgumentError);
    await expect(
      client.bridge.execute({
        userId: 'u',
        routeId: 'r',
        amount: '1',
        maxAmount: true,
        signer: account,
      } as never),
    ).rejects.toBeInstanceOf(ArgumentError);
    expect(service.calls).toHaveLength(0);
  });
});

describe('bridge.execute: the signing step is bounded by the call', () => {
  const SUBMIT = '/bridge/transaction/batch/send';

  /** The simulator's demo wallet behind a signer that answers only when told to. */
  function stalledSigner(sim: PartnerSimulator) {
    const wallet = privateKeyToAccount(sim.demo.wallet.privateKey);
    const started: string[] = [];
    let fail: ((error: Error) => void) | undefined;
    const stall = (what: string) => () => {
      started.push(what);
      return new Promise<never>((_, reject) => {
        fail = reject;
      });
    };
    const signer: BridgeSigner = {
      address: wallet.address,
      signMessage: stall('message'),
      signAuthorization: stall('authorization'),
    };
    return { signer, started, rejectLater: () => fail?.(new Error('KMS gave up')) };
  }

  function setup() {
    const sim = createPartnerSimulator();
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    const submits = () => sim.requests.filter((r) => r.method === 'POST' && r.path === SUBMIT).length;
    return { sim, client, submits, routeId: sim.routes()[0]!.routeId, userId: sim.demo.userId };
  }

  const unhandled: unknown[] = [];
  const track = (reason: unknown) => void unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', track);
  });
  afterEach(() => {
    process.off('unhandledRejection', track);
  });

  /** Executes with a stalled signer and a signal fired once the batch is verified (`laterMs` after). */
  async function executeAborted(laterMs: number | undefined) {
    const { sim, client, submits, routeId, userId } = setup();
    const stalled = stalledSigner(sim);
    const controller = new AbortController();
    const abort = () => controller.abort(new Error('shutting down'));
    const error = await client.bridge
      .execute(
        {
          userId,
          routeId,
          amount: '25',
          signer: stalled.signer,
          onProgress: (p) => {
            if (p.step !== 'verified') return;
            if (laterMs === undefined) abort();
            else setTimeout(abort, laterMs);
          },
        },
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    return { error, submits, ...stalled };
  }

  it('a signer that never answers ends in AbortError when the signal fires, and nothing is submitted', async () => {
    const { error, started, submits, rejectLater } = await executeAborted(20);
    expect(error).toBeInstanceOf(AbortError);
    expect(started.length).toBeGreaterThan(0);
    expect(submits()).toBe(0);
    // The signer that answers later cannot reach anything.
    rejectLater();
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
    expect(submits()).toBe(0);
  });

  it("a signer that never answers ends in TimeoutError after the call's timeoutMs, and nothing is submitted", async () => {
    const { sim, client, submits, routeId, userId } = setup();
    const { signer, started, rejectLater } = stalledSigner(sim);
    const error = await client.bridge
      .execute({ userId, routeId, amount: '25', signer }, { timeoutMs: 1_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(started.length).toBeGreaterThan(0);
    expect(submits()).toBe(0);
    rejectLater();
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });

  it('a signal that fired before signing starts no signer', async () => {
    const { error, started, submits } = await executeAborted(undefined);
    expect(error).toBeInstanceOf(AbortError);
    expect(started).toEqual([]);
    expect(submits()).toBe(0);
  });
});
