import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import {
  AbortError,
  ArgumentError,
  AuthenticationError,
  ConnectionError,
  InternalServerError,
  InvalidClientError,
  NotFoundError,
  PartnerClient,
  type PartnerClientOptions,
  PermissionDeniedError,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import {
  BASE_URL,
  envelopeError,
  json,
  type MockService,
  makeClient,
  mockService,
  SECRET,
} from '../helpers/mock-fetch.js';
import { packageImports } from '../helpers/package-imports.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(() => {
  trace.disable();
  context.disable();
});
beforeEach(() => exporter.reset());

let sim: PartnerSimulator | undefined;
afterEach(() => {
  sim?.close();
  sim = undefined;
});

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan) =>
  spans().find((other) => other.spanContext().spanId === span.parentSpanContext?.spanId);
/** The spans of data calls (the token fetch is INTERNAL too), or of the requests they sent. */
const calls = (kind: SpanKind) => spans().filter((span) => span.kind === kind && span.name.includes(' /'));
const only = (list: ReadableSpan[]) => {
  expect(list).toHaveLength(1);
  return list[0]!;
};

/** Everything a span exports that a backend shows: names, attributes, events, links, status. */
function serialized(list: readonly ReadableSpan[]): string {
  return JSON.stringify(
    list.map((span) => ({
      name: span.name,
      attributes: span.attributes,
      events: span.events,
      links: span.links,
      status: span.status,
      scope: span.instrumentationScope,
    })),
  );
}

/** Tokens that look like nothing else in a span, so that finding one means it leaked. */
function distinctTokens(): { issued: string[]; handler: () => Response } {
  const issued: string[] = [];
  return {
    issued,
    handler: () => {
      const token = `tkn_${issued.length + 1}_${Math.random().toString(36).slice(2)}`;
      issued.push(token);
      return json({ access_token: token, token_type: 'Bearer', expires_in: 3600, scope: 'bridge:read' });
    },
  };
}

/** A simulator whose every request and token answer is recorded, to look for them in the spans. */
function recordingSimulator() {
  const s = createPartnerSimulator();
  const seen: string[] = [];
  const fetch: PartnerClientOptions['fetch'] = async (input, init) => {
    const request = new Request(input, init);
    const authorization = request.headers.get('authorization');
    if (authorization) seen.push(authorization, authorization.replace(/^\S+\s+/, ''));
    const body = await request.clone().text();
    const signature = /"signature":"(0x[0-9a-f]+)"/.exec(body)?.[1];
    if (signature) seen.push(signature);
    const response = await s.fetch(request);
    if (request.url.endsWith('/auth/token')) {
      const token = (await response.clone().json()) as { access_token?: string };
      if (token.access_token) seen.push(token.access_token);
    }
    return response;
  };
  return { sim: s, seen, fetch };
}

