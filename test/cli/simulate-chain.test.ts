import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type Hex, parseEventLogs } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient, toRawAmount } from '../../src/index.js';
import { type ChainWorld, chainOrSkip, startChainWorld } from '../helpers/chain.js';
import { freePort } from '../helpers/spawn-server.js';

/*
 * `partner-s2s-sdk simulate --chain-rpc <url>`: the simulator served over HTTP as the bundler on
 * the test chain, driven as a partner would, through the client and the admin API.
 */

const chain = await chainOrSkip();
const SOURCE_BIN = ['--import', 'tsx', 'src/cli/bin.ts'];
/** Anvil's second unlocked account's well-known test key. */
const SECOND_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

/** A wallet whose key the simulator never sees (anvil's second account). */
const OTHER_WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

interface Info {
  organisationId: string;
  baseUrl: string;
  adminUrl: string;
  clientId: string;
  clientSecret: string;
  userId: string;
  wallet: { address: Hex; privateKey: Hex };
  chain?: { chainId: number; rpc: string };
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [...SOURCE_BIN, 'simulate', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, exit, stderr: () => stderr };
}

/** Starts `simulate --json` with `args` and reads its line. */
async function start(args: string[], env?: NodeJS.ProcessEnv): Promise<Info> {
  const { child, exit, stderr } = run(['--json', ...args], env);
  const line = await Promise.race([
    new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)),
    exit.then((code) => Promise.reject(new Error(`exited with ${code}: ${stderr()}`))),
  ]);
  return JSON.parse(line) as Info;
}

/** The demo user bridges 5 USDC with `execute`, waited for until final: it must be delivered. */
async function bridgeFive(client: PartnerClient, info: Info) {
  const { transferId, summary } = await client.bridge.execute({
    userId: info.userId,
    routeId: 'base-usdc-to-bsc-usdc',
    amount: '5',
    signer: privateKeyToAccount(info.wallet.privateKey),
  });
  const final = await client.bridge.transfers.wait(
    { userId: info.userId, transferId },
    { pollIntervalMs: 100 },
  );
  expect(final.status).toBe('delivered');
  return { final, summary };
}

describe.runIf(chain.ready)('simulate --chain-rpc', { timeout: 60_000 }, () => {
  let world: ChainWorld;

  beforeAll(async () => {
    if (!chain.ready) return;
    world = await startChainWorld(chain.packages);
  });
  afterAll(async () => {
    await world?.stop();
  });

  it('starts, serves, and runs a transfer through handleOps on that chain', async () => {
    const info = await start(['--chain-rpc', world.rpcUrl]);
    expect(info.chain).toEqual({ chainId: world.chainId, rpc: world.rpcUrl });
    const client = new PartnerClient({
      baseUrl: info.baseUrl,
      clientId: info.clientId,
      clientSecret: info.clientSecret,
    });
    // The demo wallet holds what the chain gives it, nothing more.
    const refused = await client.bridge
      .construct({ userId: info.userId, routeId: 'base-usdc-to-bsc-usdc', amount: '5' })
      .then(
        () => undefined,
        (error: unknown) => error as Error & { code?: string },
      );
    expect(refused?.code).toBe('INSUFFICIENT_BALANCE');
    await world.mint(info.wallet.address, toRawAmount('20', 6));

    const { final, summary } = await bridgeFive(client, info);
    const receipt = await world.client.getTransactionReceipt({ hash: final.srcTxHash as Hex });
    const [event] = parseEventLogs({
      abi: entryPoint07Abi,
      logs: receipt.logs,
      eventName: 'UserOperationEvent',
    });
    expect(event?.args.userOpHash).toBe(summary.userOpHash);
    expect(receipt.from).toBe(world.bundler.address.toLowerCase());

    // The admin API's fund is refused: the balances are the chain's.
    const fund = await fetch(`${info.adminUrl}/fund`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId: info.userId, chainId: 8453, token: world.token, raw: '1' }),
    });
    expect(fund.status).toBe(400);
    expect(await fund.text()).toMatch(/follows the chain at .*fund the wallet on the chain/);

    // A KMS's wallet is linked by its address over the admin API, as the README shows.
    const linked = await fetch(`${info.adminUrl}/createUser`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ params: { organisationId: info.organisationId, wallet: OTHER_WALLET } }),
    });
    expect(linked.status).toBe(200);
    expect(((await linked.json()) as { data: Info }).data.wallet).toEqual({
      address: OTHER_WALLET,
      privateKey: null,
    });
  });

  it('--bundler-key-env: handleOps goes out from that key', async () => {
    const info = await start(['--chain-rpc', world.rpcUrl, '--bundler-key-env', 'BUNDLER_KEY'], {
      BUNDLER_KEY: SECOND_KEY,
    });
    const client = new PartnerClient({
      baseUrl: info.baseUrl,
      clientId: info.clientId,
      clientSecret: info.clientSecret,
    });
    await world.mint(info.wallet.address, toRawAmount('20', 6));
    const { final } = await bridgeFive(client, info);
    const transaction = await world.client.getTransaction({ hash: final.srcTxHash as Hex });
    expect(transaction.from).toBe(privateKeyToAccount(SECOND_KEY).address.toLowerCase());
  });
});

describe('simulate --chain-rpc where no node answers', { timeout: 60_000 }, () => {
  it('exits 1 with one line naming the node, before serving anything', async () => {
    const port = await freePort();
    const { exit, stderr } = run(['--chain-rpc', `http://127.0.0.1:${port}/v2/secret-api-key`]);
    expect(await exit).toBe(1);
    const lines = stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`no JSON-RPC node answered eth_chainId at http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`),
    );
    // A provider's URL may carry its API key in the path: only the origin is shown.
    expect(stderr()).not.toContain('secret-api-key');
  });

  it('--bundler-key-env without --chain-rpc, or naming a key instead of a variable, is a usage error that shows no key', async () => {
    const alone = run(['--bundler-key-env', 'BUNDLER_KEY']);
    expect(await alone.exit).toBe(2);
    expect(alone.stderr()).toMatch(/--bundler-key-env needs --chain-rpc/);
    const pasted = run(['--chain-rpc', 'http://127.0.0.1:1', '--bundler-key-env', SECOND_KEY]);
    expect(await pasted.exit).toBe(2);
    expect(pasted.stderr()).not.toContain(SECOND_KEY.slice(2));
  });
});
