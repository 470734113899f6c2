/**
 * Per-call overhead: bridge.routes() with full validation against a local node:http server
 * (20 routes, the spec's full shape), next to raw fetch + res.json(), a bare ky + zod call of the
 * same request (ky's cheapest options, the same checks), and the openai SDK's generic GET —
 * sequential and at 32 in flight. `latency`: the same call against a service that answers after
 * 5 ms, what a user sees. `lists`: a list page of 1 and of 100 transfers, the SDK's
 * `transfers.list` against ky + zod with the same transfer checks.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import ky from 'ky';
import OpenAI from 'openai';
import { route, transfer } from '../fixtures/wire.js';
import {
  type Contender,
  fixed,
  interleaveSamples,
  median,
  pairedRatio,
  ratioVerdict,
  sequentially,
  table,
} from './lib.js';
import { routesSchema, transferPageSchema } from './schemas.js';
import { sdk } from './sdk.js';

const routes = Array.from({ length: 20 }, (_, i) =>
  route({ routeId: `route-${i}`, provider: i % 2 ? 'across' : 'across-v3' }),
);
const routesBody = JSON.stringify({ data: routes });
const tokenBody = JSON.stringify({
  access_token: 'bench-token',
  token_type: 'Bearer',
  expires_in: 3600,
  scope: 'bridge:read',
});

/** A list answer of `count` transfers, each with its own id, as the service pages them. */
function transfersBody(count: number): string {
  const data = Array.from({ length: count }, (_, i) => transfer({ transferId: `tr_${i}` }));
  return JSON.stringify({ data, nextCursor: null });
}
const listBodies = new Map([1, 100].map((count) => [count, transfersBody(count)]));

function answer(url: string | undefined): string {
  if (url?.endsWith('/auth/token')) return tokenBody;
  if (url?.includes('/bridge/transfers?')) {
    const limit = Number(new URL(url, 'http://x').searchParams.get('limit'));
    return listBodies.get(limit) ?? transfersBody(limit);
  }
  return routesBody;
}

/**
 * The local service the benchmarks call: the token, the routes and the list pages; with
 * `delayMs`, every answer but the token's comes that much later, as a real service's would.
 */
async function serve(delayMs = 0): Promise<{ base: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const body = answer(req.url);
    const send = () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    req.resume();
    req.on('end', () => {
      if (delayMs > 0 && !req.url?.endsWith('/auth/token')) setTimeout(send, delayMs);
      else send();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
    },
  };
}

export async function overhead(): Promise<void> {
  const { base, close } = await serve();
  const url = `${base}/api/v1/s2s/bridge/routes`;
  const headers = { authorization: 'Bearer bench-token', accept: 'application/json' };
  const schema = routesSchema;
  const api = ky.create({ prefix: `${base}/api/v1/s2s`, retry: 0, timeout: false });
  const openai = new OpenAI({ apiKey: 'bench-token', baseURL: `${base}/api/v1/s2s`, maxRetries: 0 });
  const client = new sdk.PartnerClient({ baseUrl: base, clientId: 'bench', clientSecret: 'bench' });
  await client.bridge.routes();

  const calls: Record<string, () => Promise<unknown>> = {
    'raw fetch + json': async () => (await fetch(url, { headers })).json(),
    'ky + zod': async () => schema.parse(await api.get('bridge/routes', { headers }).json()),
    'openai SDK get': () => openai.get('/bridge/routes'),
    'partner-s2s-sdk': () => client.bridge.routes(),
  };
  for (const call of Object.values(calls)) for (let i = 0; i < 50; i++) await call();

  const sequential = (call: () => Promise<unknown>) => sequentially(call, 200);
  const concurrent =
    (call: () => Promise<unknown>): Contender['run'] =>
    async () => {
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          for (let i = 0; i < 20; i++) await call();
        }),
      );
      return 640;
    };
  for (const [label, mode] of [
    ['sequential', sequential],
    ['32 concurrent', concurrent],
  ] as const) {
    const samples = await interleaveSamples(
      Object.entries(calls).map(([name, call]) => ({ name, run: mode(call) })),
      15,
    );
    const raw = samples.get('raw fetch + json')!;
    const kyZod = samples.get('ky + zod')!;
    table(
      `Per-call overhead, GET /bridge/routes with 20 routes (${label}; 15 interleaved rounds; ratios are medians of per-round ratios)`,
      ['client', 'median µs/call', '× raw fetch', '× ky + zod'],
      [...samples].map(([name, values]) => [
        name,
        fixed(median(values), 1),
        fixed(pairedRatio(values, raw)),
        fixed(pairedRatio(values, kyZod)),
      ]),
    );
    ratioVerdict(
      `per call × bare ky + zod, ${label === 'sequential' ? 'sequential' : '32 in flight'}`,
      pairedRatio(samples.get('partner-s2s-sdk')!, kyZod),
      1.25,
    );
  }
  await close();
  await withoutNetwork();
}

/**
 * The same call against a service that answers after 5 ms, one call at a time: what a user waits
 * for. (At 32 in flight the 5 ms hide behind the CPU time of 32 calls, and the ratio is the one
 * above.)
 */
