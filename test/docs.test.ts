import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DOCUMENTS } from './helpers/documents.js';
import { codeBlocks } from './helpers/markdown.js';
import { checkSnippets } from './helpers/type-check.js';

const ENTRIES = [
  'src/index.ts',
  'src/testing/index.ts',
  'src/redis/index.ts',
  'src/postgres/index.ts',
  'src/stores/index.ts',
];

/** The interfaces a partner reads first: each shows how it is used. */
const MAIN_INTERFACES = [
  'PartnerClientOptions',
  'BridgeRoute',
  'BridgeQuote',
  'BridgeTransfer',
  'WaitOptions',
  'CallbackRouterOptions',
];

/** One program over every entry: they share the sources, so the compiler reads them once. */
let program: ts.Program | undefined;

/** Every export of an entry, with its doc comment and whether it shows an example. */
function exportsOf(entry: string) {
  program ??= ts.createProgram(ENTRIES, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry)!;
  const module = checker.getSymbolAtLocation(source)!;
  return checker.getExportsOfModule(module).map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declaration = symbol.declarations?.[0];
    const docs = ts.displayPartsToString(symbol.getDocumentationComment(checker));
    const tags = symbol.getJsDocTags(checker).map((tag) => tag.name);
    const isClass = !!declaration && ts.isClassDeclaration(declaration);
    const isError = isClass && /Error$/.test(exported.name);
    const callable = !!declaration && (ts.isFunctionDeclaration(declaration) || isClass) && !isError;
    return { name: exported.name, docs, hasExample: tags.includes('example'), callable, isError };
  });
}

const exportsByEntry = new Map<string, ReturnType<typeof exportsOf>>();
const exportsOfEntry = (entry: string) => {
  if (!exportsByEntry.has(entry)) exportsByEntry.set(entry, exportsOf(entry));
  return exportsByEntry.get(entry)!;
};

describe('public surface documentation', () => {
  for (const entry of ENTRIES) {
    it(`every export of ${entry} has a doc comment, and every function and class an example`, () => {
      const missing = exportsOfEntry(entry)
        .filter((item) => item.docs.trim() === '' || (item.callable && !item.hasExample))
        .map((item) => item.name);
      expect(missing).toEqual([]);
    }, 60_000);
  }

  it('every exported error class, and each main interface, has an example', () => {
    const all = ENTRIES.flatMap(exportsOfEntry);
    const errors = all.filter((item) => item.isError);
    expect(errors.length).toBeGreaterThan(30);
    const main = all.filter((item) => MAIN_INTERFACES.includes(item.name));
    expect(main.map((item) => item.name).sort()).toEqual([...MAIN_INTERFACES].sort());
    expect([...errors, ...main].filter((item) => !item.hasExample).map((item) => item.name)).toEqual([]);
  }, 60_000);
});

describe('the API reference', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
    name: string;
    exports: Record<string, string | { import?: { types?: string } }>;
  };
  // tsconfig.json may hold comments: TypeScript reads it.
  const tsconfig = ts.readConfigFile('tsconfig.json', ts.sys.readFile).config as {
    typedocOptions: {
      entryPoints: string[];
      out: string;
      projectDocuments: string[];
      treatWarningsAsErrors: boolean;
    };
  };
  /**
   * Each module the package exports, with the source of its declarations: not its JSON files
   * (package.json, the OpenAPI document), which have no API to document.
   */
  const subpaths = Object.entries(pkg.exports)
    .filter(([subpath]) => !subpath.endsWith('.json'))
    .map(([subpath, target]) => {
      const types = typeof target === 'string' ? target : target.import?.types;
      return {
        name: subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
        source: types?.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'),
      };
    });

  it('documents every subpath the package exports, under its import name', () => {
    expect(subpaths.map((subpath) => subpath.name)).toContain('partner-s2s-sdk/redis');
    expect([...tsconfig.typedocOptions.entryPoints].sort()).toEqual(
      subpaths.map((subpath) => subpath.source).sort(),
    );
    for (const { name, source } of subpaths) {
      expect(readFileSync(source!, 'utf8'), source).toContain(`@module ${name}\n`);
    }
  });

  it('holds the guides, fails on any warning, and is built where git and the package ignore it', () => {
    const { out, projectDocuments, treatWarningsAsErrors } = tsconfig.typedocOptions;
    expect(projectDocuments).toEqual(['docs/*.md']);
    expect(treatWarningsAsErrors).toBe(true);
    expect(readFileSync('.gitignore', 'utf8').split('\n')).toContain(`${out}/`);
    const { files } = JSON.parse(readFileSync('package.json', 'utf8')) as { files: string[] };
    expect(files.filter((pattern) => pattern.startsWith('docs'))).toEqual(['docs/*.md']);
    // .ci/run builds it once, after the first suite's build.
    expect(readFileSync('.ci/run', 'utf8')).toMatch(/^npm run docs$/m);
  });
});

/**
 * The names the snippets of the README and the guides take as given: the partner's own objects (a client, a user id, a
 * logger, a database), and the runtimes and frameworks a mounting line speaks to. Declared, not
 * implemented: the snippets are type-checked, not run.
 */
