import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { TRANSFER_STATES } from '../src/schemas/states.js';

/**
 * The layer rule of ARCHITECTURE.md, enforced. Every import in src/ (static, re-export, dynamic
 * `import()`, `typeof import()`) is checked against the folders its folder may import.
 */

const BELOW_RESOURCES = ['schemas', 'errors', 'core', 'http', 'auth'];

/** Which layers each layer may import besides itself. `client` is src/client.ts and src/client/, `index` src/index.ts. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  schemas: [],
  errors: ['schemas'],
  core: ['schemas', 'errors'],
  http: ['schemas', 'errors', 'core'],
  auth: ['schemas', 'errors', 'core', 'http'],
  // resources/ and flows/ are the top of the data side, one way round inside it (checked below):
  // the resource classes (bridge.ts, transfers.ts) → the flows → the endpoint table (endpoints.ts, params.ts).
  resources: [...BELOW_RESOURCES, 'flows', 'onchain'],
  flows: [...BELOW_RESOURCES, 'resources', 'onchain'],
  client: [...BELOW_RESOURCES, 'resources', 'flows', 'onchain', 'callbacks'],
  // Side layers: the pure on-chain core, and the callback receiver (which reads bodies through core/body.ts).
  onchain: ['schemas', 'errors', 'core'],
  callbacks: ['schemas', 'errors', 'core'],
  // The Redis stores implement auth's, callbacks' and the tracker's store contracts (tracker/store.ts), and nothing above them.
  // Their bound in time is core's (core/time.ts): no store imports the HTTP layer for a timer.
  redis: ['schemas', 'errors', 'core', 'auth', 'callbacks', 'tracker'],
  // The Postgres stores: the same, plus the tracker's store contract.
  postgres: ['schemas', 'errors', 'core', 'auth', 'callbacks', 'tracker'],
  // The transfer tracker: above the flows (it reads through a client's structural shape), below client.ts.
  tracker: [...BELOW_RESOURCES, 'resources', 'flows', 'onchain', 'callbacks'],
  testing: [...BELOW_RESOURCES, 'resources', 'flows', 'onchain', 'callbacks', 'tracker'],
  index: [...BELOW_RESOURCES, 'resources', 'flows', 'onchain', 'callbacks', 'client', 'tracker'],
  // The entry of a store's author: the parts of the three store contracts, re-exported.
  stores: ['auth', 'callbacks', 'tracker'],
  // The CLI sits on top, beside client.ts: a consumer of the public entries and nothing else.
  cli: ['index', 'testing', 'stores'],
};

/** The resource classes: the only files of resources/ that call the flows. */
const RESOURCE_CLASSES = new Set(['src/resources/bridge.ts', 'src/resources/transfers.ts']);

/** The endpoint table and its argument schemas: the only files of resources/ the flows use. */
const ENDPOINT_TABLE = new Set(['src/resources/endpoints.ts', 'src/resources/params.ts']);

/** The files the CLI may import outside its folder: the package's public entries. */
const PUBLIC_ENTRIES = new Set(['src/index.ts', 'src/testing/index.ts', 'src/stores/index.ts']);

/**
 * The runtime packages onchain/ imports, none of which does I/O: viem, loaded lazily on first
 * verify or sign, and keccak-256 from @noble/hashes (viem's own), which the synchronous verifier
 * needs at once.
 */
const ONCHAIN_PACKAGE_EXCEPTIONS = new Set([
  'src/onchain/viem.ts → viem',
  'src/onchain/viem.ts → viem/utils',
  'src/onchain/keccak.ts → @noble/hashes/sha3',
  'src/onchain/keccak.ts → @noble/hashes/utils',
]);

