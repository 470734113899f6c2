import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { defineConfig, type Options } from 'tsup';

/**
 * Every runtime package is a `dependency` that the ES module build imports from `node_modules`,
 * so `npm ls` and `npm audit` see it and a partner who has it shares its copy. The CommonJS build
 * inlines only the packages that ship no CommonJS (`CJS_INLINED`): a test runner with a CommonJS
 * loader of its own (Jest) cannot `require` an ES module, nor run an `import()` without a flag, so
 * that build has no `import()` either (the sucrase pass below turns each into a `require`).
 * `npm run check:package` holds the build to this.
 */
const CJS_INLINED = ['ky', 'p-retry'];

/** The packages esbuild put into the CommonJS build, from the inputs of its metafile. */
function bundledPackages(): string[] {
  const { inputs } = JSON.parse(readFileSync('dist/metafile-cjs.json', 'utf8')) as {
    inputs: Record<string, unknown>;
  };
  const names = new Set<string>();
  for (const input of Object.keys(inputs)) {
    const at = input.lastIndexOf('node_modules/');
    if (at < 0) continue;
    const [scope = '', name = ''] = input.slice(at + 'node_modules/'.length).split('/');
    names.add(scope.startsWith('@') ? `${scope}/${name}` : scope);
  }
  return [...names].sort();
}

function licenseOf(name: string): string {
  for (const file of ['LICENSE', 'license', 'LICENSE.md', 'license.md', 'LICENSE.txt']) {
    const path = `node_modules/${name}/${file}`;
    if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  }
  throw new Error(`no licence file for bundled package ${name}`);
}

/**
 * The CommonJS pass (sucrase) names its own input, the built file, by its absolute path in the
 * map: made relative, so that a map names no path of the machine that built it.
 */
function relativeMapSources(dir = 'dist'): void {
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    if (name.isDirectory()) relativeMapSources(path);
    else if (name.name.endsWith('.cjs.map')) {
      const map = JSON.parse(readFileSync(path, 'utf8')) as { sources: string[] };
      map.sources = map.sources.map((source) =>
        isAbsolute(source) ? relative(dirname(path), source) : source,
      );
      writeFileSync(path, JSON.stringify(map));
    }
  }
}

/** The licence notice of what the CommonJS build inlines, shipped beside it. */
function writeNotices(): void {
  const notices = bundledPackages().map((name) => {
    const { version } = JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as {
      version: string;
    };
    return `## ${name}@${version}\n\n${licenseOf(name)}\n`;
  });
  const file = 'dist/THIRD_PARTY_LICENSES.md';
  if (notices.length > 0)
    writeFileSync(
      file,
      `# Third-party code inlined in the CommonJS build (dist/**/*.cjs)\n\n${notices.join('\n')}`,
    );
  else rmSync(file, { force: true });
}

/**
 * The OpenAPI document, `partner-s2s-sdk/openapi.json`, written by the ES module build just made
 * (`openApiDocument()` of dist/index.js, in a process of its own): generated from the schemas the
 * package ships, it cannot drift from them.
 */
function writeOpenApi(): void {
  const script =
    "import { openApiDocument } from './dist/index.js'; process.stdout.write(JSON.stringify(openApiDocument(), null, 2) + '\\n');";
  const document = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  writeFileSync('dist/openapi.json', document);
}

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

// The three builds below run at once, so none of them may clean dist/ of the others' output.
rmSync('dist', { recursive: true, force: true });

const entry = {
  index: 'src/index.ts',
  'testing/index': 'src/testing/index.ts',
  'redis/index': 'src/redis/index.ts',
  'postgres/index': 'src/postgres/index.ts',
  'stores/index': 'src/stores/index.ts',
};

const shared: Options = {
  // The User-Agent names the release: package.json's version, written in at build time.
  define: { __SDK_VERSION__: JSON.stringify(version) },
  target: 'node22',
  platform: 'node',
  // Readable output with source maps, so that an uncaught error prints lines a partner can read
  // and `node --enable-source-maps` names the TypeScript source. The maps point at `src/` without
  // embedding it (embedding would take the tarball past its 1 MB budget in `check:package`).
  sourcemap: true,
  clean: false,
  splitting: true,
  metafile: true,
  dts: false,
  esbuildOptions(options) {
    options.sourcesContent = false;
  },
};

export default defineConfig([
  {
    ...shared,
    format: 'esm',
    // The CLI is an entry of its own so that it shares chunks with the SDK it runs (one copy of
    // the code); `bin` points at the ES module, so it has no CommonJS twin.
    entry: { ...entry, 'cli/bin': 'src/cli/bin.ts' },
    treeshake: true,
    onSuccess: async () => writeOpenApi(),
  },
  {
    ...shared,
    format: 'cjs',
    entry,
    noExternal: CJS_INLINED,
    // Without rollup's pass, tsup turns esbuild's split ES modules into CommonJS with sucrase,
    // which makes every `import()` a `require` (rollup would keep them).
    treeshake: false,
    onSuccess: async () => {
      writeNotices();
      relativeMapSources();
    },
  },
  {
    ...shared,
    format: ['esm', 'cjs'],
    entry,
    dts: { only: true, compilerOptions: { ignoreDeprecations: '6.0' } },
  },
]);
