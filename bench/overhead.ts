/**
 * Per-call overhead: bridge.routes() with full validation against a local node:http server
 * (20 routes, the spec's full shape), next to raw fetch + res.json(), a bare ky + zod call of the
 * same request, and the openai SDK's generic GET — sequential and at 32 concurrent.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import ky from 'ky';
import OpenAI from 'openai';
import { route } from '../fixtures/wire.js';
import { bridgeSchemas } from '../src/schemas/bridge.js';
import { type Contender, fixed, interleaveSamples, median, pairedRatio, table } from './lib.js';
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

export async function overhead(): Promise<void> {
  const server = createServer((req, res) => {
    const body = req.url?.endsWith('/auth/token') ? tokenBody : routesBody;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `${base}/api/v1/s2s/bridge/routes`;
  const headers = { authorization: 'Bearer bench-token', accept: 'application/json' };
  const schema = bridgeSchemas(false).routes;
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

  const sequential =
    (call: () => Promise<unknown>): Contender['run'] =>
    async () => {
      for (let i = 0; i < 200; i++) await call();
      return 200;
    };
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
  }
  await new Promise((resolve) => server.close(resolve));
  server.closeAllConnections();
  await withoutNetwork(schema);
}

/**
 * The same calls against an in-memory fetch, so that the cost of each layer shows without the
 * network's noise: a bare Response, ky on top of it, zod on top of that, and the SDK.
 */
async function withoutNetwork(schema: ReturnType<typeof bridgeSchemas>['routes']): Promise<void> {
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
    Object.entries(calls).map(([name, call]) => ({
      name,
      run: async () => {
        for (let i = 0; i < 300; i++) await call();
        return 300;
      },
    })),
    15,
  );
  const kyZod = samples.get('ky + zod')!;
  table(
    'Per-call cost without the network (in-memory fetch; 15 interleaved rounds)',
    ['client', 'median µs/call', '× ky + zod'],
    [...samples].map(([name, values]) => [name, fixed(median(values), 1), fixed(pairedRatio(values, kyZod))]),
  );
}
