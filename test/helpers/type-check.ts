import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

/** What a type check found: its errors, formatted, and every file the program read. */
export interface TypeCheck {
  errors: string[];
  files: string[];
}

const ROOT = process.cwd();

/** The errors of a program, one formatted line each (file, line, message). */
export function errorsOf(program: ts.Program, only?: (file: string) => boolean): string[] {
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.category === ts.DiagnosticCategory.Error && (!only || !d.file || only(d.file.fileName)))
    .map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      if (!d.file || d.start === undefined) return text;
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      return `${d.file.fileName}:${line + 1}: ${text}`;
    });
}

/**
 * Type-checks `files` as a project of a partner's own would: a directory of its own with
 * `tsconfig.json` holding `compilerOptions`, and in its node_modules the package (this repository,
 * so its `exports` lead to the built declarations in dist), @types/node and the `packages` named.
 * Nothing else is reachable, as after `npm install partner-s2s-sdk` in a strict (pnpm) layout.
 */
export function checkConsumer(
  files: Record<string, string>,
  compilerOptions: Record<string, unknown>,
  packages: readonly string[] = [],
): TypeCheck {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-consumer-'));
  try {
    const link = (target: string, name: string) => {
      const path = join(dir, 'node_modules', name);
      mkdirSync(dirname(path), { recursive: true });
      symlinkSync(target, path, 'dir');
    };
    link(ROOT, 'partner-s2s-sdk');
    for (const name of ['@types/node', ...packages])
      link(realpathSync(join(ROOT, 'node_modules', name)), name);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'consumer', type: 'module', private: true }),
    );
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: Object.keys(files) }));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const parsed = ts.getParsedCommandLineOfConfigFile(
      join(dir, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
        },
      },
    );
    if (!parsed) throw new Error('tsconfig.json could not be read');
    const program = ts.createProgram(parsed.fileNames, parsed.options);
    const errors = [
      ...parsed.errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
      ...errorsOf(program),
    ];
    return { errors, files: program.getSourceFiles().map((file) => resolve(file.fileName)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
