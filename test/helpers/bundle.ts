import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { build } from 'tsup';
import { fromBroker } from './shared.js';

/*
 * A TypeScript entry (the CLI, a fleet worker) as one JavaScript file that plain `node` runs: the
 * same sources, bundled with tsup (the package's own build tool) with every dependency inside.
 * A child process through `node --import tsx` spends two seconds of CPU resolving and loading the
 * sources through tsx's hooks before it does anything (six on a busy machine); the bundle starts in
 * a fraction of that. No `__SDK_VERSION__` is written in, as under tsx: the sources as they are.
 */

/** Bundles `entry` (a path from the repository root, or absolute) into `outDir`; answers the file. */
export async function bundleEntry(entry: string, outDir: string): Promise<string> {
  const name = basename(entry).replace(/\.ts$/, '');
  await build({
    entry: { [name]: resolve(entry) },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    outExtension: () => ({ js: '.mjs' }),
    noExternal: [/.*/],
    external: ['pg-native'],
    // Bundled CommonJS packages (pg, ioredis) still call require for Node's own modules.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    config: false,
    dts: false,
    splitting: false,
    silent: true,
  });
  return join(outDir, `${name}.mjs`);
}

const own = new Map<string, Promise<string>>();

/**
 * `entry` bundled once per run (by test/global-setup.ts, shared by every file), or once per test
 * file when it runs without the run's setup; answers the file `node` runs.
 */
export async function bundled(entry: string): Promise<string> {
  const shared = await fromBroker<{ path: string }>(`bundle?entry=${encodeURIComponent(entry)}`);
  if (shared) return shared.path;
  let path = own.get(entry);
  if (!path) {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-bundle-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    path = bundleEntry(entry, dir);
    own.set(entry, path);
  }
  return path;
}
