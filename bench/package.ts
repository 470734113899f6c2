/**
 * The packed tarball as `npm pack` makes it from the build (`npm pack --dry-run --json`): the
 * bytes a partner downloads.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { table, verdict } from './lib.js';

const LIMIT = 400_000;

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
  verdict('packed tarball', `${bytes(packed.size)} bytes`, `≤ ${bytes(LIMIT)} bytes`, packed.size <= LIMIT);
}
