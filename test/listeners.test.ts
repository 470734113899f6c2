import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { route } from '../fixtures/wire.js';
import type { ClientEvents, Logger, PartnerClient, PartnerClientOptions } from '../src/index.js';
import { account, bridgeService } from './helpers/bridge-service.js';
import { envelopeError, json, type MockService, makeClient, SECRET } from './helpers/mock-fetch.js';

const SEND = 'POST /bridge/transaction/batch/send';

/** Every rejection nobody handled while a test ran. */
const unhandled: unknown[] = [];
const track = (reason: unknown) => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', track);
});
afterEach(() => {
  process.off('unhandledRejection', track);
});

/** Lets rejections nobody handles reach `unhandledRejection`. */
async function drain() {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A logger that records its lines by level. */
function recordingLogger() {
  const lines: { level: string; line: string }[] = [];
  const logger: Logger = {
    debug: (line) => void lines.push({ level: 'debug', line }),
    info: (line) => void lines.push({ level: 'info', line }),
    warn: (line) => void lines.push({ level: 'warn', line }),
    error: (line) => void lines.push({ level: 'error', line }),
  };
  return { logger, warnings: () => lines.filter((l) => l.level === 'warn').map((l) => l.line) };
}

const execute = (client: PartnerClient) =>
  client.bridge.execute({
    userId: 'user-1',
    routeId: 'base-usdc-to-bsc-usdc',
    amount: '25.5',
    signer: account,
  });

/** A bridge service whose first read of the routes is a 503, so that a retry happens. */
function serviceWithRetry(): MockService {
  let first = true;
  const service = bridgeService({
    'GET /bridge/routes': () => {
      if (first) {
        first = false;
        return envelopeError(503, 'BRIDGE_UNREACHABLE', 'down');
      }
      return json({ data: [route()] });
    },
  });
  return service;
}

type Failing = [string, () => unknown];
const failings: Failing[] = [
  [
    'throws',
    () => {
      throw new Error('listener bug');
    },
  ],
  ['rejects', async () => Promise.reject(new Error('async listener bug'))],
];

function client(service: MockService, options: Partial<PartnerClientOptions> = {}) {
  const log = recordingLogger();
  return { client: makeClient(service, { logger: log.logger, logLevel: 'warn', ...options }), ...log };
}

describe("what a partner's function throws or rejects with never changes an outcome", () => {
  describe.each(failings)('a listener that %s', (_, listener) => {
    it.each(['request', 'response', 'retry', 'token'] as const)(
      "on '%s': execute still returns the transfer, submits once, and the failure is a warning",
      async (event) => {
        const service = serviceWithRetry();
        const { client: partner, warnings } = client(service);
        partner.on(event, listener as ClientEvents[typeof event]);
        const result = await execute(partner);
        expect(result.transferId).toBe('tr_1');
        expect(service.count(SEND)).toBe(1);
        await drain();
        expect(unhandled).toEqual([]);
        expect(warnings().length).toBeGreaterThan(0);
        expect(warnings().every((line) => line.includes(`'${event}' listener`))).toBe(true);
      },
    );

    it("on the 'response' of a submit the service took: the submit's result stands, never a re-send", async () => {
      const service = bridgeService();
      const { client: partner } = client(service);
      partner.on('response', (event) => {
        if (event.path === '/bridge/transaction/batch/send') return (listener as () => unknown)();
      });
      const sent = await partner.bridge.send({
        userId: 'user-1',
        intentId: (
          await partner.bridge.construct({ userId: 'user-1', routeId: 'base-usdc-to-bsc-usdc', amount: '1' })
        ).intentId,
        signature: `0xff00${'11'.repeat(64)}1b`,
      });
      expect(sent.transferId).toBe('tr_1');
      expect(service.count(SEND)).toBe(1);
      await drain();
      expect(unhandled).toEqual([]);
    });

    it('as onProgress of execute: the outcome stands, and the failure is a warning', async () => {
      const service = bridgeService();
      const { client: partner, warnings } = client(service);
      const result = await partner.bridge.execute({
        userId: 'user-1',
        routeId: 'base-usdc-to-bsc-usdc',
        amount: '25.5',
        signer: account,
        onProgress: listener as () => void,
      });
      expect(result.transferId).toBe('tr_1');
      await drain();
      expect(unhandled).toEqual([]);
      expect(warnings()).toHaveLength(5);
      expect(warnings()[0]).toContain('onProgress');
    });

    it('as every method of the logger, with a listener failing too: calls go on, nothing loops', async () => {
      const service = serviceWithRetry();
      let calls = 0;
      const bad = () => {
        calls++;
        return (listener as () => unknown)();
      };
      const partner = makeClient(service, {
        logger: { debug: bad, info: bad, warn: bad, error: bad },
        logLevel: 'debug',
      });
      partner.on('response', listener as ClientEvents['response']);
      const result = await execute(partner);
      expect(result.transferId).toBe('tr_1');
      await drain();
      expect(unhandled).toEqual([]);
      // One line per attempt, token fetch and retry, and one warning per failed listener call:
      // a failing logger is not told of its own failure.
      expect(calls).toBeLessThan(40);
    });
  });

  it('the warning names the failure without the secret', async () => {
    const service = bridgeService();
    const { client: partner, warnings } = client(service);
    partner.on('request', () => {
      throw new Error(`leaked ${SECRET}`);
    });
    await partner.bridge.routes();
    expect(warnings()[0]).toContain('Error: leaked');
    expect(warnings().join('\n')).not.toContain(SECRET);
  });

  it('with logging off the failure is still isolated, and nothing is logged', async () => {
    const service = bridgeService();
    const { client: partner, warnings } = client(service, { logLevel: 'off' });
    partner.on('response', async () => {
      throw new Error('async listener bug');
    });
    await partner.bridge.routes();
    await drain();
    expect(unhandled).toEqual([]);
    expect(warnings()).toEqual([]);
  });

  it('on, once and off keep working on isolated listeners', async () => {
    const service = bridgeService();
    const { client: partner } = client(service);
    const seen: string[] = [];
    const always = (event: { path: string }) => void seen.push(`always ${event.path}`);
    const one = (event: { path: string }) => void seen.push(`once ${event.path}`);
    partner.on('request', always).once('request', one);
    await partner.bridge.routes();
    partner.off('request', always);
    await partner.bridge.routes();
    expect(seen).toEqual(['always /auth/token', 'once /auth/token', 'always /bridge/routes']);
  });
});
