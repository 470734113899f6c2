import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:quick`: the inner loop. Everything but the files that start real servers (Redis,
 * PostgreSQL, PgBouncer, anvil), run child processes or other runtimes, or run the TypeScript
 * compiler over the package; no run broker, so nothing is started. `npm test` runs them all.
 */
export const SLOW = [
  // Real servers (test/global-setup.ts, test/helpers/*-server.ts, test/helpers/chain.ts).
  'test/redis/**',
  'test/postgres/**',
  'test/callbacks/fleet.test.ts',
  'test/tracker/fleet-chaos.test.ts',
  'test/tracker/lease-fleet.test.ts',
  'test/tracker/store-outage.test.ts',
  'test/chain/**',
  // Child processes: the CLI, the package's imports in a fresh Node, the built package.
  'test/cli/{cli,simulate,simulate-chain,sign,openapi,package-output,confirm}.test.ts',
  'test/import-cost.test.ts',
  'test/exits.test.ts',
  'test/http/tracing.test.ts',
  // The TypeScript compiler over the README's blocks, the sources or the built declarations.
  'test/docs.test.ts',
  'test/consumer-types.test.ts',
  'test/openapi.test.ts',
  'test/architecture.test.ts',
];

// Spread, not mergeConfig: mergeConfig concatenates arrays, and the base's globalSetup must go.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    globalSetup: [],
    exclude: [...configDefaults.exclude, ...SLOW],
  },
});