describe('tracing (OpenTelemetry)', () => {
  it('names spans by route template and keeps the ids of the path out of every span', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/transfers/tr_77e1f0': () =>
          json({ data: transfer({ transferId: 'tr_77e1f0', userId: 'usr_4c2d9a' }) }),
      },
    });
    await makeClient(service).bridge.transfers.get({ userId: 'usr_4c2d9a', transferId: 'tr_77e1f0' });
    const call = only(
      named('GET /bridge/transfers/{transferId}').filter((s) => s.kind === SpanKind.INTERNAL),
    );
    expect(call.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.template': '/bridge/transfers/{transferId}',
      'http.response.status_code': 200,
    });
    const exchange = only(
      named('GET /bridge/transfers/{transferId}').filter((s) => s.kind === SpanKind.CLIENT),
    );
    expect(parentOf(exchange)).toBe(call);
    expect(serialized(spans())).not.toMatch(/tr_77e1f0|usr_4c2d9a/);
  });

  it('gives each request sent a CLIENT span with the HTTP attributes and the request id', async () => {
    const service = mockService({
      routes: { 'GET /bridge/routes': () => json({ data: [] }, 200, { 'x-request-id': 'req_5b1e' }) },
    });
    await new PartnerClient({
      baseUrl: 'https://partner.test:8443',
      clientId: 'client-1',
      clientSecret: SECRET,
      fetch: service.fetch,
    }).bridge.routes();
    const exchange = only(calls(SpanKind.CLIENT));
    expect(exchange.name).toBe('GET /bridge/routes');
    expect(exchange.attributes).toEqual({
      'http.request.method': 'GET',
      'url.template': '/bridge/routes',
      'server.address': 'partner.test',
      'server.port': 8443,
      'http.response.status_code': 200,
      'http.response.header.x-request-id': ['req_5b1e'],
    });
    expect(exchange.status.code).toBe(SpanStatusCode.UNSET);
    const call = only(named('GET /bridge/routes').filter((s) => s.kind === SpanKind.INTERNAL));
    expect(call.attributes['http.response.header.x-request-id']).toEqual(['req_5b1e']);
  });

  it('a retried 503 is one call span over one CLIENT span per attempt, counted by resend_count', async () => {
    let reads = 0;
    const service = mockService({
      routes: {
        'GET /bridge/routes': () =>
          ++reads < 3
            ? envelopeError(503, 'SERVICE_UNAVAILABLE', 'busy', {}, { 'x-request-id': `req_${reads}` })
            : json({ data: [] }, 200, { 'x-request-id': 'req_3' }),
      },
    });
    await makeClient(service).bridge.routes();
    const call = only(named('GET /bridge/routes').filter((s) => s.kind === SpanKind.INTERNAL));
    const attempts = spans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(attempts.map((s) => parentOf(s))).toEqual([call, call, call]);
    expect(attempts.map((s) => s.attributes['http.request.resend_count'])).toEqual([undefined, 1, 2]);
    expect(attempts.map((s) => s.attributes['http.response.status_code'])).toEqual([503, 503, 200]);
    expect(attempts.map((s) => s.attributes['error.type'])).toEqual(['503', '503', undefined]);
    expect(attempts.map((s) => s.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
      SpanStatusCode.UNSET,
    ]);
    expect(attempts.map((s) => s.attributes['http.response.header.x-request-id'])).toEqual([
      ['req_1'],
      ['req_2'],
      ['req_3'],
    ]);
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
    expect(call.attributes['error.type']).toBeUndefined();
  });

  it('a failed call ends in status ERROR with the error class, not its message', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers/tr_1': () => envelopeError(404, 'NOT_FOUND', 'no transfer tr_1') },
    });
    const failure = await makeClient(service)
      .bridge.transfers.get({ userId: 'user-1', transferId: 'tr_1' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NotFoundError);
    const call = only(calls(SpanKind.INTERNAL));
    expect(call.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(call.attributes['error.type']).toBe('NotFoundError');
    const exchange = only(calls(SpanKind.CLIENT));
    expect(exchange.attributes).toMatchObject({ 'error.type': '404', 'http.response.status_code': 404 });
    expect(serialized(spans())).not.toContain((failure as Error).message);
  });

  it('the call span has the error the caller got, even when the retry layer ended the call', async () => {
    const controller = new AbortController();
    const service = mockService({
      routes: {
        'GET /bridge/routes': () => {
          setTimeout(() => controller.abort(), 5);
          return envelopeError(503, 'SERVICE_UNAVAILABLE', 'busy', {}, { 'retry-after': '30' });
        },
      },
    });
    const failure = await makeClient(service)
      .bridge.routes({ signal: controller.signal })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AbortError);
    const call = only(calls(SpanKind.INTERNAL));
    expect(call.attributes['error.type']).toBe('AbortError');
    expect(only(calls(SpanKind.CLIENT)).attributes['error.type']).toBe('503');
  });

  it('a broken connection is a CLIENT span with error.type ConnectionError and no status code', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': () => {
          throw new TypeError('fetch failed');
        },
      },
    });
    const failure = await makeClient(service, { maxRetries: 0 })
      .bridge.routes()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConnectionError);
    const exchange = only(calls(SpanKind.CLIENT));
    expect(exchange.attributes['error.type']).toBe('ConnectionError');
    expect(exchange.attributes['http.response.status_code']).toBeUndefined();
    expect(exchange.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('bridge.execute holds the token fetch, verify, sign and the send, under the caller’s span', async () => {
    const recorded = recordingSimulator();
    sim = recorded.sim;
    const client = new PartnerClient({
      baseUrl: sim.baseUrl,
      ...sim.demo.credentials,
      fetch: recorded.fetch,
    });
    const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
    const { transferId } = await trace.getTracer('partner-app').startActiveSpan('job', async (job) => {
      try {
        return await client.bridge.execute({
          userId: sim!.demo.userId,
          routeId: 'base-usdc-to-bsc-usdc',
          amount: '25.5',
          signer,
        });
      } finally {
        job.end();
      }
    });
    const execute = only(named('bridge.execute'));
    expect(parentOf(execute)?.name).toBe('job');
    const send = only(
      named('POST /bridge/transaction/batch/send').filter((s) => s.kind === SpanKind.INTERNAL),
    );
    for (const child of [only(named('partner.verify')), only(named('partner.sign')), send])
      expect(parentOf(child)).toBe(execute);
    // The token is fetched by the first call of the flow, in that call's span.
    const token = only(named('partner.token'));
    expect(parentOf(token)?.name).toBe('GET /bridge/routes');
    expect(parentOf(parentOf(token)!)).toBe(execute);
    expect(
      only(named('POST /bridge/transaction/batch/send').filter((s) => s.kind === SpanKind.CLIENT))
        .parentSpanContext?.spanId,
    ).toBe(send.spanContext().spanId);
    // Every span of the flow is in the caller's trace.
    expect(new Set(spans().map((s) => s.spanContext().traceId)).size).toBe(1);
    const text = serialized(spans());
    expect(recorded.seen.length).toBeGreaterThanOrEqual(3);
    for (const secret of [sim.demo.credentials.clientSecret, ...recorded.seen, transferId])
      expect(text).not.toContain(secret);
  });

  it('no secret, token or signature in any span, on any failure', async () => {
    const tokens = distinctTokens();
    const service: MockService = mockService({
      token: tokens.handler,
      routes: {
        'GET /me': () => envelopeError(401, 'UNAUTHORIZED', 'token rejected'),
        'GET /bridge/routes': () => envelopeError(403, 'FORBIDDEN', 'missing scope'),
        'POST /bridge/quote': () => envelopeError(500, 'INTERNAL', 'boom'),
        'GET /bridge/fee-estimate': () => {
          throw new TypeError(`socket closed: ${SECRET}`);
        },
      },
    });
    const errors: unknown[] = [];
    const caught = (error: unknown) => error;
    for (const clientAuth of ['body', 'basic'] as const) {
      const client = makeClient(service, { clientAuth, maxRetries: 1 });
      errors.push(await client.bridge.routes().catch(caught));
      errors.push(await client.bridge.quote({ userId: 'user-1', routeId: 'r', amount: '1' }).catch(caught));
      errors.push(await client.bridge.feeEstimate({ routeId: 'r', amount: '1' }).catch(caught));
      // Last: a 401 after the replay stops the credential, and later calls would not go out.
      errors.push(await client.me().catch(caught));
    }
    expect(errors.map((error) => (error as Error).constructor)).toEqual([
      PermissionDeniedError,
      InternalServerError,
      ConnectionError,
      AuthenticationError,
      PermissionDeniedError,
      InternalServerError,
      ConnectionError,
      AuthenticationError,
    ]);
    expect(tokens.issued.length).toBeGreaterThanOrEqual(2);
    const authorizations = service.calls.flatMap((call) => {
      const value = call.headers.get('authorization');
      return value ? [value, value.replace(/^\S+\s+/, '')] : [];
    });
    expect(authorizations.some((value) => value.startsWith('Basic'))).toBe(true);
    const text = serialized(spans());
    expect(spans().length).toBeGreaterThan(8);
    for (const secret of [
      SECRET,
      encodeURIComponent(SECRET),
      new URLSearchParams({ v: SECRET }).toString().slice(2),
      ...tokens.issued,
      ...authorizations,
    ])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/bearer|basic|socket closed|token rejected/i);
  });

  it('a failed token fetch is a partner.token span in status ERROR', async () => {
    const service = mockService({
      token: () => json({ error: 'invalid_client', error_description: 'unknown client' }, 401),
    });
    await expect(makeClient(service).bridge.routes()).rejects.toBeInstanceOf(InvalidClientError);
    const token = only(named('partner.token'));
    expect(token.status.code).toBe(SpanStatusCode.ERROR);
    expect(token.attributes['error.type']).toBe('InvalidClientError');
    expect(parentOf(token)?.name).toBe('GET /bridge/routes');
  });

  it('records nothing with tracing: false, or when no tracer provider is registered', async () => {
    const service = mockService({ routes: { 'GET /bridge/routes': () => json({ data: [] }) } });
    await makeClient(service, { tracing: false }).bridge.routes();
    expect(spans()).toEqual([]);
    const client = makeClient(service);
    trace.disable();
    try {
      await client.bridge.routes();
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
    expect(spans()).toEqual([]);
    // A provider registered after the client was made is used from the next call on.
    await client.bridge.routes();
    expect(named('GET /bridge/routes')).toHaveLength(2);
  });

  it('sends a client’s spans to its own tracerProvider, with no global one registered', async () => {
    const own = new InMemorySpanExporter();
    const ownProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(own)] });
    const service = mockService({ routes: { 'GET /bridge/routes': () => json({ data: [] }) } });
    trace.disable();
    try {
      await makeClient(service, { tracing: { tracerProvider: ownProvider } }).bridge.routes();
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
    expect(spans()).toEqual([]);
    expect(own.getFinishedSpans().map((span) => [span.name, span.kind])).toEqual(
      expect.arrayContaining([
        ['partner.token', SpanKind.INTERNAL],
        ['GET /bridge/routes', SpanKind.CLIENT],
        ['GET /bridge/routes', SpanKind.INTERNAL],
      ]),
    );
    expect(own.getFinishedSpans()[0]!.instrumentationScope.name).toBe('partner-s2s-sdk');
  });

  it('refuses a tracing option of the wrong shape before any request', () => {
    const service = mockService();
    for (const tracing of ['yes', { tracerProvider: {} }, { provider: {} }, null]) {
      expect(
        () =>
          new PartnerClient({
            baseUrl: BASE_URL,
            clientId: 'c',
            clientSecret: 's',
            fetch: service.fetch,
            tracing,
          } as never),
      ).toThrow(ArgumentError);
    }
    expect(service.calls).toEqual([]);
  });
});

