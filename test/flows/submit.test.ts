import { afterEach, describe, expect, it, vi } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import {
  AbortError,
  AuthenticationError,
  IntentNotFoundError,
  InternalServerError,
  isApiError,
  type PartnerClient,
  type RequestOptions,
  ResponseValidationError,
  ServiceUnavailableError,
  SubmitOutcomeUnknownError,
  TimeoutError,
} from '../../src/index.js';
import { freshConstruct } from '../helpers/batches.js';
import { account, bridgeService } from '../helpers/bridge-service.js';
import { envelopeError, json, type MockRequest, makeClient, mockService } from '../helpers/mock-fetch.js';

afterEach(() => {
  vi.useRealTimers();
});

/** An answer that never comes: the request ends only when its signal aborts. */
function hangUntilAborted(request: MockRequest): Promise<Response> {
  return new Promise<Response>((_, reject) => {
    if (request.signal.aborted) reject(request.signal.reason);
    request.signal.addEventListener('abort', () => reject(request.signal.reason));
  });
}

/** Builds an intent with `client` and submits it on its own, outside `execute`. */
async function constructThenSend(client: PartnerClient) {
  const built = await client.bridge.construct({
    userId: 'user-1',
    routeId: 'base-usdc-to-bsc-usdc',
    amount: '25.5',
  });
  const result = await client.bridge.send({
    userId: 'user-1',
    intentId: built.intentId,
    signature: `0xff00${'11'.repeat(64)}1b`,
  });
  return { built, result };
}

/** The outcome of a call under fake timers, after 50 s of them have run. */
async function settle<T>(promise: Promise<T>): Promise<T | unknown> {
  const result = promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  for (let i = 0; i < 50; i++) await vi.advanceTimersByTimeAsync(1_000);
  const outcome = await result;
  return 'error' in outcome ? outcome.error : outcome.value;
}

describe('submit outcome', () => {
  const hangOnce = hangUntilAborted;

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
    const construct = freshConstruct(account.address);
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

  it("reads under the call's timeoutMs, each read one attempt: the schedule is the only retry", async () => {
    vi.useFakeTimers();
    const service = bridgeService({
      'POST /bridge/transaction/batch/send': hangOnce,
      'GET /bridge/transfers/tr_1': hangOnce,
    });
    const client = makeClient(service, { maxRetries: 2 });
    const error = await settle(
      client.bridge.execute(
        { userId: 'user-1', routeId: 'base-usdc-to-bsc-usdc', amount: '25.5', signer: account },
        { timeoutMs: 50 },
      ),
    );
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
    expect(service.count('GET /bridge/transfers/tr_1')).toBe(4);
  });

  it('treats a re-submit answered as spent as success when the transfer moved on', async () => {
    const service = bridgeService({
      'POST /bridge/transaction/batch/send': () =>
        envelopeError(400, 'INTENT_NOT_FOUND', 'intent already submitted'),
    });
    const client = makeClient(service);
    const { built, result } = await constructThenSend(client);
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
        signature: `0xff00${'11'.repeat(64)}1b`,
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
      .bridge.send({ userId: 'user-1', intentId: 'elsewhere', signature: `0xff00${'11'.repeat(64)}1b` })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(error).toMatchObject({ intentId: 'elsewhere', transferId: undefined });
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
  });
});

