import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { getAddress, hashMessage } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromRawAmount, PartnerClient } from '../../src/index.js';
import { createPartnerSimulator } from '../../src/testing/index.js';
import { SimCallbacks } from '../../src/testing/simulator/callbacks.js';
import { runCli, runMain, sourceBin } from '../helpers/cli.js';
import { skipOrFail } from '../helpers/shared.js';

/*
 * The CLI as a partner runs it: a child process. `simulate` is started once, driven through its
 * admin API with plain fetch (as a Python or Go test would), the bridge flow is run against it with
 * the SDK, and the operator commands are run against it with the credential in the environment.
 */

const BUILT_BIN = 'dist/cli/bin.js';
const ROUTE_ID = 'base-usdc-to-bsc-usdc';

interface SimInfo {
  baseUrl: string;
  adminUrl: string;
  clientId: string;
  clientSecret: string;
  userId: string;
  wallet: { address: `0x${string}`; privateKey: `0x${string}` };
}

interface Started {
  child: ChildProcess;
  info: SimInfo;
  exit: Promise<number | null>;
  /** What it wrote on stderr so far. */
  stderr: () => string;
}

/** Starts `simulate --json` and reads its one line. */
async function startSimulator(args: string[], bin?: string[]): Promise<Started> {
  const child = spawn(
    process.execPath,
    [...(bin ?? (await sourceBin())), 'simulate', '--json', '--port', '0', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`simulate exited with ${code}`)));
  });
  return { child, info: JSON.parse(line) as SimInfo, exit, stderr: () => stderr };
}

/** A wallet as the description shortens it. */
const shortWallet = (address: string) =>
  `${getAddress(address).slice(0, 6)}…${getAddress(address).slice(-4)}`;

/** Runs one CLI command to completion in a child process. */
function run(args: string[], env: Record<string, string> = {}) {
  return runCli(args, { env });
}

async function admin(
  info: SimInfo,
  operation: string,
  body?: unknown,
  method = body === undefined ? 'GET' : 'POST',
) {
  const response = await fetch(`${info.adminUrl}/${operation}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown> & { data?: any },
  };
}

/** A callback receiver that refuses the first delivery (500), then accepts, keeping what it saw. */
function receiver(): Promise<{ url: string; seen: IncomingHttpHeaders[]; server: Server }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(seen.length === 1 ? 500 : 200).end();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({ url: `http://127.0.0.1:${port}/callbacks`, seen, server });
    });
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'partner-cli-'));

