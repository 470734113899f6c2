// The packed package (`npm pack`) where partners run it, each installed by name into a project of
// its own in a temporary folder, with its tools from the npm registry (after `npm run build`):
//
// - esbuild, the way Lambda bundles (CDK's NodejsFunction, SAM, serverless-esbuild): a handler
//   importing PartnerClient and createCallbackRouter, bundled with --platform=node as CommonJS and
//   as ESM, each bundle copied alone into an empty folder, loaded, and calling the simulator over HTTP;
// - Jest 30 in a CommonJS project, no flags: a call retried once after a 503, verify and sign, a
//   callback through fetchHandler;
// - pnpm (strict node_modules): the README's testing snippet, with viem added as the README says.
//
// Exits non-zero when any of them fails. `node scripts/consumers.mjs --keep` leaves the folder.
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createPartnerSimulator } from '../dist/testing/index.js';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'partner-s2s-consumers-'));
const npmEnv = {
  ...process.env,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_loglevel: 'error',
};
let failed = 0;

/** Runs a command, its output shown only when it fails (the error carries it). */
async function sh(cwd, file, args, env = npmEnv) {
  try {
    return (await run(file, args, { cwd, env, maxBuffer: 64 << 20 })).stdout;
  } catch (error) {
    throw new Error(
      `${file} ${args.join(' ')} (in ${cwd}) failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
  }
}

/** A new folder with a package.json; `npm install`s `packages` there when given. */
async function project(name, manifest, packages = []) {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, ...manifest }, null, 2));
  if (packages.length > 0) await sh(dir, 'npm', ['install', '--no-package-lock', ...packages]);
  return dir;
}

async function check(name, fn) {
  const started = performance.now();
  try {
    await fn();
    console.log(`ok   ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}: ${error?.stack ?? error}`);
  }
}

const packed = JSON.parse(
  await sh(repo, 'npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work]),
);
const tarball = join(work, packed[0].filename);
console.log(`${packed[0].filename} (${packed[0].size} bytes) on node ${process.version}, in ${work}`);

const HANDLER = `import { createCallbackRouter, PartnerClient } from 'partner-s2s-sdk';

export async function handler(event) {
  const client = new PartnerClient({ baseUrl: event.baseUrl, clientId: event.clientId, clientSecret: event.clientSecret });
  const router = createCallbackRouter({ authenticate: 'none' });
  const routes = await client.bridge.routes();
  const refused = await router.fetchHandler(new Request('http://lambda.local/callbacks', { method: 'GET' }));
  return { routes: routes.length, callbackGet: refused.status };
}
`;

/** The Lambda-style project, installed once for both formats. */
let lambda;
const lambdaProject = () => {
  lambda ??= project('lambda', { type: 'module' }, [tarball, 'esbuild@0.28']).then((dir) => {
    writeFileSync(join(dir, 'handler.mjs'), HANDLER);
    return dir;
  });
  return lambda;
};

for (const [format, file, load] of [
  ['cjs', 'index.js', `require('./index.js')`],
  ['esm', 'index.mjs', `await import('./index.mjs')`],
]) {
  await check(
    `esbuild --bundle --platform=node --format=${format}, the bundle alone in an empty folder`,
    async () => {
      const dir = await lambdaProject();
      const out = join(dir, 'out', format, file);
      await sh(dir, join(dir, 'node_modules', '.bin', 'esbuild'), [
        'handler.mjs',
        '--bundle',
        '--platform=node',
        `--format=${format}`,
        `--outfile=${out}`,
        '--log-level=error',
      ]);
      const alone = mkdtempSync(join(work, `lambda-${format}-`));
      copyFileSync(out, join(alone, file));
      if (readdirSync(alone).length !== 1) throw new Error(`${alone} holds more than the bundle`);
      const sim = createPartnerSimulator();
      const server = await sim.listen();
      try {
        // The event (credentials included) goes in the environment, not on a command line an error prints.
        const event = JSON.stringify({ baseUrl: server.url, ...sim.demo.credentials });
        const script = `const { handler } = ${load}; console.log(JSON.stringify(await handler(JSON.parse(process.env.LAMBDA_EVENT))));`;
        const stdout = await sh(
          alone,
          process.execPath,
          format === 'esm'
            ? ['--input-type=module', '-e', script]
            : ['-e', `(async () => { ${script} })().catch((e) => { console.error(e); process.exit(1); })`],
          { ...process.env, LAMBDA_EVENT: event },
        );
        const result = JSON.parse(stdout.trim().split('\n').at(-1));
        if (!(result.routes > 0) || result.callbackGet !== 405)
          throw new Error(`the ${format} bundle answered ${JSON.stringify(result)}`);
      } finally {
        sim.close();
        await server.close();
      }
    },
  );
}

const JEST_TEST = `const { createCallbackRouter, PartnerClient, signBridgeBatch, verifyBridgeBatch } = require('partner-s2s-sdk');
const { createPartnerSimulator } = require('partner-s2s-sdk/testing');
const { privateKeyToAccount } = require('viem/accounts');

const fast = { minDelayMs: 1, maxDelayMs: 5 };

test('a call is retried once after a 503', async () => {
  const sim = createPartnerSimulator();
  let refused = 0;
  const fetch = async (url, init) => {
    if (String(url).endsWith('/bridge/routes') && refused++ === 0) return new Response('busy', { status: 503 });
    return sim.fetch(url, init);
  };
  const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch, retry: fast });
  const retries = [];
  client.on('retry', (event) => retries.push(event.attempt));
  const routes = await client.bridge.routes();
  expect(routes.length).toBeGreaterThan(0);
  expect(retries).toEqual([1]);
  sim.close();
});

