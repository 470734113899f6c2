import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real redis-server for the Redis tests: started on 127.0.0.1 on a free port, in a temporary
 * directory, with persistence off, and stopped by `stop`. Nothing on the machine is touched.
 */
export interface RedisServer {
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** Whether redis-server is installed; without it the Redis tests skip (and fail under CI=true). */
export const REDIS_SERVER = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
export const REDIS_MISSING =
  'Redis tests skipped: redis-server not found (install the Debian package redis-server: apt-get install -y redis-server)';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  // A test that times out before its `stop` must not leave a server behind when its worker ends.
  const orphan = () => child.kill('SIGKILL');
  process.once('exit', orphan);
  child.once('exit', () => process.off('exit', orphan));
  let stopped: Promise<void> | undefined;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }).then(() => rmSync(dir, { recursive: true, force: true }));
      return stopped;
    },
  };
}
