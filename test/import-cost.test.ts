import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { route } from '../fixtures/wire.js';
import { NOW, USER, validConstruct } from './helpers/batches.js';

/**
 * Imports a module in a fresh Node process with a resolve hook that records every bare package
 * specifier, so the test sees what an import really pulls in.
 */
function packagesLoadedBy(script: string): string[] {
  // Hooks run on their own thread on newer Node lines, where stderr may not be flushed before the
  // process exits: every specifier is appended to a file, synchronously, instead.
  const log = join(mkdtempSync(join(tmpdir(), 'import-cost-')), 'packages.log');
  const hook = `
    import { appendFileSync } from 'node:fs';
    export async function resolve(specifier, context, next) {
      if (!specifier.startsWith('.') && !specifier.startsWith('/') && !specifier.startsWith('node:') && !specifier.startsWith('file:') && !specifier.startsWith('data:')) {
        appendFileSync(${JSON.stringify(log)}, specifier + '\\n');
      }
      return next(specifier, context);
    }`;
  const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));`;
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(register)}`,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
    ],
    { encoding: 'utf8', cwd: process.cwd() },
  );
  expect(result.status, result.stderr).toBe(0);
  const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  return [...new Set(lines)];
}

describe('import cost', () => {
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

  it('signing loads viem on first use', () => {
    const loaded = packagesLoadedBy(`
      const sdk = await import('./src/index.ts');
      await sdk.signBridgeBatch({ unverifiedBundle: { userOpHash: '0x' + '11'.repeat(32), authorization: null }, signer: { address: '0x' + '11'.repeat(20), signMessage: async () => '0x' } }).catch(() => {});
    `);
    expect(loaded.some((name) => name.startsWith('viem'))).toBe(true);
  });
});