interface Found {
  file: string;
  line: number;
  specifier: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|cts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** Every module specifier of one file, and every use of the global `fetch`. */
function scan(file: string, text = readFileSync(file, 'utf8')): { imports: Found[]; fetches: number[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const imports: Found[] = [];
  const fetches: number[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const add = (node: ts.Node, specifier: ts.Expression | undefined, typeOnly: boolean) => {
    if (specifier && ts.isStringLiteralLike(specifier)) {
      imports.push({ file, line: lineOf(node), specifier: specifier.text, typeOnly });
    } else if (specifier) {
      imports.push({ file, line: lineOf(node), specifier: '<computed>', typeOnly });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const typeOnly =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            !!clause.namedBindings &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      add(node, node.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      add(node, node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument)) add(node, argument.literal as ts.Expression, true);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (
        callee.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(callee) && callee.text === 'require')
      ) {
        add(node, node.arguments[0], false);
      }
    }
    if (ts.isIdentifier(node) && node.text === 'fetch' && usesGlobalFetch(node)) fetches.push(lineOf(node));
    if (ts.isElementAccessExpression(node)) {
      const key = node.argumentExpression;
      if (ts.isStringLiteralLike(key) && key.text === 'fetch') fetches.push(lineOf(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { imports, fetches };
}

/** An identifier `fetch` that names the global: not a property of some object, not a member's name. */
function usesGlobalFetch(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) {
    const owner = parent.expression;
    return ts.isIdentifier(owner) && ['globalThis', 'global', 'self', 'window'].includes(owner.text);
  }
  if (
    (ts.isPropertyAssignment(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isMethodSignature(parent) ||
      ts.isBindingElement(parent)) &&
    parent.name === node
  ) {
    return false;
  }
  return true;
}

/** The layer of a file under src/: its first folder, or `client`/`index` for the two top files. */
function layerOf(path: string): string {
  const [first, second] = relative('src', path).split(/[\\/]/);
  if (second === undefined) return first!.replace(/\.[^.]+$/, '');
  return first!;
}

function resolveRelative(importer: string, specifier: string): string {
  return normalize(join(dirname(importer), specifier))
    .split('\\')
    .join('/')
    .replace(/\.js$/, '.ts')
    .replace(/\.mjs$/, '.mts');
}

const isBuiltin = (specifier: string) =>
  specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]!);

interface Violation {
  key: string;
  where: string;
  why: string;
}

function violations(): Violation[] {
  const found: Violation[] = [];
  for (const file of sourceFiles('src').map((path) => path.split('\\').join('/'))) {
    const layer = layerOf(file);
    const { imports, fetches } = scan(file);
    const allowed = MAY_IMPORT[layer];
    if (!allowed) {
      found.push({
        key: file,
        where: `${file}:1`,
        why: `is in "${layer}", a folder the layer rule does not know`,
      });
      continue;
    }
    for (const { line, specifier, typeOnly } of imports) {
      const where = `${file}:${line}`;
      if (specifier === '<computed>') {
        found.push({ key: `${file} → <computed>`, where, why: 'imports a computed specifier' });
        continue;
      }
      if (!specifier.startsWith('.')) {
        if (layer !== 'onchain') continue;
        const key = `${file} → ${specifier}`;
        if (isBuiltin(specifier)) {
          found.push({ key, where, why: `imports the builtin ${specifier}: onchain/ does no I/O` });
        } else if (!typeOnly && !ONCHAIN_PACKAGE_EXCEPTIONS.has(key)) {
          found.push({
            key,
            where,
            why: `imports the package ${specifier} at run time: onchain/ does no I/O`,
          });
        }
        continue;
      }
      const target = resolveRelative(file, specifier);
      const key = `${file} → ${target}`;
      if (!target.startsWith('src/')) {
        found.push({ key, where, why: `imports ${target}, outside src/` });
        continue;
      }
      const targetLayer = layerOf(target);
      if (targetLayer !== layer && !allowed.includes(targetLayer)) {
        found.push({ key, where, why: `${layer} imports ${targetLayer} (${target})` });
      } else if (
        layer === 'resources' &&
        ['flows', 'onchain'].includes(targetLayer) &&
        !RESOURCE_CLASSES.has(file)
      ) {
        found.push({ key, where, why: `${target} is used by the resource classes only, not ${file}` });
      } else if (layer === 'flows' && targetLayer === 'resources' && !ENDPOINT_TABLE.has(target)) {
        found.push({ key, where, why: `flows import the endpoint table only, not ${target}` });
      } else if (layer === 'cli' && targetLayer !== 'cli' && !PUBLIC_ENTRIES.has(target)) {
        found.push({ key, where, why: `cli imports ${target}, not a public entry` });
      }
    }
    if (layer === 'onchain') {
      for (const line of fetches) {
        found.push({
          key: `${file} → fetch`,
          where: `${file}:${line}`,
          why: 'uses the global fetch: onchain/ does no I/O',
        });
      }
    }
  }
  return found;
}

/** The import circles among `files` (every import, type-only ones too), each as the files along it. */
function circles(files: readonly string[]): string[][] {
  const edges = new Map(
    files.map((file) => [
      file,
      scan(file)
        .imports.filter(({ specifier }) => specifier.startsWith('.'))
        .map(({ specifier }) => resolveRelative(file, specifier)),
    ]),
  );
  const found: string[][] = [];
  const done = new Set<string>();
  const walk = (file: string, path: string[]): void => {
    const at = path.indexOf(file);
    if (at >= 0) {
      found.push([...path.slice(at), file]);
      return;
    }
    if (done.has(file) || !edges.has(file)) return;
    for (const next of edges.get(file)!) walk(next, [...path, file]);
    done.add(file);
  };
  for (const file of files) walk(file, []);
  return found;
}

describe('architecture: the folders are the layers (ARCHITECTURE.md)', () => {
  const found = violations();

  it('no import runs against the layer rule', () => {
    expect(found.map((violation) => `${violation.where}: ${violation.why}`)).toEqual([]);
  });

  it('the scanner sees static, type-only, dynamic, re-export and type-level imports, and fetch', () => {
    const sample = [
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      "import { type C } from './c.js';",
      "export { d } from './d.js';",
      "type E = typeof import('./e.js');",
      "const f = await import('./f.js');",
      'const g = await fetch(url);',
      'const h = globalThis.fetch;',
      'const i = options.fetch;',
    ].join('\n');
    const { imports, fetches } = scan('src/sample.ts', sample);
    expect(imports.map(({ line, specifier, typeOnly }) => [line, specifier, typeOnly])).toEqual([
      [1, './a.js', false],
      [2, './b.js', true],
      [3, './c.js', true],
      [4, './d.js', false],
      [5, './e.js', true],
      [6, './f.js', false],
    ]);
    expect(fetches).toEqual([7, 8]);
  });

  it('inside callbacks/, redis/ and postgres/: no import circle, and nothing there imports the router', () => {
    const files = ['src/callbacks', 'src/redis', 'src/postgres'].flatMap((dir) =>
      sourceFiles(dir).map((path) => path.split('\\').join('/')),
    );
    expect(circles(files).map((circle) => circle.join(' → '))).toEqual([]);
    // The handler and the listeners are written against callbacks/outcomes.ts and events.ts; the
    // router is one CallbackDispatcher among possible others.
    const intoRouter = files.filter((file) =>
      scan(file).imports.some(
        ({ specifier }) => resolveRelative(file, specifier) === 'src/callbacks/router.ts',
      ),
    );
    expect(intoRouter).toEqual([]);
  });
});

/** Every file under `dir`, as a path from the repository's root. */
const filesUnder = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative('.', join(entry.parentPath, entry.name)).split('\\').join('/'));

describe('architecture: folders that say what they hold', () => {
  it('the resource classes are in resources/, execute in flows/execute/, verify and describe in their folders', () => {
    const src = filesUnder('src');
    const resourceClasses = src.filter((file) => /\bextends Resource\b/.test(readFileSync(file, 'utf8')));
    expect(resourceClasses.sort()).toEqual([...RESOURCE_CLASSES].sort());
    const prefixed = src.filter((file) =>
      /^src\/(flows\/(execute|requote|signing|consent)|onchain\/(verify|describe))[-.]/.test(file),
    );
    expect(prefixed).toEqual([]);
    expect(
      src.filter((file) => /^src\/testing\/[^/]+$/.test(file) && /\/(simulator|args)\.ts$/.test(file)),
    ).toEqual([]);
  });

  it('tests: Redis and Postgres under test/redis/ and test/postgres/, no name repeating its folder', () => {
    const tests = filesUnder('test').filter((file) => /\.test(-d)?\.ts$/.test(file));
    const misplaced = tests.filter(
      (file) => /redis|postgres/i.test(file.split('/').pop()!) && !/^test\/(redis|postgres)\//.test(file),
    );
    expect(misplaced).toEqual([]);
    const repeating = tests.filter((file) => {
      const parts = file.split('/');
      if (parts.length < 3) return false;
      const folder = parts[parts.length - 2]!.replace(/s$/, '');
      const name = parts[parts.length - 1]!.replace(/\.test(-d)?\.ts$/, '');
      // The folder's main suite (test/cli/cli.test.ts) is named for it, and that is fine.
      return name !== folder && name !== `${folder}s` && new RegExp(`^${folder}s?-`).test(name);
    });
    expect(repeating).toEqual([]);
  });
});

describe('architecture: no circle and files of one sitting', () => {
  it('no import circle anywhere in src/ (type-only imports included)', () => {
    const files = sourceFiles('src').map((path) => path.split('\\').join('/'));
    expect(circles(files).map((circle) => circle.join(' → '))).toEqual([]);
  });

  it('no hand-written src file over 450 lines and no function over 100 (scripts/check-size.mjs)', () => {
    const run = spawnSync(process.execPath, ['scripts/check-size.mjs', 'src'], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toContain('within the size limits');
    expect(run.status).toBe(0);
  });
});

/** viem's ways to talk to a node: clients and transports. */
const VIEM_IO = new Set([
  'createClient',
  'createPublicClient',
  'createWalletClient',
  'createTestClient',
  'http',
  'webSocket',
  'fallback',
  'custom',
]);

describe("architecture: a chain's I/O only in testing/ (the simulator's chain mode)", () => {
  it("no file outside src/testing/ imports viem's clients or transports", () => {
    const found: string[] = [];
    for (const file of sourceFiles('src').map((path) => path.split('\\').join('/'))) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      for (const statement of source.statements) {
        if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
        if (!statement.moduleSpecifier.text.startsWith('viem')) continue;
        const bindings = statement.importClause?.namedBindings;
        if (!bindings || !ts.isNamedImports(bindings) || statement.importClause?.isTypeOnly) continue;
        for (const element of bindings.elements) {
          const name = (element.propertyName ?? element.name).text;
          if (!element.isTypeOnly && VIEM_IO.has(name)) found.push(`${file} imports ${name}`);
        }
      }
    }
    const outside = found.filter((entry) => !entry.startsWith('src/testing/'));
    expect(outside).toEqual([]);
    // The scan sees the one place that does import them.
    expect(found).toContain('src/testing/simulator/chain.ts imports createPublicClient');
  });
});

describe('architecture: each idea said once', () => {
  it('the transfer states are spelled out in at most two src files (the state table and the simulator)', () => {
    const states = [...TRANSFER_STATES];
    // A table keyed by a few phases is configuration; a file naming six or more states restates the list.
    const spelled = sourceFiles('src')
      .map((path) => path.split('\\').join('/'))
      .filter((file) => {
        const text = readFileSync(file, 'utf8');
        return states.filter((state) => text.includes(`'${state}'`)).length >= 6;
      });
    expect(spelled.length).toBeLessThanOrEqual(2);
    expect(spelled).toContain('src/schemas/states.ts');
  });

  it('each option set is filled from DEFAULTS once: at most five inline `?? DEFAULTS` left in src', () => {
    const inline = sourceFiles('src').flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.includes('?? DEFAULTS'))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(inline.length, inline.join('\n')).toBeLessThanOrEqual(5);
  });

  it("a partner's function is called isolated in one place: core/isolate.ts holds the only emitter", () => {
    // The router's, the tracker's and the client's listeners are thin policies over PartnerListeners.
    const holders = sourceFiles('src')
      .map((path) => path.split('\\').join('/'))
      .filter((file) => /new EventEmitter\b/.test(readFileSync(file, 'utf8')));
    expect(holders).toEqual(['src/core/isolate.ts']);
  });
});

describe('architecture: one short data path (http/, auth/, resources/, core/)', () => {
  const DATA_PATH = ['src/http', 'src/auth', 'src/resources', 'src/core'];
  const files = DATA_PATH.flatMap((folder) => sourceFiles(folder));

  it('http/ and auth/ together stay under 2,000 lines', () => {
    const lines = sourceFiles('src/http')
      .concat(sourceFiles('src/auth'))
      .reduce((sum, file) => sum + readFileSync(file, 'utf8').split('\n').length - 1, 0);
    expect(lines).toBeLessThan(2000);
  });

  it('no function, method or constructor there takes more than 4 positional parameters', () => {
    const wide: string[] = [];
    for (const file of files) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node) => {
        if (ts.isFunctionLike(node) && node.parameters.length > 4) {
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
          wide.push(`${file}:${line}: ${node.parameters.length} parameters`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(wide).toEqual([]);
  });

  it('a call is one object: the per-attempt objects and the interfaces restating Transport are gone', () => {
    const gone =
      /\b(Attempt|AttemptErrors|CallTransport|AttemptOwner|RequestHook|CallHook|CallContext|withRetries)\b/;
    const left = sourceFiles('src').filter((file) => gone.test(readFileSync(file, 'utf8')));
    expect(left).toEqual([]);
  });
});
