import fc from 'fast-check';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { route, transfer } from '../fixtures/wire.js';
import {
  ArgumentError,
  CallbackParseError,
  createCallbackRouter,
  fromRawAmount,
  isPartnerError,
  PartnerClient,
  parseBridgeCallback,
  SubmitOutcomeUnknownError,
  signBridgeBatch,
  toRawAmount,
  verifyBridgeBatch,
} from '../src/index.js';
import { freshConstruct, validConstruct } from './helpers/batches.js';
import { json, type MockService, makeClient, mockService } from './helpers/mock-fetch.js';

const account = privateKeyToAccount(`0x${'7'.repeat(64)}`);
const DECIMAL_LITERAL = /"amount":(0|[1-9]\d*)(\.\d+)?[,}]/;

/** Values that look like arguments: near misses of valid ones, and anything at all. */
const argument = fc.oneof(
  fc.anything(),
  fc.record(
    {
      userId: fc.oneof(fc.string(), fc.constant('user-1'), fc.anything()),
      routeId: fc.oneof(fc.string(), fc.constant('r1')),
      transferId: fc.oneof(fc.string(), fc.constant('tr_1')),
      intentId: fc.oneof(fc.string(), fc.constant('int_1')),
      amount: fc.oneof(
        fc.string(),
        fc.double(),
        fc.constantFrom('25.5', '0', '-1', '1e3', '007', '1.', ' 2 '),
      ),
      maxAmount: fc.oneof(fc.boolean(), fc.anything()),
      limit: fc.oneof(fc.integer(), fc.double()),
      status: fc.oneof(fc.string(), fc.constantFrom('delivered', 'pending')),
      signature: fc.oneof(fc.string(), fc.constant(`0xff00${'11'.repeat(64)}1b`)),
      cursor: fc.string(),
    },
    { requiredKeys: [] },
  ),
);

/**
 * Values that fight back when read: a proxy whose every trap throws, a getter that throws, and a
 * value whose `toString` and `valueOf` throw. fast-check itself inspects the values it draws, so it
 * draws a marker, and `materialize` builds the real thing just before the call.
 */
class Hostile {
  constructor(readonly kind: 'proxy' | 'getter' | 'toString') {}
}
const hostile = fc.constantFrom('proxy', 'getter', 'toString').map((kind) => new Hostile(kind));

function materialize(value: unknown): unknown {
  if (value instanceof Hostile) {
    const trap = () => {
      throw new Error(value.kind);
    };
    if (value.kind === 'proxy')
      return new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
    if (value.kind === 'getter')
      return Object.defineProperty({ userId: 'u', routeId: 'r', amount: '1' }, 'userId', {
        enumerable: true,
        get: trap,
      });
    return { toString: trap, valueOf: trap };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, materialize(entry)]));
}

/** Option objects: near misses of valid ones (a signal that is not an AbortSignal, timers too long), and anything. */
const options = fc.oneof(
  fc.anything(),
  hostile,
  fc.record(
    {
      signal: fc.oneof(
        fc.anything(),
        fc.constant({ aborted: false, addEventListener() {} }),
        fc.constant(new AbortController().signal),
      ),
      timeoutMs: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(1e15, 2 ** 31, 0, -1, 5_000)),
      maxRetries: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-1, 11, 0, 2)),
      pollIntervalMs: fc.oneof(fc.integer(), fc.constantFrom(1e12, 0)),
      maxPollIntervalMs: fc.oneof(fc.integer(), fc.constantFrom(1e12, 0)),
      router: fc.oneof(fc.anything(), hostile),
    },
    { requiredKeys: [] },
  ),
);

/** What a call threw, or undefined when it succeeded. */
const failureOf = (call: Promise<unknown>): Promise<unknown> =>
  call.then(
    () => undefined,
    (error: unknown) => error,
  );

/** The requests a service saw besides token requests. */
const dataCalls = (service: MockService) => service.calls.filter((call) => call.path !== '/auth/token');

/** A valid first argument for every method. */
const VALID: Record<string, unknown> = {
  quote: { userId: 'u', routeId: 'r', amount: '1' },
  feeEstimate: { routeId: 'r', amount: '1' },
  construct: { userId: 'u', routeId: 'r', amount: '1' },
  send: { userId: 'u', intentId: 'i', signature: `0xff00${'11'.repeat(64)}1b` },
  list: { userId: 'u' },
  get: { userId: 'u', transferId: 't' },
  wait: { userId: 'user-1', transferId: 'tr_1' },
  execute: { userId: 'u', routeId: 'base-usdc-to-bsc-usdc', amount: '25.5' },
  routesOptions: undefined,
};