const README_CONTEXT = `
type Hex = \`0x\${string}\`;
declare const client: import('partner-s2s-sdk').PartnerClient;
declare const credentials: { baseUrl: string; clientId: string; clientSecret: string };
declare const baseUrl: string, clientId: string, clientSecret: string;
declare const userId: string, routeId: string, transferId: string, jobId: string, email: string;
declare const userKey: Hex;
declare const route: import('partner-s2s-sdk').BridgeRoute;
declare const built: import('partner-s2s-sdk').BridgeConstructResult;
declare const signer: import('viem').LocalAccount;
declare const params: import('partner-s2s-sdk').BridgeQuoteParams;
declare const otherAgent: import('undici').Dispatcher;
declare const provider: import('@opentelemetry/api').TracerProvider;
declare const redis: import('ioredis').Redis;
declare const router: import('partner-s2s-sdk').CallbackRouter;
declare const tracker: import('partner-s2s-sdk').TransferTracker;
declare const authenticate: (request: import('partner-s2s-sdk').CallbackRequest) => boolean;
declare const log: Record<'debug' | 'info' | 'warn' | 'error', (...values: unknown[]) => void>;
declare const metrics: { timing(name: string, ms: number): void; increment(name: string): void };
declare function credit(...values: unknown[]): Promise<void>;
declare function notifyRefund(transfer: import('partner-s2s-sdk').BridgeTransfer): Promise<void>;
declare const db: {
  transaction<T>(work: (tx: { query(sql: string, values: unknown[]): Promise<{ rowCount: number | null }> }) => Promise<T>): Promise<T>;
};
declare const kms: {
  signDigest(digest: Hex): Promise<Hex>;
  sign7702(authorization: { address: string; chainId: number; nonce: number }): Promise<{ r: Hex; s: Hex; yParity: number }>;
};
declare const http: typeof import('node:http');
declare const express: typeof import('express');
declare const fastify: import('fastify').FastifyInstance;
declare const serve: typeof import('@hono/node-server').serve;
// One name for an Express app and a Hono app: the lines checked are the router's side of each.
declare const app: { all(path: string, ...handlers: ((...args: any[]) => unknown)[]): unknown; fetch: (...args: any[]) => any };
declare const Bun: { serve(options: { port: number; fetch: (request: Request) => Promise<Response> }): unknown };
declare const Deno: { serve(options: { port: number }, handler: (request: Request) => Promise<Response>): unknown };
declare module '@opentelemetry/sdk-node' {
  export class NodeSDK { constructor(options: { traceExporter: unknown }); start(): void }
}
declare module '@opentelemetry/exporter-trace-otlp-http' {
  export class OTLPTraceExporter { constructor(options?: object) }
}
`;

const atLeast = (a: number[], b: number[]) =>
  a[0]! !== b[0]! ? a[0]! > b[0]! : a[1]! !== b[1]! ? a[1]! > b[1]! : a[2]! >= b[2]!;

/**
 * The lowest version a range admits, as [major, minor, patch]: `>=x.y.z` or `^x.y.z`, or the
 * lowest of several joined by `||` (`@noble/hashes` says `^14.21.3 || >=16`).
 */
function floor(range: string): number[] {
  const floors = range.split('||').map((part) => {
    const match = /^(?:>=|\^)\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(part.trim());
    if (!match) throw new Error(`not a >= or ^ range: ${range}`);
    return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
  });
  return floors.reduce((lowest, next) => (atLeast(next, lowest) ? lowest : next));
}

describe('the supported Node.js versions', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
    engines: { node: string };
    dependencies: Record<string, string>;
  };

  it("admit no version a runtime dependency's engines refuse", () => {
    const ours = floor(pkg.engines.node);
    for (const name of Object.keys(pkg.dependencies)) {
      const theirs = (
        JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as {
          engines?: { node?: string };
        }
      ).engines?.node;
      if (theirs) expect(atLeast(ours, floor(theirs)), `${name} requires Node ${theirs}`).toBe(true);
    }
  });
  // That the README and .ci/run state the same versions as `engines`: test/node-policy.test.ts.
});

describe('README and the guides', () => {
  it.each([
    ['without', false],
    ['with', true],
  ])(
    'every TypeScript block type-checks with Node types and %s the DOM lib',
    (_, dom) => {
      // A block without imports is a fragment: it sees every export of the package's entries.
      const exported = new Map<string, string>();
      for (const entry of ENTRIES) {
        for (const { name } of exportsOfEntry(entry)) if (!exported.has(name)) exported.set(name, entry);
      }
      const fragmentImports = ENTRIES.map((entry) => {
        const names = [...exported].filter(([, from]) => from === entry).map(([name]) => name);
        const specifier = entry.replace(/^src\/(.*?)\/?index\.ts$/, 'partner-s2s-sdk/$1').replace(/\/$/, '');
        return `import { ${names.join(', ')} } from '${specifier}';`;
      }).join(' ');

      const snippets: Record<string, string> = { 'readme-context.d.ts': README_CONTEXT };
      /** Where each snippet starts: its document and line. */
      const starts = new Map<string, { document: string; line: number }>();
      const perDocument = new Map<string, number>();
      for (const document of DOCUMENTS) {
        const blocks = codeBlocks(readFileSync(document, 'utf8'));
        perDocument.set(document, blocks.length);
        for (const { line, code, file } of blocks) {
          // A recipe of several files names each on its first line, so they can import one another.
          const name = file ?? `${document}-${line}.ts`;
          expect(starts.get(name), `${name} is named twice`).toBeUndefined();
          const fragment = !/^import /m.test(code);
          // The fragment's imports share its first line, so line numbers stay the document's.
          snippets[name] = `${fragment ? fragmentImports : ''}${code}\nexport {};\n`;
          starts.set(name, { document, line });
        }
      }
      // The quick start stays in the README; the guides hold the rest.
      expect(perDocument.get('README.md')).toBeGreaterThanOrEqual(3);
      expect([...perDocument.values()].reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(40);
      const errors = checkSnippets(snippets, { dom }).map((error) => {
        const [, name = '', at = '0', message] = /^(.*?):(\d+): ([\s\S]*)$/.exec(error) ?? [];
        const start = starts.get(name);
        return start ? `${start.document}:${start.line + Number(at) - 1} (${name}): ${message}` : error;
      });
      expect(errors).toEqual([]);
    },
    180_000,
  );
});
