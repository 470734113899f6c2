// What a partner sees of the built package: the version, readable code, and stack traces that
// name the TypeScript sources. These read `dist/`, which `npm install` builds (`prepare`).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
const BUILT = existsSync('dist/index.js') && existsSync('dist/cli/bin.js');
if (!BUILT && process.env.CI === 'true')
  throw new Error('dist/ is missing under CI=true: npm install builds it');
const built = BUILT ? describe : describe.skip;
if (!BUILT)
  console.warn(
    `package output tests skipped: looked for dist/index.js and dist/cli/bin.js in ${process.cwd()}, not both there (run npm run build)`,
  );

/** What `npm pack` puts in the tarball (without building: dist/ is there already). */
function packedFiles(): string[] {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  ) as [{ files: { path: string }[] }];
  return packed.files.map((file) => file.path);
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

built('the built package', () => {
  it('partner-s2s-sdk --version prints the package version', () => {
    const out = execFileSync(process.execPath, ['dist/cli/bin.js', '--version'], { encoding: 'utf8' });
    expect(out.trim()).toBe(version);
  });

  it('--help points at documentation that ships in the package', () => {
    const packed = packedFiles();
    for (const args of [['--help'], ['simulate', '--help']]) {
      const out = execFileSync(process.execPath, ['dist/cli/bin.js', ...args], { encoding: 'utf8' });
      // Each document the help names, as a path inside the package.
      const named = [...out.matchAll(/(?:^|[\s(/])((?:docs\/[\w-]+|README)\.md)\b/g)].map(
        (match) => match[1]!,
      );
      expect(named.length, `partner-s2s-sdk ${args.join(' ')} names a document`).toBeGreaterThan(0);
      expect(out).toContain('node_modules/partner-s2s-sdk/');
      for (const document of named) {
        expect(packed, `${document}, named by ${args.join(' ')}`).toContain(document);
        expect(existsSync(document)).toBe(true);
      }
    }
  });

  it('ships readable code: no line over 2,000 characters but the CommonJS export lists', () => {
    const long = files('dist')
      .filter((file) => /\.c?js$/.test(file))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line.length > 2_000 && !line.startsWith('exports.'))
          .map((line) => `${file}: ${line.length}`),
      );
    expect(long).toEqual([]);
  });

  it('an uncaught SDK error names the TypeScript source under --enable-source-maps', () => {
    for (const entry of ['./dist/index.js', './dist/index.cjs']) {
      const load = entry.endsWith('.cjs') ? `require('${entry}')` : `await import('${entry}')`;
      const script = `const m = ${load}; m.verifyBridgeBatch({});`;
      const run = spawnSync(
        process.execPath,
        [
          '--enable-source-maps',
          ...(entry.endsWith('.cjs') ? ['-e'] : ['--input-type=module', '-e']),
          script,
        ],
        { encoding: 'utf8' },
      );
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain('ArgumentError');
      expect(run.stderr).toMatch(/src\/onchain\/verify\/verify\.ts:\d+:\d+/);
      expect(run.stderr.length).toBeLessThan(4_000);
    }
  });
});
