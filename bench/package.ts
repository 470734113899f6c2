/**
 * The packed tarball as `npm pack` makes it from the build (`npm pack --dry-run --json`): the
 * bytes a partner downloads. Context: its budget is `npm run check:package`'s, not a benchmark's.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { context, table } from './lib.js';

export async function packageSize(): Promise<void> {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: resolve(import.meta.dirname, '..'),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  ) as { size: number; unpackedSize: number; files: { path: string }[] }[];
  if (!packed) throw new Error('npm pack printed nothing');
  const bytes = (value: number) => value.toLocaleString('en');
  table(
    'Package (npm pack --dry-run --json)',
    ['tarball', 'bytes'],
    [
      ['packed', bytes(packed.size)],
      ['unpacked', bytes(packed.unpackedSize)],
      ['files', packed.files.length],
    ],
  );
  context('packed tarball', `${bytes(packed.size)} bytes`);
}
