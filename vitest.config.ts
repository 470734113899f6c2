import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export default defineConfig({
  // The sources read the version as the build writes it in (tsup.config.ts), so tests see the real one.
  define: { __SDK_VERSION__: JSON.stringify(version) },
});