type Call = (client: PartnerClient, input: unknown) => Promise<unknown>;
const calls: Record<string, Call> = {
  quote: (c, x) => c.bridge.quote(x as never),
  feeEstimate: (c, x) => c.bridge.feeEstimate(x as never),
  construct: (c, x) => c.bridge.construct(x as never),
  send: (c, x) => c.bridge.send(x as never),
  list: async (c, x) => c.bridge.transfers.list(x as never),
  get: (c, x) => c.bridge.transfers.get(x as never),
  wait: (c, x) => c.bridge.transfers.wait(x as never, { timeoutMs: 20, pollIntervalMs: 1 }),
  execute: (c, x) => c.bridge.execute({ ...(x as object), signer: account } as never),
  routesOptions: (c, x) => c.bridge.routes(x as never),
};

function answering() {
  return mockService({
    routes: {
      'POST /bridge/quote': () =>
        json(
          { statusCode: 400, error: 'Bad Request', code: 'VALIDATION_FAILED', message: 'x', errors: ['x'] },
          400,
        ),
      'GET /bridge/fee-estimate': () => json({ data: { finalAmount: '1' } }),
      'POST /bridge/construct/transaction/batch': () => json({ data: validConstruct() }),
      'POST /bridge/transaction/batch/send': () =>
        json({ data: { userOpHash: `0x${'ab'.repeat(32)}`, transferId: 'tr_1' } }),
      'GET /bridge/transfers': () => json({ data: [transfer()], nextCursor: null }),
      'GET /bridge/routes': () => json({ data: [route()] }),
      'GET *': () => json({ data: transfer() }),
    },
  });
}

