import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export default defineConfig({
  // The sources read the version as the build writes it in (tsup.config.ts), so tests see the real one.
  define: { __SDK_VERSION__: JSON.stringify(version) },
  test: {
    // Starts the servers and bundles files share, once, when the first file asks (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // Forks: files start servers and children and set process-wide handlers; each in its own process.
    pool: 'forks',
    // Files in parallel. Much of a file's time is spent waiting (on servers, child processes, the
    // simulator's timers), so three at once keeps the 2 cores of a small CI runner busy; the default
    // (cores - 1) ran one file at a time on such a machine.
    maxWorkers: 3,
    testTimeout: 20_000,
  },
});