/** The modules that asked for `@opentelemetry/api` while `script` ran in a fresh process. */
function otelImporters(script: string, options: { missing?: string } = {}): string[] {
  return packageImports(script, options)
    .filter(({ specifier }) => specifier === '@opentelemetry/api')
    .map(({ parent }) => parent);
}

const someCalls = (tracing: string) => `
  const { PartnerClient } = await import('./src/index.ts');
  const { createPartnerSimulator } = await import('./src/testing/index.ts');
  const sim = createPartnerSimulator();
  const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch, ${tracing} });
  if ((await client.bridge.routes()).length === 0) throw new Error('no routes');
  await client.me();
  sim.close();
`;

const registerTracer = `
  const { trace } = await import('@opentelemetry/api');
  const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
  trace.setGlobalTracerProvider(new BasicTracerProvider());
`;

describe('tracing loads @opentelemetry/api only when it records', () => {
  const fromSdk = (importers: string[]) => importers.filter((parent) => parent.includes('/src/'));

  it('is never imported without a registered tracer provider', () => {
    expect(otelImporters(someCalls(''))).toEqual([]);
  });

  it('is never imported by the SDK with tracing: false, even with a tracer registered', () => {
    const importers = otelImporters(registerTracer + someCalls('tracing: false'));
    // The script's own import was seen: the hook works, and the SDK made none.
    expect(importers.length).toBeGreaterThan(0);
    expect(fromSdk(importers)).toEqual([]);
  });

  it('when it is not installed, calls go on untraced and it is looked for once', () => {
    // What a registered provider leaves in the API's global registry, with the package unreachable.
    const registered = `globalThis[Symbol.for('opentelemetry.js.api.1')] = { version: '1.9.1', trace: {} };`;
    expect(fromSdk(otelImporters(registered + someCalls(''), { missing: '@opentelemetry/api' }))).toEqual([
      expect.stringMatching(/\/src\/http\/tracing\.ts$/),
    ]);
  });

  it('is imported by the SDK once a tracer provider is registered', () => {
    expect(fromSdk(otelImporters(registerTracer + someCalls('')))).toEqual([
      expect.stringMatching(/\/src\/http\/tracing\.ts$/),
    ]);
  });
});
