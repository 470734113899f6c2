import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/index.js';

describe('DEFAULTS', () => {
  it('holds the documented defaults and cannot be changed, at any depth', () => {
    expect(DEFAULTS).toEqual({
      timeoutMs: 30_000,
      maxRetries: 2,
      retry: { minDelayMs: 500, maxDelayMs: 8_000, maxRetryTimeMs: 60_000, maxRetryAfterMs: 60_000 },
      maxResponseBytes: 16 * 1024 * 1024,
      clientAuth: 'body',
      allowInsecureHttp: false,
      strict: false,
      wait: { phaseTimeoutsMs: { sourceConfirmation: 600_000, delivery: 600_000, refund: 21_600_000 } },
      callbacks: {
        listenerTimeoutMs: 10_000,
        bodyTimeoutMs: 10_000,
        maxBodyBytes: 1024 * 1024,
        claimTtlFactor: 3,
        storeCapacity: 50_000,
        acknowledgeListenerErrors: false,
        strict: false,
      },
      redis: {
        tokenPrefix: 'partner-s2s:token:',
        callbackPrefix: 'partner-s2s:callback:',
        callbackTtlSeconds: 7 * 86_400,
      },
    });
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.retry)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.wait)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.wait.phaseTimeoutsMs)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.callbacks)).toBe(true);
    expect(Object.isFrozen(DEFAULTS.redis)).toBe(true);
    expect(() => {
      (DEFAULTS as { timeoutMs: number }).timeoutMs = 1;
    }).toThrow(TypeError);
  });
});
