// The package as a partner installs it, on whatever runtime runs this file (Node, Bun, Deno):
// the bridge flow on the simulator over real HTTP, and both callback handlers on that runtime's own
// servers. Imported by name, so it resolves from node_modules/partner-s2s-sdk (the built package).
//
//   bun test/runtimes/run.mjs · deno run -A test/runtimes/run.mjs · node test/runtimes/run.mjs
import { createServer } from 'node:http';
import { createCallbackRouter, PartnerClient, ResponseValidationError } from 'partner-s2s-sdk';
import { createPartnerSimulator } from 'partner-s2s-sdk/testing';
import { privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';

const runtime = globalThis.Bun
  ? `bun ${Bun.version}`
  : globalThis.Deno
    ? `deno ${Deno.version.deno}`
    : `node ${process.version}`;
let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}: ${error?.stack ?? error}`);
  }
}
function equal(actual, expected, what) {
  if (actual !== expected) throw new Error(`${what}: expected ${expected}, got ${actual}`);
}

console.log(`partner-s2s-sdk on ${runtime}`);
const sim = createPartnerSimulator();
const server = await sim.listen();
let delivered;

await check('bridge flow on the simulator over HTTP', async () => {
  const client = new PartnerClient({ baseUrl: server.url, ...sim.demo.credentials });
  const userId = sim.demo.userId;
  const scopes = await client.getScopes();
  if (scopes.length === 0) throw new Error('no scopes granted');
  const routes = await client.bridge.routes();
  const route = routes.find((r) => r.limits);
  if (!route) throw new Error('no reachable route');
  const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
  const { transferId } = await client.bridge.execute({
    userId,
    routeId: route.routeId,
    amount: '25.5',
    signer,
  });
  sim.advance(transferId, 'source_confirmed');
  sim.advance(transferId, 'delivered');
  const final = await client.bridge.transfers.wait({ userId, transferId }, { pollIntervalMs: 50 });
  equal(final.status, 'delivered', 'final state');
  delivered = sim.transfer(transferId);
});

// The package imports zod from node_modules, so the application's zod is the SDK's when the
// versions agree: a schema made with it types an answer, and the application's locale reaches the
// SDK's messages.
await check("the application's own zod, shared with the SDK", async () => {
  const client = new PartnerClient({ baseUrl: server.url, ...sim.demo.credentials });
  const me = await client.get('/me', { schema: z.object({ scopes: z.array(z.string()) }) });
  if (me.scopes.length === 0) throw new Error('no scopes in the typed answer');
  const wrong = await client.get('/me', { schema: z.object({ scopes: z.number() }) }).then(
    () => undefined,
    (error) => error,
  );
  if (!(wrong instanceof ResponseValidationError))
    throw new Error(`a failing schema gave ${wrong}, not a ResponseValidationError`);
  const tokenless = new PartnerClient({
    baseUrl: 'https://partner.test',
    clientId: 'c',
    clientSecret: 's',
    fetch: async () => Response.json({ expires_in: 60 }),
  });
  const message = () =>
    tokenless.getScopes().then(
      () => '',
      (error) => error.message,
    );
  const before = await message();
  if (!before.includes('expected string')) throw new Error(`unexpected message: ${before}`);
  z.config(z.locales.de());
  try {
    const after = await message();
    if (after === before || !after.includes('erwartet string'))
      throw new Error(`the application's zod locale did not reach the SDK: ${after}`);
  } finally {
    z.config(z.locales.en());
  }
});

const TOKEN = 'runtime-test-token';
const router = () =>
  createCallbackRouter({
    authenticate: (req) => req.headers.get('x-callback-token') === TOKEN,
    maxBodyBytes: 4096,
  });

/** docs/callbacks.md's promises, asked of a handler served at `url`. */
async function answers(label, url) {
  const headers = { 'content-type': 'application/json', 'x-callback-token': TOKEN };
  const cases = [
    ['200 for a delivery', 200, { method: 'POST', headers, body: JSON.stringify(delivered) }],
    ['400 for a broken body', 400, { method: 'POST', headers, body: '{"transferId":' }],
    [
      '401 without the token',
      401,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
    ],
    ['405 for GET', 405, { method: 'GET' }],
    ['413 above maxBodyBytes', 413, { method: 'POST', headers, body: 'x'.repeat(8192) }],
  ];
  for (const [name, status, init] of cases) {
    await check(`${label}: ${name}`, async () => {
      const response = await fetch(url, init);
      await response.text();
      equal(response.status, status, 'status');
      if (status === 405) equal(response.headers.get('allow'), 'POST', 'allow header');
    });
  }
}

if (!delivered) {
  failed++;
  console.log('FAIL no delivered transfer to post as a callback');
} else {
  // fetchHandler on the runtime's own server.
  if (globalThis.Bun) {
    const bunServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: router().fetchHandler });
    await answers('fetchHandler on Bun.serve', `http://127.0.0.1:${bunServer.port}/callbacks`);
    await bunServer.stop(true);
  } else if (globalThis.Deno) {
    const controller = new AbortController();
    const denoServer = Deno.serve(
      { hostname: '127.0.0.1', port: 0, signal: controller.signal, onListen() {} },
      router().fetchHandler,
    );
    await answers('fetchHandler on Deno.serve', `http://127.0.0.1:${denoServer.addr.port}/callbacks`);
    controller.abort();
    await denoServer.finished;
  }

  // nodeHandler through this runtime's node:http.
  const nodeServer = createServer(router().nodeHandler);
  await new Promise((resolve) => nodeServer.listen(0, '127.0.0.1', resolve));
  await answers('nodeHandler on node:http', `http://127.0.0.1:${nodeServer.address().port}/callbacks`);
  nodeServer.closeAllConnections?.();
  await new Promise((resolve) => nodeServer.close(resolve));
}

sim.close();
await server.close();
console.log(`${passed} passed, ${failed} failed`);
if (failed > 0) process.exitCode = 1;
