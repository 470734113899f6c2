import { describe, expect, it } from 'vitest';
import {
  API_PREFIX,
  DEFAULT_DELEGATES,
  DEFAULT_ENTRY_POINTS,
  DEFAULTS,
  ENTRY_POINT_V07,
  ENTRY_POINT_V08,
  MAV2_7702_DELEGATE_V100,
  MAV2_7702_DELEGATE_V110,
} from '../src/index.js';
import { issuesOf, validConstruct } from './helpers/batches.js';

describe('DEFAULTS', () => {
  it('holds the documented defaults and cannot be changed, at any depth', () => {
    expect(DEFAULTS).toEqual({
      timeoutMs: 30_000,
      maxRetries: 2,
      retry: { minDelayMs: 500, maxDelayMs: 8_000, maxRetryTimeMs: 60_000, maxRetryAfterMs: 60_000 },
      maxResponseBytes: 16 * 1024 * 1024,
      clientAuth: 'body',
      confirm: { pageBlocks: 1_000, lookBackBlocks: 10_000, blockReadTimeoutMs: 2_000 },
      allowInsecureHttp: false,
      strict: false,
      dangerouslyAllowBrowser: false,
      logLevel: 'off',
      tracing: true,
      wait: {
        phaseTimeoutsMs: { sourceConfirmation: 600_000, delivery: 600_000, refund: 21_600_000 },
        pollIntervalMs: 2_000,
        maxPollIntervalMs: 15_000,
        withRouter: { pollIntervalMs: 15_000, maxPollIntervalMs: 60_000 },
      },
      callbacks: {
        listenerTimeoutMs: 10_000,
        bodyTimeoutMs: 10_000,
        maxBodyBytes: 1024 * 1024,
        claimTtlFactor: 3,
        storeCapacity: 50_000,
        acknowledgeListenerErrors: false,
        strict: false,
        webhookToleranceSec: 300,
        webhookIdCapacity: 50_000,
      },
      redis: {
        tokenPrefix: 'partner-s2s:token:',
        callbackPrefix: 'partner-s2s:callback:',
        callbackTtlSeconds: 7 * 86_400,
        trackerPrefix: 'partner-s2s:tracker:',
        trackerTimeoutMs: 5_000,
      },
      postgres: { schema: 'partner_s2s', timeoutMs: 10_000 },
      tracker: {
        schedule: { pending: 30_000, submitted: 5_000, source_confirmed: 10_000, refund_pending: 300_000 },
        growthFactor: 1.5,
        capFactor: 12,
        afterExpiryMs: 5_000,
        withRouterFactor: 4,
        deadlines: { sourceConfirmation: 600_000, delivery: 600_000, refund: 21_600_000 },
        leaseMs: 30_000,
        listenerShare: 1 / 3,
        readShare: 0.5,
        readRetries: 2,
        batchSize: 50,
        maxReadsPerSecond: 10,
        discover: { everyMs: 600_000, horizonMs: 86_400_000, pageSize: 100 },
        tickMs: 1_000,
        retentionMs: 7 * 86_400_000,
        list: { limit: 100, maxLimit: 1_000 },
      },
      verifier: {
        expiryMarginMs: 15_000,
        entryPoints: [ENTRY_POINT_V07, ENTRY_POINT_V08],
        delegates: [MAV2_7702_DELEGATE_V100, MAV2_7702_DELEGATE_V110],
        requirePaymaster: true,
        allowIntegratorSuffix: true,
      },
      requote: {
        maxAttempts: 2,
        maxOutputDropBps: 50,
        maxFeeIncreaseBps: 20,
        consentTimeoutMs: 60_000,
        backoffMs: 1_000,
      },
      signing: { submitMarginMs: 5_000, learnedPercentile: 95, learnedMinSamples: 3 },
      describe: { locale: 'en-US', timeZone: 'UTC', maxFractionDigits: 18, highFeeBps: 100 },
    });
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.retry)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.wait)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.wait.phaseTimeoutsMs)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.wait.withRouter)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.callbacks)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.tracker.schedule)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.tracker.discover)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.redis)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.postgres)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.verifier)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.verifier.entryPoints)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.verifier.delegates)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.requote)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.signing)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.describe)).toBe(true);
    expect(() => {
      (DEFAULTS as { timeoutMs: number }).timeoutMs = 1;
    }).toThrow(TypeError);
  });

  it('are what verifyBridgeBatch applies when no option is given', () => {
    expect(DEFAULT_ENTRY_POINTS).toBe(DEFAULTS.verifier.entryPoints);
    expect(DEFAULT_DELEGATES).toBe(DEFAULTS.verifier.delegates);
    const construct = validConstruct();
    const expiresAt = Date.parse(construct.quote.expiresAt);
    const margin = DEFAULTS.verifier.expiryMarginMs;
    expect(issuesOf(construct, { now: expiresAt - margin - 1 })).toEqual([]);
    expect(issuesOf(construct, { now: expiresAt - margin })).toEqual(['quote.expiry']);
    expect(issuesOf(construct, { options: { entryPoints: [] } })).toContain('entryPoint.allowed');
    expect(issuesOf(construct, { options: { ...DEFAULTS.verifier } })).toEqual([]);
  });
});

describe('API_PREFIX', () => {
  it('is the path every request of the client and every route of the simulator lives under', async () => {
    const { createPartnerSimulator } = await import('../src/testing/index.js');
    const { PartnerClient } = await import('../src/index.js');
    const sim = createPartnerSimulator();
    const seen: string[] = [];
    const client = new PartnerClient({
      baseUrl: 'http://simulator.localhost',
      ...sim.demo.credentials,
      fetch: (url, init) => {
        seen.push(new URL(url).pathname);
        return sim.fetch(url, init);
      },
    });
    await client.me();
    expect(API_PREFIX).toBe('/api/v1/s2s');
    expect(seen.length).toBeGreaterThan(0);
    for (const path of seen) expect(path.startsWith(`${API_PREFIX}/`)).toBe(true);
  });
});