export async function latency(): Promise<void> {
  const DELAY_MS = 5;
  const { base, close } = await serve(DELAY_MS);
  const headers = { authorization: 'Bearer bench-token', accept: 'application/json' };
  const api = ky.create({ prefix: `${base}/api/v1/s2s`, retry: 0, timeout: false });
  const client = new sdk.PartnerClient({ baseUrl: base, clientId: 'bench', clientSecret: 'bench' });
  const calls: Record<string, () => Promise<unknown>> = {
    'ky + zod': async () => routesSchema.parse(await api.get('bridge/routes', { headers }).json()),
    'partner-s2s-sdk': () => client.bridge.routes(),
  };
  for (const call of Object.values(calls)) for (let i = 0; i < 20; i++) await call();
  const N = 40;
  const ROUNDS = 21;
  const samples = await interleaveSamples(
    Object.entries(calls).map(([name, call]) => ({ name, run: sequentially(call, N) })),
    ROUNDS,
  );
  const kyZod = samples.get('ky + zod')!;
  table(
    `Per call against a service answering after ${DELAY_MS} ms, sequential, ${N} calls per round (${ROUNDS} interleaved rounds; ratios are medians of per-round ratios)`,
    ['client', 'median µs/call', '× ky + zod'],
    [...samples].map(([name, values]) => [
      name,
      fixed(median(values), 1),
      fixed(pairedRatio(values, kyZod), 3),
    ]),
  );
  ratioVerdict(
    `per call × bare ky + zod, service answering after ${DELAY_MS} ms`,
    pairedRatio(samples.get('partner-s2s-sdk')!, kyZod),
    1.02,
    3,
  );
  await close();
}

/**
 * A page of 1 and of 100 transfers: `transfers.list` against ky + zod parsing the same answer with
 * the same transfer schema (the SDK's, forward compatible), over the same local server. The per
 * transfer cost is the difference between the two pages over 99.
 */
export async function lists(): Promise<void> {
  const { base, close } = await serve();
  const api = ky.create({ prefix: `${base}/api/v1/s2s`, retry: 0, timeout: false });
  const client = new sdk.PartnerClient({ baseUrl: base, clientId: 'bench', clientSecret: 'bench' });
  const page = transferPageSchema;
  const headers = { authorization: 'Bearer bench-token', accept: 'application/json' };
  const rows: (string | number)[][] = [];
  const perPage = new Map<number, Map<string, number>>();
  for (const count of [1, 100]) {
    const searchParams = { userId: 'user-1', limit: count };
    const calls: Record<string, () => Promise<unknown>> = {
      'ky + zod': async () => page.parse(await api.get('bridge/transfers', { headers, searchParams }).json()),
      'partner-s2s-sdk': async () => client.bridge.transfers.list({ userId: 'user-1', limit: count }),
    };
    for (const call of Object.values(calls)) {
      const result = (await call()) as { data: unknown[] };
      if (result.data.length !== count) throw new Error(`expected ${count} transfers`);
      for (let i = 0; i < 50; i++) await call();
    }
    const repeat = count === 1 ? 200 : 40;
    const samples = await interleaveSamples(
      Object.entries(calls).map(([name, call]) => ({ name, run: sequentially(call, repeat) })),
      15,
    );
    const kyZod = samples.get('ky + zod')!;
    perPage.set(count, new Map([...samples].map(([name, values]) => [name, median(values)])));
    for (const [name, values] of samples)
      rows.push([
        `${count} transfer${count > 1 ? 's' : ''}`,
        name,
        fixed(median(values), 1),
        fixed(pairedRatio(values, kyZod)),
      ]);
  }
  table(
    'A list page, GET /bridge/transfers (15 interleaved rounds; ratios are medians of per-round ratios)',
    ['page', 'client', 'median µs/page', '× ky + zod'],
    rows,
  );
  const one = perPage.get(1)!;
  const hundred = perPage.get(100)!;
  table(
    'Cost of one more transfer on a page ((100-transfer page − 1-transfer page) / 99)',
    ['client', 'µs/transfer'],
    [...hundred.keys()].map((name) => [name, fixed((hundred.get(name)! - one.get(name)!) / 99, 2)]),
  );
  await close();
}

/**
 * The same calls against an in-memory fetch, so that the cost of each layer shows without the
 * network's noise: a bare Response, ky on top of it, zod on top of that, and the SDK.
 */
async function withoutNetwork(): Promise<void> {
  const schema = routesSchema;
  const body = new TextEncoder().encode(routesBody);
  const memoryFetch = async (input: Request | URL | string) => {
    const path = typeof input === 'string' ? input : input instanceof URL ? input.pathname : input.url;
    return new Response(path.endsWith('/auth/token') ? tokenBody : body, {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
  const base = 'http://127.0.0.1:9';
  const headers = { authorization: 'Bearer bench-token', accept: 'application/json' };
  const api = ky.create({ prefix: `${base}/api/v1/s2s`, retry: 0, timeout: false, fetch: memoryFetch });
  const client = new sdk.PartnerClient({
    baseUrl: base,
    clientId: 'bench',
    clientSecret: 'bench',
    fetch: memoryFetch,
  });
  const calls: Record<string, () => Promise<unknown>> = {
    'Response + JSON.parse': async () => JSON.parse(await (await memoryFetch('/x')).text()),
    'ky (no validation)': () => api.get('bridge/routes', { headers }).json(),
    'ky + zod': async () => schema.parse(await api.get('bridge/routes', { headers }).json()),
    'partner-s2s-sdk': () => client.bridge.routes(),
  };
  for (const call of Object.values(calls)) for (let i = 0; i < 200; i++) await call();
  const samples = await interleaveSamples(
    Object.entries(calls).map(([name, call]) => ({ name, run: sequentially(call, 300) })),
    15,
  );
  const kyZod = samples.get('ky + zod')!;
  table(
    'Per-call cost without the network (in-memory fetch; 15 interleaved rounds)',
    ['client', 'median µs/call', '× ky + zod'],
    [...samples].map(([name, values]) => [name, fixed(median(values), 1), fixed(pairedRatio(values, kyZod))]),
  );
}
