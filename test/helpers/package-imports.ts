import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';

/** One resolution of a bare package specifier, and the module that asked for it. */
export interface PackageImport {
  specifier: string;
  parent: string;
}

/**
 * Runs `script` (ESM, with tsx) in a fresh Node process whose resolve hook records every bare
 * package specifier and who asked for it, so a test sees what an import really pulls in.
 * `missing`: a package that cannot be found there, as when it is not installed.
 */
export function packageImports(script: string, { missing }: { missing?: string } = {}): PackageImport[] {
  // Hooks run on their own thread on newer Node lines, where stderr may not be flushed before the
  // process exits: every specifier is appended to a file, synchronously, instead.
  const log = join(mkdtempSync(join(tmpdir(), 'package-imports-')), 'imports.log');
  const hook = `
    import { appendFileSync } from 'node:fs';
    export async function resolve(specifier, context, next) {
      if (!/^(\\.|\\/|node:|file:|data:)/.test(specifier)) {
        appendFileSync(${JSON.stringify(log)}, JSON.stringify({ specifier, parent: String(context.parentURL) }) + '\\n');
        if (specifier === ${JSON.stringify(missing ?? null)})
          throw Object.assign(new Error('Cannot find package ' + specifier), { code: 'ERR_MODULE_NOT_FOUND' });
      }
      return next(specifier, context);
    }`;
  const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));`;
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(register)}`,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
    ],
    { encoding: 'utf8', cwd: process.cwd() },
  );
  expect(result.status, result.stderr).toBe(0);
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as PackageImport);
}
