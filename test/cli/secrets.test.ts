import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { type CliResult, runMain } from '../helpers/cli.js';

/*
 * A private key pasted where something else belongs (a variable's name, an option, a file name, a
 * user id) must never come back on the terminal, where it would reach a scrollback, a CI log or a
 * support ticket. Each command line below puts a real-looking key in one such place; none of them
 * may print the key, nor any 64 hex digits of it.
 */

/** A key as `0x` and 64 hex digits, and one without `0x` that is also a valid variable name. */
const KEY = `0x${'4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318'}`;
const BARE_KEY = 'ae468d01a3f3623184c0883a69102937d6231471b5dbb6204fe5129617082792';
/** KEY's address. */
const WALLET = '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23';

const tmp = mkdtempSync(join(tmpdir(), 'partner-cli-secrets-'));
const construct = join(tmp, 'construct.json');
const route = join(tmp, 'route.json');
const signed = join(tmp, 'signed.json');
writeFileSync(construct, '{}');
writeFileSync(route, '{}');
writeFileSync(signed, JSON.stringify({ signature: '0xff00', authorization: null }));

/** Every run of 64 hex digits in `key`, lower-cased: what must not be printed in any case. */
function hexRuns(key: string): string[] {
  const hex = key.replace(/^0x/, '').toLowerCase();
  return Array.from({ length: hex.length - 63 }, (_, i) => hex.slice(i, i + 64));
}

function expectNotShown(result: CliResult, key: string) {
  const printed = `${result.stdout}\n${result.stderr}`.toLowerCase();
  for (const run of hexRuns(key)) expect(printed, printed).not.toContain(run);
  // The command was refused, and said something about it.
  expect(result.code).not.toBe(0);
  expect(result.stderr.trim()).not.toBe('');
}

/** Command lines with `key` put where it does not belong, each refused without showing it. */
function misplaced(key: string): Array<[string, string[]]> {
  const batch = ['--route', route, '--wallet', WALLET, '--amount', '25'];
  return [
    ['sign --key-env <key>', ['sign', construct, ...batch, '--key-env', key]],
    ['sign --key-env=<key>', ['sign', construct, ...batch, `--key-env=${key}`]],
    ['the key as the command', [key]],
    ['the key as an unknown option of sign', ['sign', construct, ...batch, `--${key}`]],
    ['the key as an unknown option of verify', ['verify', construct, ...batch, `--${key}`]],
    ['the key as an unknown option of routes', ['routes', `--${key}`]],
    ['the key as an unknown option of token', ['token', `--${key}`]],
    ['the key as an unknown option of transfers', ['transfers', 'list', '--user', 'u', `--${key}`]],
    ['the key as an unknown option of send', ['send', `--${key}`]],
    ['the key as an unknown option of simulate', ['simulate', `--${key}`]],
    ['the key as a value of a flag that takes none', ['routes', `--json=${key}`]],
    ['the key as a positional of routes', ['routes', key]],
    ['the key as a positional of token', ['token', key]],
    ['the key as the action of transfers', ['transfers', key, '--user', 'u']],
    ['the key after transfers list', ['transfers', 'list', key, '--user', 'u']],
    ['the key as the construct file of sign', ['sign', key, ...batch, '--key-env', 'K']],
    ['the key as the construct file of verify', ['verify', key, ...batch]],
    ['the key as the route file', ['verify', construct, ...batch.slice(2), '--route', key]],
    ['the key as a second construct file', ['verify', construct, key, ...batch]],
    ['the key as the signed file of send', ['send', '--user', 'u', '--intent', 'i', '--signed', key]],
    ['the key as --wallet of sign', ['sign', construct, ...batch, '--wallet', key, '--key-env', 'K']],
    ['the key as --wallet of verify', ['verify', construct, ...batch, '--wallet', key]],
    ['the key as --amount', ['verify', construct, ...batch, '--amount', key]],
    ['the key as --locale', ['verify', construct, ...batch, '--locale', key]],
    ['the key as --time-zone', ['verify', construct, ...batch, '--time-zone', key]],
    ['the key as --now', ['verify', construct, ...batch, '--now', key]],
    ['the key as --status', ['transfers', 'list', '--user', 'u', '--status', key]],
    ['the key as --limit', ['transfers', 'list', '--user', 'u', '--limit', key]],
    ['the key as --port', ['simulate', '--port', key]],
    ['the key as --seed', ['simulate', '--seed', key]],
    ['the key as --callback-header', ['simulate', '--callback-header', key]],
    ['the key as --callback-url', ['simulate', '--callback-url', key]],
  ];
}

