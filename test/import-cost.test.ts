import { describe, expect, it } from 'vitest';
import { route } from '../fixtures/wire.js';
import { NOW, USER, validConstruct } from './helpers/batches.js';
import { packageImports } from './helpers/package-imports.js';

/** The packages an import really pulls in, each once. */
function packagesLoadedBy(script: string): string[] {
  return [...new Set(packageImports(script).map(({ specifier }) => specifier))];
}

// Each test starts a fresh Node that transpiles src/ (tsx): seconds on a quiet machine, far more on a
// loaded CI runner, so the bound is the child's, not the suite's 20 s.
describe('import cost', { timeout: 120_000 }, () => {
  it('importing the main entry, reading routes, receiving callbacks and verifying never load viem', () => {
    // The batch is built here (with viem) and handed over as JSON, so only the SDK runs there.
    const batch = JSON.stringify({
      route: route(),
      construct: validConstruct(),
      wallet: USER,
      amount: '25.5',
      now: NOW,
    });
    const loaded = packagesLoadedBy(`
      const sdk = await import('./src/index.ts');
      const summary = await sdk.verifyBridgeBatch(${batch});
      if (summary.source.amount !== '25.5') throw new Error('not verified');
      const client = new sdk.PartnerClient({ baseUrl: 'https://p.test', clientId: 'c', clientSecret: 's', fetch: async () => new Response('{}') });
      sdk.createCallbackRouter({ authenticate: 'none' });
      sdk.parseBridgeCallback('{"kind":"portfolio"}');
    `);
    // The hook saw the SDK's own packages load, so an empty viem list means something.
    expect(loaded).toContain('zod');
    expect(loaded.filter((name) => name.startsWith('viem'))).toEqual([]);
  });

  it('neither the main entry nor the redis entry loads redis or ioredis', () => {
    const loaded = packagesLoadedBy(`
      const sdk = await import('./src/index.ts');
      const redis = await import('./src/redis/index.ts');
      const client = { call: async () => null };
      redis.createRedisTokenStore({ client });
      sdk.createCallbackRouter({ authenticate: 'none', store: redis.createRedisCallbackStore({ client }) });
    `);
    expect(loaded).toContain('zod');
    expect(
      loaded.filter((name) => name === 'redis' || name.startsWith('@redis/') || name === 'ioredis'),
    ).toEqual([]);
  });

  it('the postgres entry loads no driver: it runs on whatever query(text, values) it is given', () => {
    const loaded = packagesLoadedBy(`
      const sdk = await import('./src/index.ts');
      const postgres = await import('./src/postgres/index.ts');
      const pool = { query: async () => ({ rows: [] }) };
      postgres.createPostgresTokenStore({ pool });
      postgres.createPostgresTrackerStore({ pool });
      sdk.createCallbackRouter({ authenticate: 'none', store: postgres.createPostgresCallbackStore({ pool }) });
    `);
    expect(loaded).toContain('zod');
    expect(
      loaded.filter((name) => ['pg', 'pg-pool', 'postgres', '@electric-sql/pglite'].includes(name)),
    ).toEqual([]);
  });

  it('p-retry is loaded by the first retry, not by the import or a call that succeeds at once', () => {
    const script = (failFirst: boolean) => `
      const sdk = await import('./src/index.ts');
      const { createPartnerSimulator } = await import('./src/testing/index.ts');
      const sim = createPartnerSimulator();
      let failed = ${!failFirst};
      const fetch = async (url, init) => {
        if (!failed && String(url).endsWith('/bridge/routes')) {
          failed = true;
          return new Response('{}', { status: 503, headers: { 'retry-after': '0' } });
        }
        return sim.fetch(url, init);
      };
      const client = new sdk.PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch });
      const routes = await client.bridge.routes();
      if (routes.length === 0 || !failed) throw new Error('no routes');
    `;
    expect(packagesLoadedBy(script(false))).not.toContain('p-retry');
    expect(packagesLoadedBy(script(true))).toContain('p-retry');
  });

  it('signing loads viem on first use', () => {
    const loaded = packagesLoadedBy(`
      const sdk = await import('./src/index.ts');
      await sdk.signBridgeBatch({ unverifiedBundle: { userOpHash: '0x' + '11'.repeat(32), authorization: null }, signer: { address: '0x' + '11'.repeat(20), signMessage: async () => '0x' } }).catch(() => {});
    `);
    expect(loaded.some((name) => name.startsWith('viem'))).toBe(true);
  });
});
