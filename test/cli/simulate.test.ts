import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type BridgeTransfer,
  createCallbackRouter,
  PartnerClient,
  standardWebhooks,
} from '../../src/index.js';
import { closeCallbackServers, serveCallbacks } from '../helpers/callback-server.js';
import { runCli, sourceBin } from '../helpers/cli.js';

/*
 * `partner-s2s-sdk simulate` as a test harness runs it: through a launcher such as `npx`, which
 * starts the simulator as its child and may die without passing a signal on.
 */

let SOURCE_BIN: string[];
beforeAll(async () => {
  SOURCE_BIN = await sourceBin();
}, 60_000);

/**
 * A stand-in for npx: starts the simulator sharing its stdout, tells its pid on stderr, forwards
 * no signal. SIGTERM or SIGKILL to it leaves the simulator orphaned, as npm's shell does.
 */
const LAUNCHER = `
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, process.argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit'] });
process.stderr.write('pid ' + child.pid + '\\n');
`;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether something accepts connections on 127.0.0.1:`port`. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function until(check: () => Promise<boolean> | boolean, boundMs: number): Promise<boolean> {
  const end = Date.now() + boundMs;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

const started: number[] = [];
const launchers: ChildProcess[] = [];
afterEach(async () => {
  await closeCallbackServers();
  // Whatever a failed test left running: the simulators by their pid, then their launchers.
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const launcher of launchers.splice(0)) if (launcher.exitCode === null) launcher.kill('SIGKILL');
});

/** Starts `simulate --json` (through the launcher unless `direct`); its first line and pids. */
async function start(args: string[], direct = false) {
  const argv = direct ? SOURCE_BIN : ['-e', LAUNCHER, '--', ...SOURCE_BIN];
  const child = spawn(process.execPath, [...argv, 'simulate', '--json', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  launchers.push(child);
  let stderr = '';
  const pid = new Promise<number>((resolve) => {
    if (direct) resolve(child.pid!);
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      const match = /pid (\d+)/.exec(stderr);
      if (match) resolve(Number(match[1]));
    });
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  const simulator = await pid;
  started.push(simulator);
  const info = JSON.parse(line) as { baseUrl: string; adminUrl: string };
  return { child, simulator, info, port: Number(new URL(info.baseUrl).port), stderr: () => stderr };
}

describe('simulate under a test harness', { timeout: 60_000 }, () => {
  it.each(['SIGTERM', 'SIGKILL'] as const)(
    'stops, and frees its port, when the launcher that started it gets %s',
    async (signal) => {
      const { child, simulator, port } = await start([]);
      expect(await listening(port)).toBe(true);
      child.kill(signal);
      // A bound, not a timing: under load the poll and the close take longer than when idle.
      expect(await until(async () => !(await listening(port)), 15_000)).toBe(true);
      expect(await until(() => !alive(simulator), 15_000)).toBe(true);
    },
  );

  it('--admin-token: every admin call needs Authorization: Bearer <token>', async () => {
    const token = 'cli-admin-token-5b1e';
    const { info } = await start(['--admin-token', token], true);
    const call = (authorization?: string) =>
      fetch(`${info.adminUrl}/advanceClock`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(authorization === undefined ? {} : { authorization }),
        },
        body: '{"ms":1}',
      });
    expect((await call()).status).toBe(401);
    expect((await call('Bearer another')).status).toBe(401);
    expect((await call(`Bearer ${token}`)).status).toBe(200);
    const routes = await fetch(`${info.adminUrl}/routes`, { headers: { authorization: `Bearer ${token}` } });
    expect(routes.status).toBe(200);
  });

  it('--admin-token that cannot travel in a header is a usage error (exit 2)', async () => {
    const { code, stderr } = await runCli(['simulate', '--port', '0', '--admin-token', 'a b']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/admin-?token/i);
  });

  it('--callback-signing-secret: callbacks a standardWebhooks router accepts, signed by each secret', async () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const other = `whsec_${Buffer.alloc(32, 4).toString('base64')}`;
    const router = createCallbackRouter({ authenticate: standardWebhooks({ secret }) });
    const seen: BridgeTransfer[] = [];
    router.on('bridge_transfer_submitted', (transfer) => void seen.push(transfer));
    const url = await serveCallbacks(router.nodeHandler);
    const { info } = await start(
      ['--callback-url', url, '--callback-signing-secret', other, '--callback-signing-secret', secret],
      true,
    );
    const demo = info as typeof info & {
      clientId: string;
      clientSecret: string;
      userId: string;
      wallet: { privateKey: `0x${string}` };
    };
    const client = new PartnerClient({
      baseUrl: demo.baseUrl,
      clientId: demo.clientId,
      clientSecret: demo.clientSecret,
    });
    const { transferId } = await client.bridge.execute({
      userId: demo.userId,
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '3',
      signer: privateKeyToAccount(demo.wallet.privateKey),
    });
    await vi.waitFor(() => expect(seen.map((transfer) => transfer.transferId)).toEqual([transferId]), {
      timeout: 15_000,
    });
  });

  it('--callback-signing-secret not in the whsec_ form is a usage error (exit 2) that does not repeat it', async () => {
    const bad = Buffer.alloc(32, 3).toString('base64');
    const { code, stderr } = await runCli(['simulate', '--port', '0', '--callback-signing-secret', bad]);
    expect(code).toBe(2);
    expect(stderr).toContain('whsec_');
    expect(stderr).not.toContain(bad);
  });
});
