import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PartnerClient } from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { runMain } from '../helpers/cli.js';
import { countingFetch, leaping, useTestClock } from '../helpers/clock.js';

/*
 * What the CLI prints is meant for a terminal: text the service or a file supplies cannot drive it,
 * and a failure says what to do next.
 */

/** Retitles the window, clears the screen, sets a colour (8-bit CSI), rubs out, starts a line. */
const ESCAPES = '\x1b]0;owned\x07\x1b[2J\x9b31m\x7f\r\n';
/** Any C0 or C1 control character or DEL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

/** A port nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  const url = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return Number(new URL(url).port);
}

/**
 * The simulator behind a proxy that puts terminal escapes into the strings the CLI shows: route
 * ids and providers, transfer statuses, and the message of every error answer.
 */
function hostileService(sim: PartnerSimulator): Server {
  // A transfer's routeId is an id the SDK checks the form of; a route's is free text.
  const poison = (keys: string[], value: unknown, key?: string): unknown => {
    if (typeof value === 'string' && keys.includes(key ?? '')) return `${value}${ESCAPES}`;
    if (Array.isArray(value)) return value.map((item) => poison(keys, item));
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, poison(keys, v, k)]));
    return value;
  };
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const answer = await sim.fetch(`${sim.baseUrl}${req.url}`, {
        method: req.method!,
        headers: req.headers as Record<string, string>,
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      });
      const text = await answer.text();
      const keys = req.url!.endsWith('/bridge/routes') ? ['routeId', 'provider'] : ['status', 'message'];
      const body = req.url!.endsWith('/auth/token') ? text : JSON.stringify(poison(keys, JSON.parse(text)));
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
    });
  });
}

describe('the CLI shows what the service or a file supplies without its control characters', () => {
  let sim: PartnerSimulator;
  let server: Server;
  let env: Record<string, string>;

  beforeAll(async () => {
    sim = createPartnerSimulator({ seed: 11 });
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    await client.bridge.execute({
      userId: sim.demo.userId,
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '25',
      signer: privateKeyToAccount(sim.demo.wallet.privateKey),
    });
    server = hostileService(sim);
    env = {
      PARTNER_BASE_URL: await listen(server),
      PARTNER_CLIENT_ID: sim.demo.credentials.clientId,
      PARTNER_CLIENT_SECRET: sim.demo.credentials.clientSecret,
    };
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    sim.close();
  });

  it('routes: a route id and provider with terminal escapes are printed escaped', async () => {
    const routes = await runMain(['routes'], env);
    expect(routes.code).toBe(0);
    expect(routes.stdout).not.toMatch(CONTROL);
    expect(routes.stdout).toContain('base-usdc-to-bsc-usdc\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\x7f\\x0d\\x0a');
    // One line per route: an escaped line break cannot forge another.
    expect(routes.stdout.trim().split('\n')).toHaveLength(sim.routes().length);
  });

  it('transfers list: a status with terminal escapes is printed escaped; --json keeps the value, escaped as JSON', async () => {
    const list = await runMain(['transfers', 'list', '--user', sim.demo.userId], env);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(CONTROL);
    expect(list.stdout).toContain('submitted\\x1b]0;owned');
    const json = await runMain(['transfers', 'list', '--user', sim.demo.userId, '--json'], env);
    expect(json.stdout).not.toMatch(CONTROL);
    expect(JSON.parse(json.stdout)[0].status).toBe(`submitted${ESCAPES}`);
  });

  it("an error's message with terminal escapes is printed escaped", async () => {
    const missing = await runMain(['transfers', 'get', '--user', sim.demo.userId, '--id', 'brt_nope'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\\x1b\]0;owned\\x07\\x1b\[2J\\x9b31m\\x7f\\x0d\\x0a/);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).not.toMatch(CONTROL);
  });

  it('a file: a route id in a saved construct result is printed escaped by verify', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'partner-cli-out-'));
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    const built = await client.bridge.construct({
      userId: sim.demo.userId,
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '5',
    });
    built.quote.routeId = `other${ESCAPES}`;
    writeFileSync(join(dir, 'route.json'), JSON.stringify(sim.routes()[0]));
    writeFileSync(join(dir, 'construct.json'), JSON.stringify(built));
    const result = await runMain([
      'verify',
      join(dir, 'construct.json'),
      '--route',
      join(dir, 'route.json'),
      '--wallet',
      sim.demo.wallet.address,
      '--amount',
      '5',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('other\\x1b]0;owned');
    expect(result.stdout + result.stderr).not.toMatch(CONTROL);
  });
});

describe('errors a newcomer can act on', () => {
  /**
   * `main` on the test's clock, through the runtime's fetch counted: the backoff between tries
   * leaps, and a connection being tried or a name being looked up is waited for in real time.
   */
  const mainLeaping = (args: string[], env: Record<string, string>) => {
    const { fetch, busy } = countingFetch();
    vi.stubGlobal('fetch', fetch);
    useTestClock();
    return leaping(runMain(args, env), busy);
  };

  it('a refused connection names the code, the host and the port', async () => {
    const port = await closedPort();
    const result = await mainLeaping(['routes'], {
      PARTNER_BASE_URL: `http://127.0.0.1:${port}`,
      PARTNER_CLIENT_ID: 'cli_test',
      PARTNER_CLIENT_SECRET: 'sec_test_secret',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).toContain(`127.0.0.1:${port}`);
    expect(result.stderr).not.toContain('sec_test_secret');
  });

  it('a host that does not resolve names the code (ENOTFOUND, or EAI_AGAIN without DNS), the host and the port', async () => {
    const result = await mainLeaping(['token'], {
      PARTNER_BASE_URL: 'https://partner.invalid:8443',
      PARTNER_CLIENT_ID: 'cli_test',
      PARTNER_CLIENT_SECRET: 'sec_test_secret',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/ENOTFOUND|EAI_AGAIN/);
    expect(result.stderr).toContain('partner.invalid:8443');
  }, 60_000);

  it('routes --help says what each line shows', async () => {
    const help = await runMain(['routes', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/route id/);
    expect(help.stdout).toMatch(/unreachable/);
    expect(help.stdout).toMatch(/--json/);
    expect(help.stdout).not.toMatch(/fees/);
  });

  it('the help says that simulator balances are base units', async () => {
    const help = await runMain(['--help']);
    expect(help.stdout).toMatch(/balance[^\n]*base units/);
  });

  it('the admin API speaks of JSON values: amounts are "a string of digits", not a bigint', async () => {
    const sim = createPartnerSimulator({ seed: 12 });
    const answer = await sim.fetch(`${sim.baseUrl}${sim.adminPath}/fund`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        userId: sim.demo.userId,
        chainId: 8453,
        token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        raw: 5,
      }),
    });
    const body = (await answer.json()) as { errors: string[] };
    expect(body.errors).toContain('raw: must be a string of digits (base units), e.g. "1000000"');
    expect(JSON.stringify(body)).not.toMatch(/bigint/i);
    const route = await sim.fetch(`${sim.baseUrl}${sim.adminPath}/configureRoute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        routeId: 'base-usdc-to-bsc-usdc',
        change: { gasFeeRaw: '-1', providerFeeBps: 3 },
      }),
    });
    expect(JSON.stringify(await route.json())).not.toMatch(/bigint/i);
    const target = await sim.fetch(`${sim.baseUrl}${sim.adminPath}/setCallbacks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ target: 42 }),
    });
    expect(JSON.stringify(await target.json())).not.toMatch(/function/);
    sim.close();
  });
});