describe('the CLI never prints a key given where something else belongs', () => {
  // A command line that reaches the SDK without the credential is refused for the missing
  // variables first: these run with a credential, so that each value is read where it lands.
  const env = { K: KEY, PARTNER_CLIENT_ID: 'c', PARTNER_CLIENT_SECRET: 's' };

  for (const key of [KEY, BARE_KEY]) {
    const form = key === KEY ? '0x…' : 'bare hex';
    it.each(misplaced(key))(`%s (${form})`, async (_what, argv) => {
      expectNotShown(await runMain(argv, { ...env, PARTNER_BASE_URL: 'http://127.0.0.1:9' }), key);
    });
  }
});

describe('sign --key-env takes the name of a variable, never a key', () => {
  const batch = [construct, '--route', route, '--wallet', WALLET, '--amount', '25'];

  it.each([
    ['a key with 0x', KEY],
    ['a bare hex key (a valid variable name too)', BARE_KEY],
    ['a name a shell cannot set', 'WALLET-KEY'],
  ])('%s is refused as not a name (exit 2), before any variable is read', async (_what, given) => {
    // Even a variable of that name holding a key is not used: the command line is the mistake.
    const result = await runMain(['sign', ...batch, '--key-env', given], { [given]: KEY });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: --key-env takes the name of the environment variable/);
    expect(result.stderr).not.toContain(given);
    expect(result.stdout).toBe('');
  });

  it("an address is no key: the wallet and the key's own address are still named", async () => {
    // The key is WALLET's: another wallet makes sign say whose key it holds.
    const other = privateKeyToAccount(`0x${'11'.repeat(32)}`).address;
    const result = await runMain(['sign', ...batch, '--wallet', other, '--key-env', 'K'], { K: KEY });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`is for ${WALLET}, not for --wallet ${other}`);
    expectNotShown(result, KEY);
  });

  it('a --wallet that is not an address is refused unseen, not compared with the key', async () => {
    const result = await runMain(['sign', ...batch, '--wallet', KEY, '--key-env', 'K'], { K: KEY });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: --wallet must be an address/);
  });
});

describe('a secret that is not hex is not echoed either', () => {
  it("a --callback-header without its colon: the header value is the receiver's secret", async () => {
    const result = await runMain(['simulate', '--callback-header', 'x-callback-token s3cret-value']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--callback-header must be 'name: value'/);
    expect(result.stderr).not.toContain('s3cret-value');
  });
});

describe('the CLI never prints a key given as an id the service is asked about', () => {
  let sim: PartnerSimulator;
  let server: { url: string; close: () => Promise<void> };
  let env: Record<string, string>;

  beforeAll(async () => {
    sim = createPartnerSimulator({ seed: 3 });
    server = await sim.listen();
    env = {
      PARTNER_BASE_URL: server.url,
      PARTNER_CLIENT_ID: sim.demo.credentials.clientId,
      PARTNER_CLIENT_SECRET: sim.demo.credentials.clientSecret,
    };
  });

  afterAll(async () => {
    await server.close();
    sim.close();
  });

  it.each<[string, string[]]>([
    ['--user of transfers list', ['transfers', 'list', '--user', KEY]],
    ['--user of transfers get', ['transfers', 'get', '--user', KEY, '--id', 'tr_1']],
    ['--id of transfers get', ['transfers', 'get', '--user', 'u', '--id', KEY]],
    ['--user of send', ['send', '--user', KEY, '--intent', 'i', '--signed', signed]],
    ['--intent of send', ['send', '--user', 'u', '--intent', KEY, '--signed', signed]],
  ])('the key as %s', async (_what, argv) => {
    expectNotShown(await runMain(argv, env), KEY);
  });
});
