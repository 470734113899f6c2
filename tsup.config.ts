import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

/**
 * The runtime packages p-retry, eventemitter3 and viem are `dependencies` and stay external:
 * `npm ls` and `npm audit` see them, and a partner who already has one shares its copy. tsup
 * keeps external what `dependencies` and `peerDependencies` list and bundles anything else a
 * source file imports, so a package that ends up bundled is found in esbuild's metafiles, given
 * its licence notice here, and named by `npm run check:package`.
 *
 * zod is a devDependency, so it is bundled: zod 4.6 imports its 64 locale modules from every entry
 * point, which cost the SDK's import more than all of its own code (bench/README, "Cold import").
 * The sources import it as a namespace (`import * as z`), which lets esbuild keep only what they
 * use (zod marks itself free of side effects), English messages included, locales left out.
 */
const metafiles = ['dist/metafile-esm.json', 'dist/metafile-cjs.json'];

/** The packages whose code esbuild put into the build, from the inputs of its metafiles. */
function bundledPackages(): string[] {
  const names = new Set<string>();
  for (const file of metafiles) {
    const { inputs } = JSON.parse(readFileSync(file, 'utf8')) as { inputs: Record<string, unknown> };
    for (const input of Object.keys(inputs)) {
      const at = input.lastIndexOf('node_modules/');
      if (at < 0) continue;
      const [scope = '', name = ''] = input.slice(at + 'node_modules/'.length).split('/');
      names.add(scope.startsWith('@') ? `${scope}/${name}` : scope);
    }
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

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

export default defineConfig({
  // The User-Agent names the release: package.json's version, written in at build time.
  define: { __SDK_VERSION__: JSON.stringify(version) },
  // The CLI is an entry of its own so that it shares chunks with the SDK it runs (one copy of the code).
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'redis/index': 'src/redis/index.ts',
    'cli/bin': 'src/cli/bin.ts',
  },
  format: ['esm', 'cjs'],
  target: 'node22',
  platform: 'node',
  dts: { compilerOptions: { ignoreDeprecations: '6.0' } },
  // No source maps: they were 40% of the package, and pointed at sources it does not ship. The
  // build is not minified, and a chunk made of several source files marks where each begins.
  sourcemap: false,
  clean: true,
  splitting: true,
  treeshake: true,
  metafile: true,
  // The CommonJS build has no import.meta; core/emitter.ts needs only a file to require from.
  esbuildOptions(options, { format }) {
    if (format === 'cjs') options.define = { ...options.define, 'import.meta.url': '__filename' };
  },
  async onSuccess() {
    const notices = bundledPackages().map((name) => {
      const { version } = JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as {
        version: string;
      };
      return `## ${name}@${version}\n\n${licenseOf(name)}\n`;
    });
    const file = 'dist/THIRD_PARTY_LICENSES.md';
    if (notices.length > 0) writeFileSync(file, `# Bundled third-party code\n\n${notices.join('\n')}`);
    else rmSync(file, { force: true });
  },
});
