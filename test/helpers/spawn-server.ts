import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/** Where a server's binary is looked for after `PATH`: Debian installs daemons in sbin, off a user's `PATH`. */
const SBIN = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

/** The directories `findExecutable` looks in, in order. */
export function searchDirs(): string[] {
  const path = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return [...new Set([...path, ...SBIN])];
}

/**
 * The absolute path of `name` on `PATH` or in an sbin directory, or undefined; a missing one is
 * reported with `lookedFor`, which names every directory searched.
 */
export function findExecutable(name: string): string | undefined {
  for (const dir of searchDirs()) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}

/** `<name>: not on PATH nor in /usr/sbin, …`: what a skip says it looked for and where. */
export function lookedFor(name: string): string {
  return `${name}: not found on PATH (${process.env.PATH ?? ''}) nor in ${SBIN.join(', ')}`;
}

/** A port free on 127.0.0.1 now, for a server a test starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface SpawnServerOptions {
  /** Text the server prints once it accepts connections. */
  ready: string;
  /** How `stop` asks it to end. */
  stopSignal: NodeJS.Signals;
  /** How it is ended when the test's worker exits first (a test that timed out before its `stop`). */
  orphanSignal: NodeJS.Signals;
  /** The user it runs as (`initdb` and `postgres` refuse root). */
  user?: { uid: number; gid: number } | undefined;
}

/**
 * Spawns a server for a test, waits until it says it is ready, and answers how to stop it (the
 * promise resolves once it has exited). It never outlives the worker that started it.
 */
export async function spawnServer(
  command: string,
  args: string[],
  { ready, stopSignal, orphanSignal, user }: SpawnServerOptions,
): Promise<() => Promise<void>> {
  const child: ChildProcess = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(ready)) resolve();
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code}: ${out}`)));
  });
  const orphan = () => child.kill(orphanSignal);
  process.once('exit', orphan);
  child.once('exit', () => process.off('exit', orphan));
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(stopSignal);
    });
}