test('verify and sign a constructed batch', async () => {
  const sim = createPartnerSimulator();
  const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
  const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
  const route = (await client.bridge.routes()).find((r) => r.limits);
  const construct = await client.bridge.construct({ userId: sim.demo.userId, routeId: route.routeId, amount: '10' });
  const verified = verifyBridgeBatch({ route, construct, wallet: signer.address, amount: '10' });
  expect(verified.source.amount).toBe('10');
  const signed = await signBridgeBatch({ verified, signer });
  expect(signed.signature).toMatch(/^0xff00[0-9a-f]{130}$/);
  const { transferId } = await client.bridge.send({ userId: sim.demo.userId, intentId: construct.intentId, ...signed });
  expect(sim.transfer(transferId).transferId).toBe(transferId);
  sim.close();
});

test('a callback through fetchHandler', async () => {
  const router = createCallbackRouter({ authenticate: 'none' });
  const seen = [];
  router.on('bridge_transfer_delivered', (transfer) => seen.push(transfer.transferId));
  const answers = [];
  const sim = createPartnerSimulator({
    callbacks: async (body) => {
      const request = new Request('http://partner.local/callbacks', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      answers.push((await router.fetchHandler(request)).status);
    },
  });
  const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
  const route = (await client.bridge.routes()).find((r) => r.limits);
  const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
  const { transferId } = await client.bridge.execute({ userId: sim.demo.userId, routeId: route.routeId, amount: '10', signer });
  sim.advance(transferId, 'source_confirmed');
  sim.advance(transferId, 'delivered');
  // The simulator delivers callbacks in the background, as the service does.
  for (let waited = 0; seen.length === 0 && waited < 10000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  expect(seen).toEqual([transferId]);
  expect(answers.every((status) => status === 200)).toBe(true);
  sim.close();
});
`;

await check('Jest 30, a CommonJS project, no flags: retry, verify and sign, a callback', async () => {
  const dir = await project('jest-cjs', { type: 'commonjs', jest: { testEnvironment: 'node' } }, [
    tarball,
    'jest@30',
  ]);
  writeFileSync(join(dir, 'partner.test.js'), JEST_TEST);
  await sh(dir, process.execPath, [join(dir, 'node_modules', 'jest', 'bin', 'jest.js'), '--colors=false']);
});

/** The README's first code block under the heading, as a partner would paste it. */
function readmeSnippet(heading) {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(`\n${heading}\n`));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error(`no code block under ${heading} in README.md`);
  return block[1];
}

await check("pnpm (strict node_modules): the README's testing snippet with viem added", async () => {
  const tools = await project('tools', {}, ['pnpm@10']);
  const pnpm = join(tools, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs');
  const dir = await project('pnpm-app', { type: 'module' });
  await sh(dir, process.execPath, [pnpm, 'add', tarball, 'viem', '--store-dir', join(work, 'pnpm-store')]);
  writeFileSync(
    join(dir, 'snippet.mjs'),
    `${readmeSnippet('## Testing your integration with the simulator')}
const status = sim.transfer(transferId).status;
if (status !== 'delivered') throw new Error(\`the transfer is \${status}, not delivered\`);
sim.close();
`,
  );
  await sh(dir, process.execPath, ['snippet.mjs']);
});

if (process.argv.includes('--keep')) console.log(`left ${work}`);
else rmSync(work, { recursive: true, force: true });
console.log(failed === 0 ? 'all consumers passed' : `${failed} consumer check(s) failed`);
process.exit(failed > 0 ? 1 : 0);
