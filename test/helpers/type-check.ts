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

/**
 * The errors of a program, one formatted line each (file, line, message): of every file, or of the
 * files named (then the others are checked only as far as those need them, which is much faster).
 */
export function errorsOf(program: ts.Program, only?: readonly string[]): string[] {
  const diagnostics = only
    ? [
        ...program.getOptionsDiagnostics(),
        ...program.getGlobalDiagnostics(),
        ...only.flatMap((name) => {
          const file = program.getSourceFile(name);
          return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
        }),
      ]
    : ts.getPreEmitDiagnostics(program);
  return diagnostics
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
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

/** The package's entries as the sources, as tsconfig.json's `paths` map them. */
const SOURCE_ENTRIES: Record<string, string[]> = {
  'partner-s2s-sdk': [join(ROOT, 'src/index.ts')],
  'partner-s2s-sdk/testing': [join(ROOT, 'src/testing/index.ts')],
  'partner-s2s-sdk/redis': [join(ROOT, 'src/redis/index.ts')],
  'partner-s2s-sdk/postgres': [join(ROOT, 'src/postgres/index.ts')],
  'partner-s2s-sdk/stores': [join(ROOT, 'src/stores/index.ts')],
};

/** Files `checkSnippets` parsed, by name and language version; the snippets themselves are not kept. */
const PARSED = new Map<string, ts.SourceFile>();

/**
 * Type-checks snippets (ES modules, by file name) in a server project with Node's types and no DOM
 * lib, the package's names mapped to its sources and every other package from this repository's
 * node_modules. Libraries' own declarations are not checked (viem's need the DOM lib), and neither
 * are the sources: only the snippets' errors are returned.
 */
export function checkSnippets(snippets: Record<string, string>, { dom = false } = {}): string[] {
  const dir = join(ROOT, dom ? '.snippets-dom' : '.snippets');
  const virtual = new Map(Object.entries(snippets).map(([name, text]) => [join(dir, name), text]));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    // With the DOM lib too, as a project that also builds for the web has it: its fetch types
    // (BodyInit, Request) are narrower than Node's in places.
    lib: dom ? ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'] : ['lib.es2022.d.ts'],
    types: ['node'],
    // Bundler resolution, as Next.js projects have it: extensionless imports between a recipe's
    // files; packages are still read through their `exports`.
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    // `@/…` is the alias Next.js projects have, so a recipe's files can import one another.
    paths: { ...SOURCE_ENTRIES, '@/*': [join(dir, '*')] },
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => virtual.has(file) || fileExists.call(host, file);
  host.directoryExists = (path) =>
    [...virtual.keys()].some((file) => file.startsWith(`${path}/`)) || ts.sys.directoryExists(path);
  host.readFile = (file) => virtual.get(file) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) => {
    const text = virtual.get(file);
    if (text !== undefined) return ts.createSourceFile(file, text, language, true);
    // The sources and declarations parsed once per file for every check of the process (the
    // options that shape a parse are the same in each): most of a check's time otherwise.
    const key = `${file}\0${JSON.stringify(language)}`;
    let parsed = PARSED.get(key);
    if (!parsed) {
      parsed = getSourceFile.call(host, file, language, ...rest);
      if (parsed) PARSED.set(key, parsed);
    }
    return parsed;
  };
  const program = ts.createProgram([...virtual.keys()], options, host);
  return errorsOf(program, [...virtual.keys()]).map((error) => error.slice(dir.length + 1));
}