describe('fuzz: any input to any public method', () => {
  it.each(Object.keys(calls))(
    '%s gives a result or a typed error, and sends nothing it should not',
    async (name) => {
      await fc.assert(
        fc.asyncProperty(argument, async (input) => {
          const service = answering();
          const client = makeClient(service, { maxRetries: 0 });
          const outcome = await failureOf(calls[name]!(client, input));
          if (outcome !== undefined) expect(isPartnerError(outcome), String(outcome)).toBe(true);
          const data = dataCalls(service);
          if (outcome instanceof ArgumentError) expect(data).toEqual([]);
          for (const call of data) {
            if (!call.body) continue;
            expect(() => JSON.parse(call.body)).not.toThrow();
            if (call.body.includes('"amount"')) expect(call.body).toMatch(DECIMAL_LITERAL);
          }
        }),
        { numRuns: 120, seed: 2026 },
      );
    },
  );

  const takingParams: Record<string, Call> = {
    ...calls,
    // Called without the spread of `calls.execute`, which would read the value in the test itself.
    execute: (c, x) => c.bridge.execute(x as never),
  };
  it.each(Object.keys(takingParams))('%s takes hostile arguments as an ArgumentError', async (name) => {
    await fc.assert(
      fc.asyncProperty(hostile, async (input) => {
        const service = answering();
        const outcome = await failureOf(
          takingParams[name]!(makeClient(service, { maxRetries: 0 }), materialize(input)),
        );
        // Options made of nothing but a throwing toString name no option: they are valid.
        if (name === 'routesOptions' && input.kind === 'toString') expect(outcome).toBeUndefined();
        else expect(outcome).toBeInstanceOf(ArgumentError);
        if (outcome instanceof ArgumentError) expect(dataCalls(service)).toEqual([]);
      }),
      { numRuns: 9, seed: 5 },
    );
  });

  const withOptions: Record<string, (c: PartnerClient, o: unknown) => Promise<unknown>> = {
    me: (c, o) => c.me(o as never),
    routes: (c, o) => c.bridge.routes(o as never),
    quote: (c, o) => c.bridge.quote(VALID.quote as never, o as never),
    feeEstimate: (c, o) => c.bridge.feeEstimate(VALID.feeEstimate as never, o as never),
    construct: (c, o) => c.bridge.construct(VALID.construct as never, o as never),
    send: (c, o) => c.bridge.send(VALID.send as never, o as never),
    list: async (c, o) => c.bridge.transfers.list(VALID.list as never, o as never),
    get: (c, o) => c.bridge.transfers.get(VALID.get as never, o as never),
    wait: (c, o) => c.bridge.transfers.wait(VALID.wait as never, o as never),
    execute: (c, o) =>
      c.bridge.execute({ ...(VALID.execute as object), signer: account } as never, o as never),
  };
  it.each(Object.keys(withOptions))(
    '%s checks its options before any request: bad ones are an ArgumentError',
    async (name) => {
      await fc.assert(
        fc.asyncProperty(options, async (input) => {
          // A final transfer, so that a wait with valid options returns at once.
          const service = mockService({
            routes: {
              'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'delivered' }) }),
              'GET *': () =>
                json({ statusCode: 404, error: 'Not Found', code: 'NOT_FOUND', message: 'x' }, 404),
              'POST *': () =>
                json({ statusCode: 404, error: 'Not Found', code: 'NOT_FOUND', message: 'x' }, 404),
            },
          });
          const outcome = await failureOf(
            withOptions[name]!(makeClient(service, { maxRetries: 0 }), materialize(input)),
          );
          if (outcome !== undefined) expect(isPartnerError(outcome), String(outcome)).toBe(true);
          const sent = dataCalls(service);
          if (outcome instanceof ArgumentError) expect(sent).toEqual([]);
          else {
            // Accepted options are ones the SDK can honour: a real signal and timers that fit.
            const o = (input ?? {}) as Record<string, unknown>;
            if (o.signal !== undefined) expect(o.signal).toBeInstanceOf(AbortSignal);
            const timers =
              name === 'wait' ? ['timeoutMs', 'pollIntervalMs', 'maxPollIntervalMs'] : ['timeoutMs'];
            for (const key of timers) {
              if (o[key] !== undefined) expect(o[key]).toBeLessThanOrEqual(2 ** 31 - 1);
            }
          }
        }),
        { numRuns: 150, seed: 31 },
      );
    },
  );

  it('the client constructor throws only ArgumentError', () => {
    fc.assert(
      fc.property(
        fc.anything(),
        fc.record(
          {
            baseUrl: fc.oneof(fc.webUrl(), fc.string()),
            clientId: fc.string(),
            clientSecret: fc.string(),
            scope: fc.anything(),
          },
          { requiredKeys: [] },
        ),
        (a, b) => {
          for (const options of [a, b]) {
            try {
              new PartnerClient(options as never);
            } catch (error) {
              expect(error).toBeInstanceOf(ArgumentError);
            }
          }
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });

  const any = fc.oneof(fc.anything(), hostile);
  it('verify, sign and the amount helpers throw only typed errors', async () => {
    await fc.assert(
      fc.asyncProperty(any, any, any, async (...drawn) => {
        const [a, b, c] = drawn.map(materialize);
        const outcomes = await Promise.all([
          Promise.resolve()
            .then(() => verifyBridgeBatch({ route: a, construct: b, wallet: c } as never))
            .catch((e: unknown) => e),
          Promise.resolve()
            .then(() =>
              verifyBridgeBatch({
                route: route(),
                construct: { ...validConstruct(), quote: a },
                wallet: account.address,
              } as never),
            )
            .catch((e: unknown) => e),
          signBridgeBatch({ bundle: a, signer: b } as never).catch((e: unknown) => e),
          signBridgeBatch({ verified: a, signer: b } as never).catch((e: unknown) => e),
          signBridgeBatch({ unverifiedBundle: a, signer: b } as never).catch((e: unknown) => e),
          Promise.resolve()
            .then(() => toRawAmount(a as never, b as never))
            .catch((e: unknown) => e),
          Promise.resolve()
            .then(() => fromRawAmount(a as never, c as never))
            .catch((e: unknown) => e),
          Promise.resolve()
            .then(() =>
              verifyBridgeBatch(
                { route: route(), construct: validConstruct(), wallet: account.address },
                a as never,
              ),
            )
            .catch((e: unknown) => e),
          Promise.resolve()
            .then(() => createCallbackRouter(a as never))
            .catch((e: unknown) => e),
        ]);
        for (const outcome of outcomes) {
          if (outcome instanceof Error) expect(isPartnerError(outcome), String(outcome)).toBe(true);
        }
      }),
      { numRuns: 200, seed: 11 },
    );
  });
});

/** Server answers of every kind: statuses, headers and bodies a broken or hostile server may send. */
const answer = fc.record({
  status: fc.oneof(fc.integer({ min: 200, max: 599 }), fc.constantFrom(200, 401, 403, 429, 503)),
  contentType: fc.constantFrom('application/json', 'text/html', 'text/plain', ''),
  retryAfter: fc.option(
    fc.oneof(fc.string(), fc.constantFrom('1', '0', '-5', '999999', 'Wed, 21 Oct 2015 07:28:00 GMT')),
    { nil: undefined },
  ),
  challenge: fc.option(fc.string(), { nil: undefined }),
  body: fc.oneof(
    fc.string(),
    fc.json(),
    fc.constant('<html><body>502 Bad Gateway</body></html>'),
    fc.constant('{"data": ['),
    fc.constant(`{"data":${'9'.repeat(400)}}`),
    fc.jsonValue().map((value) => JSON.stringify({ data: value })),
    fc.jsonValue().map((value) =>
      JSON.stringify({
        statusCode: 400,
        error: 'x',
        code: 'INSUFFICIENT_BALANCE',
        message: 'x',
        token: value,
        required: value,
      }),
    ),
    fc.jsonValue().map((value) => JSON.stringify({ data: { ...transfer(), status: value } })),
    fc.jsonValue().map((value) => JSON.stringify({ error: value, error_description: value })),
  ),
});

/** A handler that gives a drawn answer. */
const respond = (a: typeof answer extends fc.Arbitrary<infer T> ? T : never) => () =>
  new Response(a.status === 204 ? null : a.body, {
    status: a.status,
    headers: {
      ...(a.contentType ? { 'content-type': a.contentType } : {}),
      ...(a.retryAfter !== undefined ? { 'retry-after': a.retryAfter } : {}),
      ...(a.challenge !== undefined ? { 'www-authenticate': a.challenge } : {}),
    },
  });

describe('fuzz: any server answer', () => {
  it('every method gives a result or a typed error, the token endpoint included', async () => {
    await fc.assert(
      fc.asyncProperty(
        answer,
        fc.option(answer, { nil: undefined }),
        fc.constantFrom(...Object.keys(calls)),
        async (data, token, name) => {
          // No token answer drawn: the token endpoint works and only the data endpoints misbehave.
          const service = mockService({
            ...(token ? { token: respond(token) } : {}),
            routes: { 'GET *': respond(data), 'POST *': respond(data) },
          });
          const client = makeClient(service, {
            maxRetries: 1,
            retry: { minDelayMs: 0, maxDelayMs: 1, maxRetryAfterMs: 1 },
          });
          const outcome = await failureOf(calls[name]!(client, VALID[name]));
          if (outcome !== undefined)
            expect(isPartnerError(outcome), `${name}: ${String(outcome)}`).toBe(true);
        },
      ),
      { numRuns: 400, seed: 429 },
    );
  });
});

describe('fuzz: any answer to the submit, through execute', () => {
  it('one submit; then the transfer, or an error with the ids; an unclear answer only ever resolved', async () => {
    const construct = freshConstruct(account.address);
    const ids = { intentId: 'int_1', transferId: 'tr_1', userOpHash: construct.bundle.userOpHash };
    await fc.assert(
      fc.asyncProperty(
        answer,
        // States that settle the outcome at the first read, so that no run waits for the read schedule.
        fc.constantFrom('submitted', 'delivered', 'failed', 'expired'),
        async (data, status) => {
          const service = mockService({
            routes: {
              'GET /bridge/routes': () => json({ data: [route()] }),
              'POST /bridge/construct/transaction/batch': () => json({ data: construct }),
              'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: status as 'submitted' }) }),
              'POST /bridge/transaction/batch/send': respond(data),
            },
          });
          const client = makeClient(service, { maxRetries: 1, retry: { minDelayMs: 0, maxDelayMs: 1 } });
          const outcome = await client.bridge
            .execute({ userId: 'user-1', routeId: 'base-usdc-to-bsc-usdc', amount: '25.5', signer: account })
            .catch((error: unknown) => error);
          expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
          if (!(outcome instanceof Error)) return;
          expect(isPartnerError(outcome), String(outcome)).toBe(true);
          expect(outcome).toMatchObject(ids);
          const unclear =
            (data.status >= 200 && data.status < 300) ||
            data.status === 401 ||
            (data.status >= 500 && data.status !== 503);
          if (unclear) expect(outcome, String(outcome)).toBeInstanceOf(SubmitOutcomeUnknownError);
        },
      ),
      { numRuns: 150, seed: 11 },
    );
  });
});

describe('fuzz: any callback body', () => {
  it('gives a parse result or a CallbackParseError', () => {
    const mutated = fc
      .tuple(fc.constantFrom(...Object.keys(transfer())), fc.jsonValue())
      .map(([key, value]) => ({ ...transfer(), [key]: value }));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.uint8Array(),
          fc.anything(),
          fc.jsonValue(),
          mutated,
          mutated.map((t) => JSON.stringify(t)),
        ),
        (body) => {
          try {
            const parsed = parseBridgeCallback(body);
            expect(
              ['unknown', 'unexpected_state'].includes(parsed.kind) ||
                parsed.kind.startsWith('bridge_transfer_'),
            ).toBe(true);
          } catch (error) {
            expect(error).toBeInstanceOf(CallbackParseError);
          }
        },
      ),
      { numRuns: 2000, seed: 99 },
    );
  });
});
