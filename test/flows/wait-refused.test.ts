import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { createCallbackRouter, PartnerClient, TimeoutError } from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { closeCallbackServers, serveCallbacks } from '../helpers/callback-server.js';
import { countingFetch, leaping, useTestClock } from '../helpers/clock.js';
import { throwingLogger, warningsLogger } from '../helpers/loggers.js';
import { json, makeClient, mockService } from '../helpers/mock-fetch.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
  await closeCallbackServers();
});

/**
 * The simulator over HTTP, delivering its callbacks with `x-callback-token: <sent>` to a router on
 * 127.0.0.1 that expects `accepted.token`; a submitted transfer of its demo user; a client over HTTP.
 * On the test's clock: `settled` waits out the wait's naps of seconds in leaps (and in real time
 * while a read is on its way); each test waits for the deliveries it needs before it leaps.
 */
async function refusedSetup() {
  useTestClock();
  const accepted = { token: 'rotated-secret' };
  const router = createCallbackRouter({
    authenticate: (request) => request.headers.get('x-callback-token') === accepted.token,
  });
  const refusals: number[] = [];
  router.on('rejected', () => void refusals.push(Date.now()));
  const callbacks = await serveCallbacks(router.nodeHandler);
  const sim: PartnerSimulator = createPartnerSimulator({
    callbacks,
    callbackHeaders: { 'x-callback-token': 'old-secret' },
  });
  cleanup.push(() => sim.close());
  const server = await sim.listen();
  cleanup.push(() => server.close());
  const { fetch, busy } = countingFetch();
  const client = new PartnerClient({ baseUrl: server.url, ...sim.demo.credentials, fetch });
  const settled = <T>(work: Promise<T>) => leaping(work, busy);
  const { transferId } = await client.bridge.execute({
    userId: sim.demo.userId,
    routeId: 'base-usdc-to-bsc-usdc',
    amount: '3',
    signer: privateKeyToAccount(sim.demo.wallet.privateKey),
  });
  const ids = { userId: sim.demo.userId, transferId };
  const reads = () => sim.requests.filter((r) => r.path === `/bridge/transfers/${transferId}`).length;
  return { accepted, router, refusals, sim, client, ids, transferId, reads, settled };
}

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('a refused callback is not a slow transfer', () => {
  it('with every delivery refused, the wait polls at its no-router cadence and sees the transfer delivered', async () => {
    const { router, refusals, sim, client, ids, transferId, reads, settled } = await refusedSetup();
    const waiting = client.bridge.transfers.wait(ids, { router, totalTimeoutMs: 10_000 });
    await until(() => reads() >= 1);
    sim.advance(transferId, 'source_confirmed');
    sim.advance(transferId, 'delivered');
    await until(() => refusals.length >= 2);
    // The router's cadence (a first nap of 15 s) would outlast the 10 s bound.
    expect(await settled(waiting)).toMatchObject({ status: 'delivered' });
  });

  it('a router that accepted deliveries and then refuses one goes back to that cadence', async () => {
    const { accepted, router, refusals, sim, client, ids, transferId, reads, settled } = await refusedSetup();
    accepted.token = 'old-secret';
    const dispatched: string[] = [];
    router.on('transfer', (t) => void dispatched.push(t.status));
    const waiting = client.bridge.transfers.wait(ids, { router, totalTimeoutMs: 10_000 });
    await until(() => reads() >= 1);
    sim.advance(transferId, 'source_confirmed');
    // Taken: from now on callbacks are trusted to wake the wait, and it naps 15 s between reads,
    // past its 10 s bound.
    await until(() => dispatched.includes('source_confirmed'));
    accepted.token = 'rotated-again';
    sim.advance(transferId, 'delivered');
    await until(() => refusals.length >= 1);
    expect(await settled(waiting)).toMatchObject({ status: 'delivered' });
  });

  it('a TimeoutError names how many deliveries the router refused during the wait', async () => {
    const { router, refusals, sim, client, ids, transferId, reads, settled } = await refusedSetup();
    const before = refusals.length;
    const waiting = client.bridge.transfers.wait(ids, { router, totalTimeoutMs: 3_000 }).then(
      (): TimeoutError => expect.unreachable('the wait resolved'),
      (error: unknown) => error as TimeoutError,
    );
    await until(() => reads() >= 1);
    sim.advance(transferId, 'source_confirmed');
    // Each delivery reaches the router before the clock leaps on.
    await until(() => refusals.length > before);
    const error = await settled(waiting);
    expect(error).toBeInstanceOf(TimeoutError);
    const during = refusals.length - before;
    expect(during).toBeGreaterThanOrEqual(1);
    expect(error.refusedDeliveries).toBeGreaterThanOrEqual(1);
    expect(error.refusedDeliveries).toBeLessThanOrEqual(during);
    expect(error.message).toMatch(/callback router refused \d+ deliver/);
    expect(error.message).toMatch(/authenticate/);
    // Polled while refused: more than the one read the router's cadence allows in 3 s.
    expect(reads()).toBeGreaterThan(1);
  });

  it('a wait with a router that refused nothing, or with none, names no refusals', async () => {
    const service = mockService({
      routes: { 'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'submitted' }) }) },
    });
    const router = createCallbackRouter({ authenticate: 'none' });
    for (const options of [{ router }, {}]) {
      const error = await makeClient(service)
        .bridge.transfers.wait(
          { userId: 'user-1', transferId: 'tr_1' },
          { ...options, totalTimeoutMs: 30, pollIntervalMs: 5 },
        )
        .then(
          (): TimeoutError => expect.unreachable('the wait resolved'),
          (e: unknown) => e as TimeoutError,
        );
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error.message).not.toMatch(/refused/);
      expect(error.refusedDeliveries).toBe(options.router ? 0 : undefined);
    }
  });
});

describe('the deprecated timeoutMs of wait', () => {
  const service = mockService({
    routes: { 'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'delivered' }) }) },
  });
  const ids = { userId: 'user-1', transferId: 'tr_1' };

  it('warns once per client through logger.warn', async () => {
    const { logger, lines } = warningsLogger();
    const client = makeClient(service, { logger, logLevel: 'warn' });
    await client.bridge.transfers.wait(ids, { timeoutMs: 1_000 });
    await client.bridge.transfers.wait(ids, { timeoutMs: 1_000 });
    await client.bridge.transfers.wait(ids, { totalTimeoutMs: 1_000 });
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(/timeoutMs.*deprecated.*totalTimeoutMs/);
    const other = makeClient(service, { logger, logLevel: 'warn' });
    await other.bridge.transfers.wait(ids, { timeoutMs: 1_000 });
    expect(lines()).toHaveLength(2);
  });

  it('stays silent when the log level holds warnings back, and without timeoutMs', async () => {
    const { logger, warnings } = warningsLogger();
    await makeClient(service, { logger, logLevel: 'error' }).bridge.transfers.wait(ids, { timeoutMs: 1_000 });
    await makeClient(service, { logger, logLevel: 'off' }).bridge.transfers.wait(ids, { timeoutMs: 1_000 });
    await makeClient(service, { logger, logLevel: 'debug' }).bridge.transfers.wait(ids);
    expect(warnings).toEqual([]);
  });

  it('a logger that throws does not fail the wait', async () => {
    const client = makeClient(service, { logger: throwingLogger, logLevel: 'warn' });
    expect(await client.bridge.transfers.wait(ids, { timeoutMs: 1_000 })).toMatchObject({
      status: 'delivered',
    });
  });
});
