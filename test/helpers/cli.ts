import { spawn } from 'node:child_process';
import { main } from '../../src/cli/main.js';
import { bundled } from './bundle.js';

/**
 * The CLI from source, as `node` runs it in a child process: `src/cli/bin.ts` bundled once per run
 * (test/helpers/bundle.ts), which starts in a fraction of the seconds `--import tsx` takes.
 */
export async function sourceBin(): Promise<string[]> {
  return [await bundled('src/cli/bin.ts')];
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one CLI command to completion in a child process, with `input` on its stdin. */
export async function runCli(
  args: string[],
  { env = {}, input }: { env?: Record<string, string>; input?: string } = {},
): Promise<CliResult> {
  const bin = await sourceBin();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...bin, ...args], {
      env: { ...process.env, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
    });
    if (input !== undefined) child.stdin!.end(input);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs one CLI command in this process (the bin's `main` with captured streams): the same code as
 * the child process without the second or so tsx takes to start one.
 */
export async function runMain(
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    out: (line) => out.push(`${line}\n`),
    err: (line) => err.push(`${line}\n`),
    env,
    ...(input === undefined
      ? {}
      : {
          stdin: (async function* () {
            yield Buffer.from(input);
          })(),
        }),
  });
  return { code, stdout: out.join(''), stderr: err.join('') };
}