// Each command is a fresh Node process running the CLI's sources, bundled once for the run.
describe('partner-s2s-sdk simulate, its admin API and the operator commands', { timeout: 60_000 }, () => {
  let sim: Started;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    hook = await receiver();
    sim = await startSimulator([
      '--seed',
      '1',
      '--callback-url',
      hook.url,
      '--callback-header',
      'x-callback-token: s3cret',
    ]);
    env = {
      PARTNER_BASE_URL: sim.info.baseUrl,
      PARTNER_CLIENT_ID: sim.info.clientId,
      PARTNER_CLIENT_SECRET: sim.info.clientSecret,
    };
  }, 30_000);

  afterAll(async () => {
    if (sim.child.exitCode === null) sim.child.kill('SIGTERM');
    await new Promise<void>((resolve) => hook.server.close(() => resolve()));
  });

  it('prints one JSON line, bound to loopback, the same demo for the same seed', () => {
    expect(sim.info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.info.adminUrl).toBe(`${sim.info.baseUrl}/__admin/v1`);
    const same = createPartnerSimulator({ seed: 1 });
    expect(sim.info.clientId).toBe(same.demo.credentials.clientId);
    expect(sim.info.wallet).toEqual(same.demo.wallet);
    expect(privateKeyToAccount(sim.info.wallet.privateKey).address).toBe(sim.info.wallet.address);
  });

  it('creates and funds users through the admin API, amounts as decimal strings', async () => {
    const org = await admin(sim.info, 'createOrganisation', {
      params: { scopes: ['all:read', 'all:write'] },
    });
    expect(org.status).toBe(200);
    const user = await admin(sim.info, 'createUser', { params: { organisationId: org.body.data } });
    expect(user.body.data.userId).toMatch(/^usr_/);
    const token = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
    const big = '123456789012345678901234567890';
    const funded = await admin(sim.info, 'fund', {
      userId: user.body.data.userId,
      chainId: 8453,
      token,
      raw: big,
    });
    expect(funded).toEqual({ status: 200, body: { data: null } });
    const balance = await admin(sim.info, 'balance', { userId: user.body.data.userId, chainId: 8453, token });
    expect(balance.body.data).toBe(big);
  });

  it('validates every admin call with the service envelope', async () => {
    const bad = await admin(sim.info, 'fund', { userId: 'usr_nobody', chainId: -1, token: 'x', raw: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    expect((bad.body.errors as string[]).length).toBeGreaterThanOrEqual(4);
    expect((await admin(sim.info, 'nothing', {})).body).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
    expect((await admin(sim.info, 'fund')).body).toMatchObject({ statusCode: 405 });
    const notJson = await fetch(`${sim.info.adminUrl}/advanceClock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(await notJson.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'the body must be JSON',
    });
  });

  let transferId: string;

  it('runs the bridge flow with the printed wallet, then advances it through the admin API', async () => {
    const client = new PartnerClient({
      baseUrl: sim.info.baseUrl,
      clientId: sim.info.clientId,
      clientSecret: sim.info.clientSecret,
    });
    const signer = privateKeyToAccount(sim.info.wallet.privateKey);
    const result = await client.bridge.execute({
      userId: sim.info.userId,
      routeId: ROUTE_ID,
      amount: '25',
      signer,
    });
    transferId = result.transferId;
    const wrong = await admin(sim.info, 'advance', { transferId, status: 'delivered', details: {} });
    expect(wrong.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(wrong.body.message).toMatch(/cannot go from submitted to delivered/);
    const advanced = await admin(sim.info, 'advance', {
      transferId,
      status: 'source_confirmed',
      details: {},
    });
    expect(advanced.body.data).toMatchObject({ transferId, status: 'source_confirmed' });
    expect((await client.bridge.transfers.get({ userId: sim.info.userId, transferId })).status).toBe(
      'source_confirmed',
    );
  });

  it('sends callbacks with the configured header and retries a refused one, listed with its attempts', async () => {
    let deliveries: {
      transferId: string;
      status: string;
      state: string;
      attempts: number;
      lastStatus: number;
    }[] = [];
    for (let i = 0; i < 60; i++) {
      deliveries = (await admin(sim.info, 'callbacks')).body.data;
      if (deliveries.every((delivery) => delivery.state !== 'pending')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const first = deliveries.find((delivery) => delivery.transferId === transferId)!;
    // The receiver refused the very first callback: it came again a second later and was taken.
    expect(first).toMatchObject({ state: 'delivered', attempts: 2, lastStatus: 200 });
    expect(hook.seen.length).toBeGreaterThanOrEqual(deliveries.length + 1);
    for (const headers of hook.seen) expect(headers['x-callback-token']).toBe('s3cret');
    // The refusal was reported to whoever runs the simulator, not swallowed.
    expect(sim.stderr()).toMatch(
      /callback submitted of brt_\w+ failed \(try 1\): the receiver answered 500; will retry/,
    );
  });

  it('verify: the summary for a saved batch (exit 0), every issue for a tampered one (exit 1)', async () => {
    const client = new PartnerClient({
      baseUrl: sim.info.baseUrl,
      clientId: sim.info.clientId,
      clientSecret: sim.info.clientSecret,
    });
    const route = (await client.bridge.routes()).find((r) => r.routeId === ROUTE_ID)!;
    const built = await client.bridge.construct({ userId: sim.info.userId, routeId: ROUTE_ID, amount: '25' });
    const routeFile = join(tmp, 'route.json');
    const constructFile = join(tmp, 'construct.json');
    writeFileSync(routeFile, JSON.stringify(route));
    writeFileSync(constructFile, JSON.stringify(built));
    const verifyArgs = (file: string, amount: string, ...extra: string[]) => [
      'verify',
      file,
      '--route',
      routeFile,
      '--wallet',
      sim.info.wallet.address,
      '--amount',
      amount,
      ...extra,
    ];
    const ok = await run(verifyArgs(constructFile, '25'));
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    // The SDK's description of the batch, then the digests in full for a signer's screen.
    const total = fromRawAmount(BigInt(built.quote.amountInRaw) + BigInt(built.quote.gasFeeRaw), 6);
    const printed = ok.stdout.replace(/[\u202f\u00a0]/g, ' ').split('\n');
    expect(printed[0]).toBe('Bridge 25 USDC from Base to BNB Chain');
    expect(printed).toContain(
      `  You send 25 USDC + ${built.quote.gasFee} USDC gas fee = ${total} USDC total from ${shortWallet(sim.info.wallet.address)} on Base`,
    );
    expect(printed).toContain(
      `  You receive at least ${built.quote.amountOut} USDC on BNB Chain, to the same wallet ${shortWallet(sim.info.wallet.address)}`,
    );
    expect(printed.some((text) => text.startsWith('  warning FIRST_DELEGATION: '))).toBe(
      built.bundle.authorization !== null,
    );
    expect(printed).toContain(`  userOpHash         ${built.bundle.userOpHash}`);
    expect(printed).toContain(`  erc191Digest       ${hashMessage({ raw: built.bundle.userOpHash })}`);
    expect(printed.find((text) => text.startsWith('  summaryDigest      0x'))).toBeDefined();

    const german = await run(
      verifyArgs(constructFile, '25', '--locale', 'de-DE', '--time-zone', 'Europe/Berlin', '--json'),
    );
    expect(german.code).toBe(0);
    const { description } = JSON.parse(german.stdout);
    expect(description.title).toBe('Bridge 25 USDC from Base to BNB Chain');
    expect(description.lines[1]).toContain(`= ${total.replace('.', ',')} USDC total`);
    expect(description.machine.schema).toBe('partner-s2s/bridge-summary@1');
    expect(description.binding.userOpHash).toBe(built.bundle.userOpHash);
    const badZone = await run(verifyArgs(constructFile, '25', '--time-zone', 'Mars/Olympus'));
    expect(badZone.code).toBe(2);
    expect(badZone.stderr).toMatch(/--time-zone: must be an IANA time zone/);

    const tampered = structuredClone(built);
    tampered.bundle.calls[0]!.target = '0x000000000000000000000000000000000000dEaD';
    const tamperedFile = join(tmp, 'tampered.json');
    writeFileSync(tamperedFile, JSON.stringify(tampered));
    const bad = await run(verifyArgs(tamperedFile, '25'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/verification failed: \d+ issue/);

    const wrongAmount = await run(verifyArgs(constructFile, '26', '--json'));
    expect(wrongAmount.code).toBe(1);
    expect(JSON.parse(wrongAmount.stdout)).toMatchObject({ ok: false });
    expect((await run(['verify', '--route', routeFile])).code).toBe(2);
  });

  it('token prints scopes and expiry, never the token or the secret unless asked', async () => {
    const plain = await run(['token'], env);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('bridge:read');
    expect(plain.stdout).toMatch(/expires at {2}\d{4}-/);
    expect(plain.stdout + plain.stderr).not.toMatch(/at_/);
    expect(plain.stdout + plain.stderr).not.toContain(sim.info.clientSecret);
    const json = await run(['token', '--json'], env);
    expect(Object.keys(JSON.parse(json.stdout)).sort()).toEqual(['expiresAt', 'scopes']);
    const shown = await run(['token', '--show-token'], env);
    expect(shown.stdout).toMatch(/token {7}at_/);
  });

  it('routes and transfers read the service; an unreachable route says so', async () => {
    await admin(sim.info, 'configureRoute', {
      routeId: 'bsc-usdc-to-base-usdc',
      change: { reachable: false, gasFeeRaw: '1000' },
    });
    const routes = await run(['routes'], env);
    expect(routes.code).toBe(0);
    expect(routes.stdout).toMatch(/bsc-usdc-to-base-usdc .*unreachable/);
    const list = await run(
      ['transfers', 'list', '--user', sim.info.userId, '--status', 'source_confirmed', '--json'],
      env,
    );
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).map((t: { transferId: string }) => t.transferId)).toEqual([transferId]);
    const got = await run(['transfers', 'get', '--user', sim.info.userId, '--id', transferId, '--json'], env);
    expect(JSON.parse(got.stdout)).toMatchObject({ transferId, status: 'source_confirmed' });
  });

  it('exit codes: 2 for usage, 1 for a refusal by the service', async () => {
    // The process's own exit code, then the rest through the bin's main in this process.
    expect((await run([])).code).toBe(2);
    expect((await run(['transfers', 'get', '--user', 'usr_nobody', '--id', 'brt_x'], env)).code).toBe(1);
    expect((await runMain(['nope'])).code).toBe(2);
    expect((await runMain(['transfers', 'list'], env)).code).toBe(2);
    expect((await runMain(['transfers', 'list', '--user', 'u', '--status', 'lost'], env)).code).toBe(2);
    expect((await runMain(['routes'], {})).code).toBe(2);
    expect((await runMain(['simulate', '--port', 'x'])).code).toBe(2);
    for (const command of ['simulate', 'token', 'routes', 'transfers', 'verify', 'sign', 'send']) {
      const help = await runMain([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^usage: partner-s2s-sdk/);
    }
    const wrongSecret = await runMain(['token'], { ...env, PARTNER_CLIENT_SECRET: 'sec_wrong_secret_value' });
    expect(wrongSecret.code).toBe(1);
    expect(wrongSecret.stderr).not.toContain('sec_wrong_secret_value');
  });

  it('moves the clock, rotates and revokes a credential, resets', async () => {
    expect((await admin(sim.info, 'advanceClock', { ms: 1000 })).status).toBe(200);
    const rotated = await admin(sim.info, 'rotateCredential', {
      clientId: sim.info.clientId,
      params: { graceMs: 0 },
    });
    expect(rotated.body.data.clientSecret).toMatch(/^sec_/);
    expect((await run(['token'], env)).code).toBe(1);
    expect(
      (await run(['token'], { ...env, PARTNER_CLIENT_SECRET: rotated.body.data.clientSecret })).code,
    ).toBe(0);
    await admin(sim.info, 'revokeCredential', { clientId: sim.info.clientId });
    expect(
      (await run(['token'], { ...env, PARTNER_CLIENT_SECRET: rotated.body.data.clientSecret })).code,
    ).toBe(1);
    const reset = await admin(sim.info, 'reset', {});
    // Seeded: the demo after a reset is the demo printed at start.
    expect(reset.body.data.credentials).toEqual({
      clientId: sim.info.clientId,
      clientSecret: sim.info.clientSecret,
    });
    expect((await run(['token'], env)).code).toBe(0);
    expect((await admin(sim.info, 'callbacks')).body.data).toEqual([]);
  });

  it('closes cleanly on SIGTERM with exit code 0', async () => {
    sim.child.kill('SIGTERM');
    expect(await sim.exit).toBe(0);
  });
});

const BIN_MISSING = `the built bin is not run: looked for ${BUILT_BIN} in ${process.cwd()}, not there (run npm run build first)`;
skipOrFail(existsSync(BUILT_BIN), BIN_MISSING);

describe('the built bin', { timeout: 30_000 }, () => {
  it.skipIf(!existsSync(BUILT_BIN))('starts, answers and stops on SIGINT with exit code 0', async () => {
    const sim = await startSimulator([], [BUILT_BIN]);
    expect((await fetch(`${sim.info.adminUrl}/routes`)).status).toBe(200);
    sim.child.kill('SIGINT');
    expect(await sim.exit).toBe(0);
  });
});

describe('callback retries', () => {
  it('are bounded: a receiver that always fails is tried `attempts` times, then marked failed', async () => {
    let calls = 0;
    const callbacks = new SimCallbacks(
      () => {
        calls += 1;
        throw new Error('receiver down');
      },
      undefined,
      { attempts: 3, firstDelayMs: 5 },
    );
    callbacks.send({ transferId: 'brt_1', status: 'submitted' } as never);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toBe(3);
    expect(callbacks.deliveries[0]).toMatchObject({
      state: 'failed',
      attempts: 3,
      lastError: 'receiver down',
    });
  });

  it('stop on close', async () => {
    let calls = 0;
    const callbacks = new SimCallbacks(
      () => {
        calls += 1;
        throw new Error('receiver down');
      },
      undefined,
      { attempts: 5, firstDelayMs: 20 },
    );
    callbacks.send({ transferId: 'brt_1', status: 'submitted' } as never);
    await new Promise((resolve) => setTimeout(resolve, 5));
    callbacks.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toBe(1);
    expect(callbacks.deliveries[0]).toMatchObject({ state: 'pending', attempts: 1 });
  });
});
