import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import {
  CallbackListenerError,
  type CallbackRouterOptions,
  CallbackTimeoutError,
  createCallbackRouter,
  type Logger,
  PartnerClient,
} from '../../src/index.js';
import { createPartnerSimulator } from '../../src/testing/index.js';
import { closeCallbackServers, serveCallbacks } from '../helpers/callback-server.js';
import { throwingLogger, warningsLogger } from '../helpers/loggers.js';

let unhandled: unknown[] = [];
const track = (reason: unknown) => void unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', track);
});
afterEach(async () => {
  process.off('unhandledRejection', track);
  await closeCallbackServers();
});
const serve = serveCallbacks;

/** Long enough for a rejection nobody handled to be reported by Node. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

/** A router mounted on a real node:http server on 127.0.0.1, with a logger that records warnings. */
async function mounted(options: Partial<CallbackRouterOptions> = {}) {
  const { logger, warnings } = warningsLogger();
  const router = createCallbackRouter({ authenticate: 'none', logger, logLevel: 'warn', ...options });
  const url = await serve(router.nodeHandler);
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...headers },
    }).then(async (response) => ({ status: response.status, body: await response.json() }));
  return { router, post, warnings };
}

const delivered = transfer({ transferId: 'tr_iso', status: 'delivered' });

describe('what a partner hands the router never leaves an unhandled rejection', () => {
  it('an async error listener that rejects: the delivery is answered as before, the rejection logged', async () => {
    const { router, post, warnings } = await mounted();
    router.on('error', async () => {
      throw new Error('error sink down');
    });
    router.on('transfer', () => {
      throw new Error('ledger down');
    });
    expect((await post(delivered)).status).toBe(500);
    await settle();
    expect(unhandled).toEqual([]);
    // Each warning passes on what the listener threw, for its stack.
    const about = (event: string) => warnings.find((w) => String(w[0]).includes(`'${event}' listener`))?.[1];
    expect(about('error')).toMatchObject({ message: 'error sink down' });
    expect(about('transfer')).toMatchObject({ message: 'ledger down' });
  });

  it('a failing transfer listener still gets its redelivery from the simulator, with a rejecting error listener', async () => {
    const { logger, warnings } = warningsLogger();
    const router = createCallbackRouter({ authenticate: 'none', logger, logLevel: 'warn' });
    const url = await serve(router.nodeHandler);
    const sim = createPartnerSimulator({ callbacks: url });
    try {
      const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
      const credited: string[] = [];
      let failNext = true;
      router.on('bridge_transfer_submitted', async (t) => {
        if (failNext) {
          failNext = false;
          throw new Error('ledger down once');
        }
        credited.push(t.transferId);
      });
      router.on('error', async () => {
        throw new Error('error sink down');
      });
      const { transferId } = await client.bridge.execute({
        userId: sim.demo.userId,
        routeId: 'base-usdc-to-bsc-usdc',
        amount: '3',
        signer: privateKeyToAccount(sim.demo.wallet.privateKey),
      });
      const delivery = () => sim.callbackDeliveries.find((d) => d.transferId === transferId);
      // Answered 500, then taken on the simulator's retry a second later.
      await vi.waitFor(() => expect(delivery()).toMatchObject({ state: 'delivered', attempts: 2 }), {
        timeout: 10_000,
      });
      expect(credited).toEqual([transferId]);
      await settle();
      expect(unhandled).toEqual([]);
      expect(warnings.some((w) => String(w[0]).includes("'bridge_transfer_submitted' listener"))).toBe(true);
    } finally {
      sim.close();
    }
  });

  it('a forged POST to a router whose async rejected listener rejects: 401, reported, no unhandled rejection', async () => {
    const { router, post, warnings } = await mounted({
      authenticate: (request) => request.headers.get('x-token') === 'right',
    });
    const errors: unknown[] = [];
    router.on('rejected', async () => {
      throw new Error('audit log down');
    });
    router.on('error', (error) => void errors.push(error));
    expect((await post(delivered, { 'x-token': 'forged' })).status).toBe(401);
    await settle();
    expect(unhandled).toEqual([]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('audit log down');
    expect(warnings.some((w) => String(w[0]).includes("'rejected' listener"))).toBe(true);
  });

  it('an authenticate that throws or rejects: 401, rejected and error events, a warning; never dispatched', async () => {
    for (const authenticate of [
      () => {
        throw new Error('hmac library threw');
      },
      () => Promise.reject(new Error('hmac library rejected')),
    ]) {
      const { router, post, warnings } = await mounted({ authenticate });
      const events: string[] = [];
      router.on('rejected', (r) => void events.push(`rejected:${(r.error as Error).message}`));
      router.on('error', (e) => void events.push(`error:${(e as Error).message}`));
      router.on('transfer', () => void events.push('dispatched'));
      expect((await post(delivered)).status).toBe(401);
      await settle();
      expect(events).toHaveLength(2);
      expect(events.some((e) => e.startsWith('rejected:hmac library'))).toBe(true);
      expect(events.some((e) => e.startsWith('error:hmac library'))).toBe(true);
      expect(warnings.some((w) => String(w[0]).includes('authenticate'))).toBe(true);
    }
    expect(unhandled).toEqual([]);
  });

  it('a listener of ignored that rejects, and an error listener that throws, change nothing', async () => {
    const { router, post, warnings } = await mounted();
    router.on('ignored', async () => {
      throw new Error('metrics down');
    });
    router.on('error', () => {
      throw new Error('error sink threw');
    });
    expect((await post(delivered)).status).toBe(200);
    expect((await post(delivered)).body).toMatchObject({ outcome: 'ignored' });
    await settle();
    expect(unhandled).toEqual([]);
    expect(warnings.some((w) => String(w[0]).includes("'ignored' listener"))).toBe(true);
    expect(warnings.some((w) => String(w[0]).includes("'error' listener"))).toBe(true);
  });

  it('a logger that throws, or an async one that rejects, changes no answer', async () => {
    const rejecting = { ...throwingLogger, warn: async () => Promise.reject(new Error('log shipper down')) };
    for (const logger of [throwingLogger, rejecting]) {
      const { router, post } = await mounted({ logger });
      let calls = 0;
      router.on('transfer', async () => {
        calls++;
        if (calls === 1) throw new Error('first try fails');
      });
      router.on('error', async () => {
        throw new Error('error sink down');
      });
      expect((await post(delivered)).status).toBe(500);
      expect((await post(delivered)).status).toBe(200);
      expect(calls).toBe(2);
    }
    await settle();
    expect(unhandled).toEqual([]);
  });

  it('logs nothing unless the log level lets warnings through', async () => {
    const { logger, warnings } = warningsLogger();
    for (const logLevel of ['off', 'error'] as const) {
      const router = createCallbackRouter({ authenticate: 'none', logger, logLevel });
      router.on('transfer', () => {
        throw new Error('ledger down');
      });
      await expect(router.dispatch(delivered)).rejects.toBeInstanceOf(CallbackListenerError);
    }
    expect(warnings).toEqual([]);
  });

  it('checks the logger and logLevel options', () => {
    expect(() =>
      createCallbackRouter({ authenticate: 'none', logger: { warn: 1 } as unknown as Logger }),
    ).toThrow(/logger/);
    expect(() => createCallbackRouter({ authenticate: 'none', logLevel: 'loud' as 'warn' })).toThrow(
      /logLevel/,
    );
  });
});

describe('a failed unknown listener is not acknowledged', () => {
  const portfolio = { kind: 'portfolio_rebalanced', portfolioId: 'pf_1' };

  it('a throwing or rejecting unknown listener: 500, and the redelivery reaches it again', async () => {
    for (const fail of [
      () => {
        throw new Error('portfolio ledger down');
      },
      async () => {
        throw new Error('portfolio ledger down');
      },
    ]) {
      const { router, post } = await mounted();
      const seen: unknown[] = [];
      const errors: unknown[] = [];
      router.on('error', (e) => void errors.push(e));
      router.on('unknown', (body) => {
        seen.push(body);
        if (seen.length === 1) return fail();
      });
      expect((await post(portfolio)).status).toBe(500);
      expect(errors.at(-1)).toBeInstanceOf(CallbackListenerError);
      expect(errors.at(-1)).toMatchObject({ kind: 'unknown', transferId: undefined });
      const again = await post(portfolio);
      expect(again).toEqual({ status: 200, body: { received: true, outcome: 'unknown' } });
      expect(seen).toEqual([portfolio, portfolio]);
    }
    await settle();
    expect(unhandled).toEqual([]);
  });

  it('acknowledgeListenerErrors answers it 200', async () => {
    const { router, post } = await mounted({ acknowledgeListenerErrors: true });
    router.on('unknown', () => {
      throw new Error('portfolio ledger down');
    });
    expect((await post(portfolio)).status).toBe(200);
  });

  it('dispatch throws CallbackListenerError for it; a hung one stays a bounded 503', async () => {
    const router = createCallbackRouter({ authenticate: 'none', listenerTimeoutMs: 50 });
    router.on('unknown', () => Promise.reject(new Error('nope')));
    await expect(router.dispatch(portfolio)).rejects.toBeInstanceOf(CallbackListenerError);

    const hung = createCallbackRouter({ authenticate: 'none', listenerTimeoutMs: 50 });
    hung.on('error', () => {});
    hung.on('unknown', () => new Promise(() => {}));
    await expect(hung.dispatch(portfolio)).rejects.toBeInstanceOf(CallbackTimeoutError);
    const response = await hung.fetchHandler(
      new Request('https://partner.example/callbacks', { method: 'POST', body: JSON.stringify(portfolio) }),
    );
    expect(response.status).toBe(503);
  });
});