describe('a submit is never sent twice, and its outcome is never lost', () => {
  const SEND = 'POST /bridge/transaction/batch/send';
  const READ = 'GET /bridge/transfers/tr_1';
  const construct = freshConstruct(account.address);
  const ids = { intentId: 'int_1', transferId: 'tr_1', userOpHash: construct.bundle.userOpHash };
  const execute = (client: PartnerClient, options?: RequestOptions) =>
    client.bridge.execute(
      { userId: 'user-1', routeId: 'base-usdc-to-bsc-usdc', amount: '25.5', signer: account },
      options,
    );
  const pending = () => json({ data: transfer({ status: 'pending' }) });
  const revoked = () =>
    envelopeError(401, 'UNAUTHORIZED', 'revoked', {}, { 'www-authenticate': 'Bearer error="invalid_token"' });

  const unreadable: [string, () => Response][] = [
    [
      'an HTML page',
      () => new Response('<html>ok</html>', { status: 200, headers: { 'content-type': 'text/html' } }),
    ],
    ['an empty body', () => new Response(null, { status: 200 })],
    ['truncated JSON', () => new Response('{"data":{"transferId":"tr_1","userOp', { status: 201 })],
    ['a body of the wrong shape', () => json({ data: { accepted: true } })],
    ['a body over maxResponseBytes', () => json({ data: { ...ids, padding: 'x'.repeat(100_000) } })],
  ];

  it.each(unreadable)('a 2xx with %s: execute reads the transfer and returns it', async (_, answer) => {
    const service = bridgeService({ [SEND]: answer }, construct);
    const result = await execute(makeClient(service, { maxResponseBytes: 64 * 1024 }));
    expect(result.transferId).toBe('tr_1');
    expect(service.count(SEND)).toBe(1);
    expect(service.count(READ)).toBeGreaterThanOrEqual(1);
  });

  it.each(unreadable)(
    'a 2xx with %s and a transfer that stays pending: SubmitOutcomeUnknownError',
    async (_, answer) => {
      vi.useFakeTimers();
      const service = bridgeService({ [SEND]: answer, [READ]: pending }, construct);
      const error = await settle(execute(makeClient(service, { maxResponseBytes: 64 * 1024 })));
      expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
      expect(error).toMatchObject(ids);
      expect((error as Error).cause).toBeInstanceOf(ResponseValidationError);
      expect(service.count(SEND)).toBe(1);
    },
  );

  it('send on its own resolves an unreadable 2xx the same way', async () => {
    const service = bridgeService({ [SEND]: unreadable[0]![1] }, construct);
    const client = makeClient(service);
    const { result } = await constructThenSend(client);
    expect(result).toEqual({ transferId: 'tr_1', userOpHash: construct.bundle.userOpHash });
    expect(service.count(SEND)).toBe(1);
  });

  it("a 503 that is not the service's envelope is unclear: the transfer is read, never re-sent", async () => {
    const service = bridgeService(
      {
        [SEND]: () =>
          new Response('<html>upstream connect error or disconnect/reset before headers</html>', {
            status: 503,
            headers: { 'content-type': 'text/html' },
          }),
      },
      construct,
    );
    const result = await execute(makeClient(service, { maxRetries: 3 }));
    expect(result.transferId).toBe('tr_1');
    expect(service.count(SEND)).toBe(1);
    expect(service.count(READ)).toBeGreaterThanOrEqual(1);
  });

  it("the service's own 503 is a clear refusal: thrown with the ids, nothing read, nothing re-sent", async () => {
    const service = bridgeService(
      { [SEND]: () => envelopeError(503, 'BRIDGE_UNREACHABLE', 'down') },
      construct,
    );
    const error = await execute(makeClient(service, { maxRetries: 3 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject(ids);
    expect(service.count(SEND)).toBe(1);
    expect(service.count(READ)).toBe(0);
  });

  it('every other error after the submit went out carries the ids too, and keeps its class', async () => {
    const service = bridgeService(
      {
        [SEND]: () => envelopeError(400, 'VALIDATION_FAILED', 'bad signature', { errors: ['bad signature'] }),
      },
      construct,
    );
    const error = await execute(makeClient(service)).catch((e: unknown) => e);
    expect(isApiError(error, 'VALIDATION_FAILED')).toBe(true);
    expect(error).toMatchObject(ids);
    expect(JSON.parse(JSON.stringify(error))).toMatchObject(ids);
    expect(service.count(SEND)).toBe(1);
  });

  it('a failure before the submit went out is thrown as it is: nothing was sent', async () => {
    const service = mockService({
      token: () => envelopeError(500, 'INTERNAL', 'token store down'),
      routes: { [SEND]: () => json({ data: ids }) },
    });
    const error = await makeClient(service, { maxRetries: 0 })
      .bridge.send({ userId: 'user-1', intentId: 'int_1', signature: `0xff00${'11'.repeat(64)}1b` })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(service.count(SEND)).toBe(0);
  });

  describe('the caller aborts after the submit went out', () => {
    function abortingSubmit(controller: AbortController) {
      return (request: MockRequest) => {
        setTimeout(() => controller.abort(new Error('shutting down')), 1);
        return hangUntilAborted(request);
      };
    }

    it('one bounded read without the aborted signal: the transfer it finds is returned', async () => {
      const controller = new AbortController();
      const readSignals: boolean[] = [];
      const service = bridgeService(
        {
          [SEND]: abortingSubmit(controller),
          [READ]: (request) => {
            readSignals.push(request.signal.aborted);
            return json({ data: transfer({ status: 'submitted' }) });
          },
        },
        construct,
      );
      const result = await execute(makeClient(service), { signal: controller.signal });
      expect(result.transferId).toBe('tr_1');
      expect(readSignals).toEqual([false]);
      expect(service.count(SEND)).toBe(1);
    });

    it('a transfer still pending: SubmitOutcomeUnknownError with the ids after that one read', async () => {
      const controller = new AbortController();
      const service = bridgeService({ [SEND]: abortingSubmit(controller), [READ]: pending }, construct);
      const error = await execute(makeClient(service), { signal: controller.signal }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
      expect(error).toMatchObject(ids);
      expect((error as Error).cause).toBeInstanceOf(AbortError);
      expect(service.count(SEND)).toBe(1);
      expect(service.count(READ)).toBe(1);
    });

    it('a read that never answers cannot hold the call: it ends within the attempt time', async () => {
      const controller = new AbortController();
      const service = bridgeService(
        { [SEND]: abortingSubmit(controller), [READ]: hangUntilAborted },
        construct,
      );
      const error = await execute(makeClient(service), { signal: controller.signal, timeoutMs: 100 }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
      expect(error).toMatchObject(ids);
      expect(service.count(READ)).toBe(1);
    });

    it('an abort before the submit went out is a plain AbortError and nothing is sent', async () => {
      const controller = new AbortController();
      const service = bridgeService(
        {
          'POST /bridge/construct/transaction/batch': (request) => {
            setTimeout(() => controller.abort(), 1);
            return hangUntilAborted(request);
          },
        },
        construct,
      );
      const error = await execute(makeClient(service), { signal: controller.signal }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AbortError);
      expect(service.count(SEND)).toBe(0);
    });
  });

  describe('a 401 on the submit', () => {
    it('is not replayed with a new token: the transfer is read with one instead', async () => {
      const service = bridgeService({ [SEND]: revoked }, construct);
      const result = await execute(makeClient(service));
      expect(result.transferId).toBe('tr_1');
      expect(service.count(SEND)).toBe(1);
      expect(service.tokensIssued).toHaveLength(2);
      const read = service.calls.find((call) => `${call.method} ${call.path}` === READ)!;
      expect(read.headers.get('authorization')).toBe('Bearer token-2');
    });

    it('with a stopped credential: SubmitOutcomeUnknownError after one read, since reading again cannot help', async () => {
      vi.useFakeTimers();
      const service = bridgeService({ [SEND]: revoked, [READ]: revoked }, construct);
      const error = await settle(execute(makeClient(service)));
      expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
      expect(error).toMatchObject(ids);
      expect((error as Error).cause).toBeInstanceOf(AuthenticationError);
      expect(service.count(SEND)).toBe(1);
      // One outcome read and no more: like every read, its first 401 is replayed once with a new
      // token (one revoked token is not a stopped credential), and the second 401 concludes it.
      expect(service.count(READ)).toBe(2);
    });
  });
});
