import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AbortError,
  ArgumentError,
  BatchVerificationError,
  type BridgeConstructResult,
  type BridgeSigner,
  type ExecuteProgress,
  IntentNotFoundError,
  SubmitOutcomeUnknownError,
  TimeoutError,
  type TransferStatus,
} from '../src/index.js';
import { buildBridgeBundle } from '../src/testing/index.js';
import { ATTACKER, addressWord, setWord } from './helpers/batches.js';
import { quote, route, transfer } from './helpers/fixtures.js';
import { envelopeError, json, type MockRequest, makeClient, mockService } from './helpers/mock-fetch.js';

const account = privateKeyToAccount(generatePrivateKey());

function constructFor(
  wallet: `0x${string}`,
  tamper?: (c: BridgeConstructResult) => void,
): BridgeConstructResult {
  const expiresAt = new Date(Date.now() + 120_000).toISOString();
  const q = quote({ expiresAt });
  const now = Math.floor(Date.now() / 1000);
  const bundle = buildBridgeBundle({
    route: route(),
    wallet,
    amountInRaw: 25_500_000n,
    amountOutRaw: BigInt(q.amountOutRaw),
    gasFeeRaw: 120_000n,
    quoteTimestamp: now,
    fillDeadline: now + 3 * 3600 + 900,
    authorizationNonce: 0,
  });
  const construct = { transferId: 'tr_1', intentId: 'int_1', bundle, quote: q };
  tamper?.(construct);
  return construct;
}

function bridgeService(
  overrides: Record<string, (request: MockRequest) => Response | Promise<Response>> = {},
  construct = constructFor(account.address),
) {
  return mockService({
    routes: {
      'GET /bridge/routes': () => json({ data: [route(), route({ routeId: 'reverse' })] }),
      'POST /bridge/construct/transaction/batch': () => json({ data: construct }),
      'POST /bridge/transaction/batch/send': () =>
        json({ data: { userOpHash: construct.bundle.userOpHash, transferId: 'tr_1' } }),
      'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'submitted' }) }),
      ...overrides,
    },
  });
}

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
    const tampered = constructFor(account.address, (c) => {
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

describe('submit outcome', () => {
  const hangOnce = (request: MockRequest) =>
    new Promise<Response>((_, reject) =>
      request.signal.addEventListener('abort', () => reject(request.signal.reason)),
    );

  async function settle<T>(promise: Promise<T>): Promise<T | unknown> {
    const result = promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    for (let i = 0; i < 50; i++) await vi.advanceTimersByTimeAsync(1_000);
    const outcome = await result;
    return 'error' in outcome ? outcome.error : outcome.value;
  }

  it('after a timeout, reads the transfer and returns the submit it finds', async () => {
    const service = bridgeService({ 'POST /bridge/transaction/batch/send': hangOnce });
    const client = makeClient(service, { timeoutMs: 50 });
    const result = await client.bridge.execute({
      userId: 'user-1',
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '25.5',
      signer: account,
    });
    expect(result.transferId).toBe('tr_1');
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
    expect(service.count('GET /bridge/transfers/tr_1')).toBeGreaterThanOrEqual(1);
  });

  it('reports SubmitOutcomeUnknownError when the transfer stays pending, and never submits twice', async () => {
    vi.useFakeTimers();
    const construct = constructFor(account.address);
    const service = bridgeService(
      {
        'POST /bridge/transaction/batch/send': hangOnce,
        'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'pending' }) }),
      },
      construct,
    );
    const client = makeClient(service, { timeoutMs: 50 });
    const error = await settle(
      client.bridge.execute({
        userId: 'user-1',
        routeId: 'base-usdc-to-bsc-usdc',
        amount: '25.5',
        signer: account,
      }),
    );
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(error).toMatchObject({
      intentId: 'int_1',
      transferId: 'tr_1',
      userOpHash: construct.bundle.userOpHash,
    });
    expect((error as SubmitOutcomeUnknownError).cause).toBeInstanceOf(TimeoutError);
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
  });

  it('treats a re-submit answered as spent as success when the transfer moved on', async () => {
    const service = bridgeService({
      'POST /bridge/transaction/batch/send': () =>
        envelopeError(400, 'INTENT_NOT_FOUND', 'intent already submitted'),
    });
    const client = makeClient(service);
    const built = await client.bridge.construct({
      userId: 'user-1',
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '25.5',
    });
    const result = await client.bridge.send({
      userId: 'user-1',
      intentId: built.intentId,
      signature: `0xff00${'11'.repeat(65)}`,
    });
    expect(result).toEqual({ transferId: 'tr_1', userOpHash: built.bundle.userOpHash });
  });

  it('keeps INTENT_NOT_FOUND for an intent the client does not know', async () => {
    const service = bridgeService({
      'POST /bridge/transaction/batch/send': () => envelopeError(400, 'INTENT_NOT_FOUND', 'expired'),
    });
    await expect(
      makeClient(service).bridge.send({
        userId: 'user-1',
        intentId: 'elsewhere',
        signature: `0xff00${'11'.repeat(65)}`,
      }),
    ).rejects.toBeInstanceOf(IntentNotFoundError);
  });

  it('an unknown intent after a lost answer is an unknown outcome', async () => {
    const service = bridgeService({
      'POST /bridge/transaction/batch/send': () => {
        throw new TypeError('fetch failed');
      },
    });
    const error = await makeClient(service)
      .bridge.send({ userId: 'user-1', intentId: 'elsewhere', signature: `0xff00${'11'.repeat(65)}` })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(error).toMatchObject({ intentId: 'elsewhere', transferId: undefined });
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
  });
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

  it('gives up after timeoutMs, and stops on abort', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'submitted' }) }) },
    });
    const client = makeClient(service);
    await expect(
      client.bridge.transfers.wait({ userId: 'u', transferId: 'tr_1' }, { timeoutMs: 30, pollIntervalMs: 5 }),
    ).rejects.toBeInstanceOf(TimeoutError);
    const controller = new AbortController();
    const pending = client.bridge.transfers.wait(
      { userId: 'u', transferId: 'tr_1' },
      { signal: controller.signal, pollIntervalMs: 10_000 },
    );
    setTimeout(() => controller.abort(), 10);
    await expect(pending).rejects.toBeInstanceOf(AbortError);
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
