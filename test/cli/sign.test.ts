import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { hashAuthorization } from 'viem/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BridgeConstructResult, type BridgeRoute, PartnerClient } from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { runCli, runMain } from '../helpers/cli.js';

/*
 * A team whose backend is not JavaScript finishes the bridge flow with the CLI alone: it saves what
 * construct and routes returned, `sign` verifies and signs it with the key named by an environment
 * variable, and `send` submits what `sign` printed. The simulator serves over HTTP on 127.0.0.1.
 * The flow runs the bin in child processes (stdin piped from one to the next); the refusals run its
 * `main` in this process, which spares a process start-up each.
 */

const ROUTE_ID = 'base-usdc-to-bsc-usdc';
const KEY_ENV = 'PARTNER_TEST_USER_KEY';
const tmp = mkdtempSync(join(tmpdir(), 'partner-cli-sign-'));

function save(name: string, value: unknown): string {
  const file = join(tmp, name);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

// Each command is a fresh Node process running the CLI's sources, bundled once for the run.
describe('partner-s2s-sdk sign and send', { timeout: 60_000 }, () => {
  let sim: PartnerSimulator;
  let server: { url: string; close: () => Promise<void> };
  let client: PartnerClient;
  let env: Record<string, string>;
  let route: BridgeRoute;
  let routeFile: string;

  beforeAll(async () => {
    sim = createPartnerSimulator({ seed: 7 });
    server = await sim.listen();
    client = new PartnerClient({ baseUrl: server.url, ...sim.demo.credentials });
    env = {
      PARTNER_BASE_URL: server.url,
      PARTNER_CLIENT_ID: sim.demo.credentials.clientId,
      PARTNER_CLIENT_SECRET: sim.demo.credentials.clientSecret,
      [KEY_ENV]: sim.demo.wallet.privateKey,
    };
    route = (await client.bridge.routes()).find((r) => r.routeId === ROUTE_ID)!;
    routeFile = save('route.json', route);
  });

  afterAll(async () => {
    await server.close();
    sim.close();
  });

  function signArgs(constructFile: string, amount: string[], wallet: string = sim.demo.wallet.address) {
    return ['sign', constructFile, '--route', routeFile, '--wallet', wallet, ...amount, '--key-env', KEY_ENV];
  }

  /** `verify` of a construct file against a route file, for the demo wallet and 5 tokens. */
  const verify5 = (constructFile: string, routesFile: string) => [
    'verify',
    constructFile,
    '--route',
    routesFile,
    '--wallet',
    sim.demo.wallet.address,
    '--amount',
    '5',
  ];

  function expectNoKey(...outputs: string[]) {
    for (const output of outputs) expect(output).not.toContain(sim.demo.wallet.privateKey.slice(2));
  }

  it('signs a verified batch (with its authorization) and sends it from stdin: the transfer is at the service', async () => {
    const built = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE_ID, amount: '25' });
    expect(built.bundle.authorization).not.toBeNull();
    const signed = await runCli(signArgs(save('construct.json', built), ['--amount', '25']), { env });
    expect(signed.code).toBe(0);
    // What is signed, worded for the operator on stderr: stdout stays the one JSON object send reads.
    const described = signed.stderr.split('\n');
    expect(described[0]).toBe('Bridge 25 USDC from Base to BNB Chain');
    expect(described).toContain(`  userOpHash         ${built.bundle.userOpHash}`);
    expect(described).toContain(`  authorizationHash  ${hashAuthorization(built.bundle.authorization!)}`);
    expect(described.some((text) => text.startsWith('  warning FIRST_DELEGATION: '))).toBe(true);
    expectNoKey(signed.stdout, signed.stderr);
    const printed = JSON.parse(signed.stdout) as { signature: string; authorization: unknown };
    expect(Object.keys(printed).sort()).toEqual(['authorization', 'signature']);
    expect(printed.signature).toMatch(/^0xff00[0-9a-f]{130}$/);
    expect(printed.authorization).toEqual({
      r: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      s: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      yParity: expect.any(Number),
    });

    const sent = await runCli(
      ['send', '--user', sim.demo.userId, '--intent', built.intentId, '--signed', '-'],
      {
        env,
        input: signed.stdout,
      },
    );
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(sent.stdout.trim()).toBe(built.transferId);
    expect(sim.transfer(built.transferId)).toMatchObject({ status: 'submitted', userId: sim.demo.userId });
  });

  it('prints a null authorization when the bundle asks for none (--max-amount), and sends it from a file', async () => {
    const built = await client.bridge.construct({
      userId: sim.demo.userId,
      routeId: ROUTE_ID,
      maxAmount: true,
    });
    expect(built.bundle.authorization).toBeNull();
    const signed = await runMain(
      signArgs(save('construct-max.json', built), ['--max-amount', '--json']),
      env,
    );
    expect(signed.code).toBe(0);
    const printed = JSON.parse(signed.stdout) as { signature: string; authorization: unknown };
    expect(printed.authorization).toBeNull();
    const signedFile = join(tmp, 'signed.json');
    writeFileSync(signedFile, signed.stdout);
    const sent = await runMain(
      ['send', '--user', sim.demo.userId, '--intent', built.intentId, '--signed', signedFile, '--json'],
      env,
    );
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ transferId: built.transferId });
    expect(sim.transfer(built.transferId).status).toBe('submitted');
    // It took the whole balance on chain: the tests that follow need USDC again.
    sim.fund(sim.demo.userId, 8453, route.from.contractAddress, 10_000_000_000n);
  });

  it('refuses what does not verify: exit 1, no signature, the issues on stderr', async () => {
    const built = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE_ID, amount: '5' });
    const tampered: BridgeConstructResult = structuredClone(built);
    tampered.bundle.calls[0]!.target = '0x000000000000000000000000000000000000dEaD';
    const refused = await runCli(signArgs(save('tampered.json', tampered), ['--amount', '5']), { env });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/verification failed: \d+ issue/);
    expect(refused.stderr).toMatch(/calls/);

    // The batch as built, but not the amount the operator meant.
    const wrongAmount = await runMain(signArgs(save('construct-5.json', built), ['--amount', '6']), env);
    expect(wrongAmount.code).toBe(1);
    expect(wrongAmount.stdout).toBe('');

    // A key that is not the wallet's: nothing is signed.
    const other = privateKeyToAccount(`0x${'11'.repeat(32)}`).address;
    const notTheWallet = await runMain(
      signArgs(save('construct-5b.json', built), ['--amount', '5'], other),
      env,
    );
    expect(notTheWallet.code).toBe(1);
    expect(notTheWallet.stdout).toBe('');
    expectNoKey(notTheWallet.stderr);
    expect(sim.transfer(built.transferId).status).toBe('pending');
  });

  it('refuses a command line without the amount, without the key, or with a key that is no key', async () => {
    const built = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE_ID, amount: '5' });
    const file = save('construct-usage.json', built);
    const noAmount = await runMain(signArgs(file, []), env);
    expect(noAmount.code).toBe(2);
    expect(noAmount.stderr).toMatch(/--amount or --max-amount/);
    expect((await runMain(signArgs(file, ['--amount', '5', '--max-amount']), env)).code).toBe(2);
    const noKey = await runMain(signArgs(file, ['--amount', '5']), { ...env, [KEY_ENV]: '' });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain(KEY_ENV);
    const badKey = await runMain(signArgs(file, ['--amount', '5']), {
      ...env,
      [KEY_ENV]: 'not-a-key-but-a-secret-value',
    });
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).not.toContain('not-a-key-but-a-secret-value');
    const send = ['send', '--user', sim.demo.userId, '--intent', built.intentId, '--signed', '-'];
    expect((await runMain(send, env, '')).code).toBe(2);
    expect((await runMain(send, env, '{"authorization":null}')).code).toBe(2);
    expect(sim.transfer(built.transferId).status).toBe('pending');
  });

  it('verify requires the amount meant and takes --now for a saved fixture', async () => {
    const built = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE_ID, amount: '5' });
    const file = save('construct-verify.json', built);
    const base = ['verify', file, '--route', routeFile, '--wallet', sim.demo.wallet.address];
    const noAmount = await runMain(base);
    expect(noAmount.code).toBe(2);
    expect(noAmount.stderr).toMatch(/--amount or --max-amount/);
    expect((await runMain([...base, '--amount', '5', '--max-amount'])).code).toBe(2);
    expect((await runMain([...base, '--amount', '5', '--now', 'yesterday'])).code).toBe(2);
    // Without an offset the time would be read in the machine's zone.
    expect((await runMain([...base, '--amount', '5', '--now', '2030-01-01T00:00:00'])).code).toBe(2);
    const later = new Date(Date.parse(built.quote.expiresAt) + 3_600_000).toISOString();
    const expired = await runMain([...base, '--amount', '5', '--now', later]);
    expect(expired.code).toBe(1);
    expect(expired.stderr).toMatch(/expir/);
  });

  /** An answer of the service as a client in another language saves it: the body, byte for byte. */
  async function rawAnswer(path: string, body?: unknown): Promise<string> {
    const token = await fetch(`${server.url}/api/v1/s2s/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: sim.demo.credentials.clientId,
        client_secret: sim.demo.credentials.clientSecret,
      }).toString(),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const answer = await fetch(`${server.url}/api/v1/s2s${path}`, {
      ...(body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) }),
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
    });
    expect(answer.status).toBe(200);
    return answer.text();
  }

  /** The body of a quote or construct for 5 tokens of the demo user, as JSON carries an amount. */
  const fiveTokens = () => ({ userId: sim.demo.userId, routeId: ROUTE_ID, amount: 5 });

  function saveText(name: string, text: string): string {
    const file = join(tmp, name);
    writeFileSync(file, text);
    return file;
  }

  it('verifies and signs the raw {"data": …} answers of construct and routes, as a client in another language saved them', async () => {
    const constructFile = saveText(
      'raw-construct.json',
      await rawAnswer('/bridge/construct/transaction/batch', fiveTokens()),
    );
    // The whole routes answer: the route is the one the construct result was built on.
    const routesFile = saveText('raw-routes.json', await rawAnswer('/bridge/routes'));
    const wallet = sim.demo.wallet.address;
    const verified = await runMain(verify5(constructFile, routesFile));
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.stdout.split('\n')[0]).toBe('Bridge 5 USDC from Base to BNB Chain');
    // The route on its own, as the service's answer holds it, works as well.
    const oneRoute = save('raw-route.json', { data: route });
    const signed = await runMain(
      ['sign', constructFile, '--route', oneRoute, '--wallet', wallet, '--amount', '5', '--key-env', KEY_ENV],
      env,
    );
    expect(signed.code).toBe(0);
    expect(JSON.parse(signed.stdout)).toMatchObject({ signature: expect.stringMatching(/^0xff00/) });
  });

  it('says what a construct or route file should hold when it holds something else', async () => {
    const quoteFile = saveText('raw-quote.json', await rawAnswer('/bridge/quote', fiveTokens()));
    const wrongFile = await runMain(verify5(quoteFile, routeFile));
    expect(wrongFile.code).toBe(1);
    expect(wrongFile.stderr).toMatch(/shape\.construct/);
    expect(wrongFile.stderr).toContain(
      `hint: ${quoteFile} should hold the answer of POST /api/v1/s2s/bridge/construct/transaction/batch`,
    );

    const built = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE_ID, amount: '5' });
    const constructFile = save('construct-elsewhere.json', { data: built });
    const otherRoutes = save('other-routes.json', {
      data: [{ ...route, routeId: 'somewhere-else' }],
    });
    const noSuchRoute = await runMain(verify5(constructFile, otherRoutes));
    expect(noSuchRoute.code).toBe(2);
    expect(noSuchRoute.stderr).toContain(`error: ${otherRoutes} holds no route ${ROUTE_ID}`);
  });

  // Last: it moves the simulator's clock.
  it('verify --now checks a fixture saved at another time as of that time', async () => {
    sim.advanceClock(2 * 86_400_000);
    const builtAt = new Date(sim.now()).toISOString();
    const built = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE_ID, amount: '5' });
    const file = save('construct-fixture.json', built);
    const base = ['verify', file, '--route', routeFile, '--wallet', sim.demo.wallet.address, '--amount', '5'];
    // Read at the machine's time, the quote is two days ahead: not a batch to sign now.
    expect((await runMain(base)).code).toBe(1);
    const asOfThen = await runMain([...base, '--now', builtAt]);
    expect(asOfThen.stderr).toBe('');
    expect(asOfThen.code).toBe(0);
  });
});
