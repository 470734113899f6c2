import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { skipOrFail } from './helpers/shared.js';
import { checkConsumer } from './helpers/type-check.js';

/**
 * The built declarations as a partner's project compiles them: imported by the package's name,
 * through its `exports` (ESM and CommonJS), from a project of its own.
 */

const BUILT = [
  'dist/index.d.ts',
  'dist/testing/index.d.ts',
  'dist/redis/index.d.ts',
  'dist/index.d.cts',
  'dist/openapi.json',
  'dist/stores/index.d.ts',
];
const built = BUILT.every((file) => existsSync(file));
const NOT_BUILT = `consumer type tests skipped: looked for ${BUILT.filter((file) => !existsSync(file)).join(', ')} in ${process.cwd()} and found none of them (run npm run build first)`;
skipOrFail(built, NOT_BUILT);

/** A strict server project: Node's types and no DOM, every optional property exact. */
const SERVER_PROJECT = {
  target: 'ES2022',
  lib: ['ES2022'],
  types: ['node'],
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  exactOptionalPropertyTypes: true,
  noEmit: true,
};

const ESM_CONSUMER = `
import { PartnerClient, createCallbackRouter, signBridgeBatch, type BridgeSigner, type BridgeTransfer } from 'partner-s2s-sdk';
import { createPartnerSimulator } from 'partner-s2s-sdk/testing';
import { createRedisCallbackStore, type RedisClientLike } from 'partner-s2s-sdk/redis';
import { compareClaim, newTrackerRecord, type TrackerLease } from 'partner-s2s-sdk/stores';

declare const redis: RedisClientLike;
// A store of the partner's own, written with the parts its entry holds.
export const record = newTrackerRecord({ userId: 'u', transferId: 't', source: 'track', now: Date.now() });
export const verdict: 'new' | 'duplicate' | 'stale' = compareClaim(undefined, { status: 'submitted', rank: 1 });
export const fenceOf = (lease: TrackerLease): number => lease.fence;
const sim = createPartnerSimulator();
const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
const router = createCallbackRouter({ authenticate: 'none', store: createRedisCallbackStore({ client: redis }) });
router.on('bridge_transfer_delivered', (transfer: BridgeTransfer) => console.log(transfer.transferId));
const signer: BridgeSigner = {
  address: sim.demo.wallet.address,
  signMessage: async () => '0x',
  signAuthorization: async () => ({ r: '0x01', s: '0x02', yParity: 1 }),
};
export const routes = client.bridge.routes();
export { signBridgeBatch, signer };
`;

const CJS_CONSUMER = `
import sdk = require('partner-s2s-sdk');
import testing = require('partner-s2s-sdk/testing');
import redis = require('partner-s2s-sdk/redis');
import stores = require('partner-s2s-sdk/stores');
export const names = [
  sdk.PartnerClient.name,
  testing.createPartnerSimulator.name,
  redis.createRedisTokenStore.name,
  stores.compareClaim.name,
];
`;

describe.runIf(built)('the built declarations in a partner project', () => {
  it('compile with skipLibCheck false and no DOM lib, and reach no viem or ox declaration', () => {
    const { errors, files } = checkConsumer(
      { 'esm.mts': ESM_CONSUMER, 'cjs.cts': CJS_CONSUMER },
      { ...SERVER_PROJECT, skipLibCheck: false },
    );
    expect(errors).toEqual([]);
    expect(files.filter((file) => /\/node_modules\/(viem|ox|abitype)\//.test(file))).toEqual([]);
  }, 120_000);

  it('import the OpenAPI document as JSON, ESM and CommonJS, typed as what it holds', () => {
    const { errors } = checkConsumer(
      {
        'openapi.mts': `
import doc from 'partner-s2s-sdk/openapi.json' with { type: 'json' };
export const version: string = doc.openapi;
export const paths: string[] = Object.keys(doc.paths);
`,
        'openapi.cts': `
import doc = require('partner-s2s-sdk/openapi.json');
export const version: string = doc.info.version;
`,
      },
      { ...SERVER_PROJECT, resolveJsonModule: true, skipLibCheck: false },
    );
    expect(errors).toEqual([]);
  }, 120_000);

  it('take a viem LocalAccount as a BridgeSigner under exactOptionalPropertyTypes', () => {
    // viem's own declarations need the DOM lib or skipLibCheck: a project using viem has one of them.
    const { errors } = checkConsumer(
      {
        'signer.mts': `
import { signBridgeBatch, type BridgeSigner, type VerifiedBridgeBatch } from 'partner-s2s-sdk';
import type { LocalAccount } from 'viem';
import { privateKeyToAccount, toAccount } from 'viem/accounts';

declare const verified: VerifiedBridgeBatch;
declare const kms: { sign(digest: \`0x\${string}\`): Promise<\`0x\${string}\`> };

const local: BridgeSigner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
// What toAccount returns for a KMS: a LocalAccount whose optional methods may be undefined.
const kmsAccount: LocalAccount = toAccount({
  address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  signMessage: async () => kms.sign('0x00'),
  signTransaction: async () => kms.sign('0x00'),
  signTypedData: async () => kms.sign('0x00'),
});
const fromKms: BridgeSigner = kmsAccount;
await signBridgeBatch({ verified, signer: local });
await signBridgeBatch({ verified, signer: kmsAccount });
export { fromKms };
`,
      },
      { ...SERVER_PROJECT, skipLibCheck: true },
      ['viem'],
    );
    expect(errors).toEqual([]);
  }, 120_000);
});
