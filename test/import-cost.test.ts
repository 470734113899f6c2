import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { NOW, USER, validConstruct } from './helpers/batches.js';
import { route } from './helpers/fixtures.js';

/**
 * Imports a module in a fresh Node process with a resolve hook that records every bare package
 * specifier, so the test sees what an import really pulls in.
 */
function packagesLoadedBy(script: string): string[] {
  const hook = `
    export async function resolve(specifier, context, next) {
      if (!specifier.startsWith('.') && !specifier.startsWith('/') && !specifier.startsWith('node:') && !specifier.startsWith('file:')) {
        process.stderr.write('PKG ' + specifier + '\\n');
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
  return [
    ...new Set(
      result.stderr
        .split('\n')
        .filter((line) => line.startsWith('PKG '))
        .map((line) => line.slice(4)),
    ),
  ];
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
      sdk.createCallbackRouter();
      sdk.parseBridgeCallback('{"kind":"portfolio"}');
    `);
    expect(loaded.filter((name) => name.startsWith('viem'))).toEqual([]);
  });

  it('signing loads viem on first use', () => {
    const loaded = packagesLoadedBy(`
      const sdk = await import('./src/index.ts');
      await sdk.signBridgeBatch({ bundle: { userOpHash: '0x' + '11'.repeat(32), authorization: null }, signer: { address: '0x' + '11'.repeat(20), signMessage: async () => '0x' } }).catch(() => {});
    `);
    expect(loaded.some((name) => name.startsWith('viem'))).toBe(true);
  });
});
