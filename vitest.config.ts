import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/sequencer.js';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export default defineConfig({
  // The sources read the version as the build writes it in (tsup.config.ts), so tests see the real one.
  define: { __SDK_VERSION__: JSON.stringify(version) },
  test: {
    // Starts the servers and bundles files share, once, when the first file asks (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // Forks, not threads: files start servers and child processes. Files share their worker's
    // process and module graph (not one fork per file): importing the sources, viem and zod again
    // for each file was a third of the suite's CPU. test/setup.ts puts back what a test changes
    // process-wide and fails a file that leaves a process handler behind.
    pool: 'forks',
    isolate: false,
    setupFiles: ['test/setup.ts'],
    unstubEnvs: true,
    unstubGlobals: true,
    // Files in parallel. Much of a file's time is spent waiting (on servers, child processes, the
    // simulator's timers), so three at once keeps the 2 cores of a small CI runner busy; the default
    // (cores - 1) ran one file at a time on such a machine.
    maxWorkers: 3,
    // The long files first, so that none starts last and runs alone (test/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    testTimeout: 20_000,
  },
});
