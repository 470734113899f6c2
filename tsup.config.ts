import { readFileSync, writeFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

/**
 * zod, ky, p-retry and eventemitter3 are bundled: one file instead of a hundred makes the main entry
 * import in about half the time, and CommonJS users never `require()` an ESM-only package. viem
 * stays external and is loaded only when a batch is verified or signed.
 */
const bundled = ['zod', 'ky', 'p-retry', 'eventemitter3'];

function licenseOf(name: string): string {
  for (const file of ['LICENSE', 'license', 'LICENSE.md']) {
    try {
      return readFileSync(`node_modules/${name}/${file}`, 'utf8').trim();
    } catch {}
  }
  throw new Error(`no license file for bundled package ${name}`);
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
  // Types of bundled packages are inlined too: a consumer installs none of them.
  dts: { resolve: bundled, compilerOptions: { ignoreDeprecations: '6.0' } },
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
  noExternal: bundled,
  async onSuccess() {
    const notices = bundled.map((name) => {
      const { version } = JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as {
        version: string;
      };
      return `## ${name}@${version}\n\n${licenseOf(name)}\n`;
    });
    writeFileSync('dist/THIRD_PARTY_LICENSES.md', `# Bundled third-party code\n\n${notices.join('\n')}`);
  },
});
