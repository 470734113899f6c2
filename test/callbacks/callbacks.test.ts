import fc from 'fast-check';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import {
  type BridgeTransfer,
  CALLBACK_KINDS,
  CallbackBusyError,
  CallbackListenerError,
  CallbackParseError,
  type CallbackStore,
  createCallbackRouter,
  type IgnoredCallback,
  MemoryCallbackStore,
  PartnerClient,
  parseBridgeCallback,
  type TransferStatus,
} from '../../src/index.js';
import { createPartnerSimulator } from '../../src/testing/index.js';
import { closeCallbackServers, serveCallbacks } from '../helpers/callback-server.js';

const post = (body: string) => new Request('https://partner.example/callbacks', { method: 'POST', body });

afterEach(closeCallbackServers);
const serve = serveCallbacks;

describe('parseBridgeCallback', () => {
  it.each(CALLBACK_KINDS)('%s from text, bytes and objects', (kind) => {
    const body = transfer({ status: kind.replace('bridge_transfer_', '') as TransferStatus });
    for (const input of [JSON.stringify(body), new TextEncoder().encode(JSON.stringify(body)), body]) {
      const parsed = parseBridgeCallback(input);
      expect(parsed.kind).toBe(kind);
      expect(parsed).toMatchObject({ transfer: body });
    }
  });

  it('reports pending, expired and unknown states without a kind', () => {
    for (const status of ['pending', 'expired', 'bridging'] as const) {
      expect(parseBridgeCallback(transfer({ status })).kind).toBe('unexpected_state');
    }
  });

  it('passes portfolio-shaped bodies on as unknown', () => {
    const body = { kind: 'portfolio_balance_changed', userId: 'u', balances: [] };
    expect(parseBridgeCallback(JSON.stringify(body))).toEqual({ kind: 'unknown', body });
    expect(parseBridgeCallback('[1,2]')).toEqual({ kind: 'unknown', body: [1, 2] });
  });

  it('throws CallbackParseError for broken JSON and broken transfers', () => {
    expect(() => parseBridgeCallback('{"transferId":')).toThrow(CallbackParseError);
    const broken = { ...transfer(), source: { ...transfer().source, decimals: 'six' } };
    const error = (() => {
      try {
        parseBridgeCallback(broken);
      } catch (e) {
        return e as CallbackParseError;
      }
    })();
    expect(error).toBeInstanceOf(CallbackParseError);
    expect(error!.issues[0]!.path).toBe('source.decimals');
    const missing: Record<string, unknown> = { ...transfer() };
    delete missing.gasFeeRaw;
    expect(() => parseBridgeCallback(missing)).toThrow(CallbackParseError);
  });

  it('keeps unknown fields, and rejects them under strict', () => {
    const body = { ...transfer({ status: 'delivered' }), newField: 1 };
    expect(parseBridgeCallback(body)).toMatchObject({ transfer: { newField: 1 } });
    expect(() => parseBridgeCallback(body, { strict: true })).toThrow(CallbackParseError);
  });
});

describe('callback router', () => {
  const at = (status: TransferStatus, id = 'tr_1') => transfer({ transferId: id, status });

  it('dispatches each kind once, drops duplicates and never goes backwards', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    const ignored: IgnoredCallback[] = [];
    router.on('transfer', (t, kind) => void seen.push(`${t.transferId}:${kind}`));
    router.on('ignored', (event) => void ignored.push(event));
    for (const status of [
      'submitted',
      'submitted',
      'source_confirmed',
      'delivered',
      'source_confirmed',
      'submitted',
      'delivered',
    ] as const) {
      await router.dispatch(at(status));
    }
    expect(seen).toEqual([
      'tr_1:bridge_transfer_submitted',
      'tr_1:bridge_transfer_source_confirmed',
      'tr_1:bridge_transfer_delivered',
    ]);
    expect(ignored.map((event) => `${event.reason}:${event.transfer.status}<${event.previous}`)).toEqual([
      'duplicate:submitted<submitted',
      'stale:source_confirmed<delivered',
      'stale:submitted<delivered',
      'duplicate:delivered<delivered',
    ]);
  });

  it('lets a skipped state through and follows the refund path', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    router.on('transfer', (t) => void seen.push(t.status));
    for (const status of [
      'source_confirmed',
      'refund_pending',
      'source_confirmed',
      'refunded',
      'delivered',
    ] as const) {
      await router.dispatch(at(status));
    }
    expect(seen).toEqual(['source_confirmed', 'refund_pending', 'refunded']);
  });

  it('keeps transfers apart and reports unknown bodies', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const delivered: string[] = [];
    const unknown: unknown[] = [];
    router.on('bridge_transfer_delivered', (t) => void delivered.push(t.transferId));
    router.on('unknown', (body) => void unknown.push(body));
    await router.dispatch(at('delivered', 'a'));
    await router.dispatch(at('delivered', 'b'));
    await router.dispatch({ kind: 'portfolio' });
    expect(delivered).toEqual(['a', 'b']);
    expect(unknown).toEqual([{ kind: 'portfolio' }]);
  });

  it('a throwing listener does not stop the others', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const errors: unknown[] = [];
    const reached: string[] = [];
    router.on('bridge_transfer_submitted', () => {
      throw new Error('listener bug');
    });
    router.on('bridge_transfer_submitted', async () => {
      await Promise.reject(new Error('async bug'));
    });
    router.on('bridge_transfer_submitted', () => void reached.push('third'));
    router.on('transfer', () => void reached.push('transfer'));
    router.on('error', (error) => void errors.push(error));
    await expect(router.dispatch(at('submitted'))).rejects.toBeInstanceOf(CallbackListenerError);
    expect(reached).toEqual(['third', 'transfer']);
    expect(errors.map((e) => (e as Error).message)).toEqual([
      'listener bug',
      'async bug',
      '2 listener(s) failed for bridge_transfer_submitted of tr_1; not recorded: listener bug',
    ]);
    // Every failure is kept; the first is the cause, whose reason ends the message.
    const failed = errors[2] as CallbackListenerError;
    expect(failed.causes.map((e) => (e as Error).message)).toEqual(['listener bug', 'async bug']);
    expect(failed.cause).toBe(failed.causes[0]);
  });

  it('a failed listener leaves the state unrecorded: answered 500, the retry dispatches it again', async () => {
    const store = new MemoryCallbackStore();
    const router = createCallbackRouter({ authenticate: 'none', store });
    router.on('error', () => {});
    let calls = 0;
    router.on('bridge_transfer_delivered', () => {
      calls++;
      if (calls === 1) throw new Error('ledger down');
    });
    const first = await router.fetchHandler(post(JSON.stringify(at('delivered'))));
    expect(first.status).toBe(500);
    expect(await store.get('tr_1')).toBeUndefined();
    const retry = await router.fetchHandler(post(JSON.stringify(at('delivered'))));
    expect(retry.status).toBe(200);
    expect(await store.get('tr_1')).toBe('delivered');
    const again = await router.fetchHandler(post(JSON.stringify(at('delivered'))));
    expect(await again.json()).toMatchObject({ outcome: 'ignored' });
    expect(calls).toBe(2);
  });

  it('acknowledgeListenerErrors keeps answering 2xx and recording when a listener throws', async () => {
    const store = new MemoryCallbackStore();
    const router = createCallbackRouter({ authenticate: 'none', store, acknowledgeListenerErrors: true });
    const errors: unknown[] = [];
    router.on('error', (error) => void errors.push(error));
    router.on('transfer', () => {
      throw new Error('listener bug');
    });
    const response = await router.fetchHandler(post(JSON.stringify(at('delivered'))));
    expect(response.status).toBe(200);
    expect(await store.get('tr_1')).toBe('delivered');
    expect(errors).toHaveLength(1);
  });

  it('a transfer claimed elsewhere is answered 503 and dispatched once the claim is gone', async () => {
    const store = new MemoryCallbackStore();
    const held = await store.claim({
      transferId: 'tr_1',
      status: 'submitted',
      rank: 0,
      final: false,
      ttlMs: 60_000,
    });
    const router = createCallbackRouter({ authenticate: 'none', store });
    const errors: unknown[] = [];
    router.on('error', (error) => void errors.push(error));
    let calls = 0;
    router.on('transfer', () => void calls++);
    const busy = await router.fetchHandler(post(JSON.stringify(at('delivered'))));
    expect(busy.status).toBe(503);
    expect(await busy.json()).toEqual({ error: 'callback_busy' });
    expect(errors[0]).toBeInstanceOf(CallbackBusyError);
    expect(calls).toBe(0);
    if (held.outcome !== 'claimed') throw new Error('expected a claim');
    await store.release(
      { transferId: 'tr_1', status: 'submitted', rank: 0, final: false, ttlMs: 1 },
      held.token,
    );
    expect((await router.fetchHandler(post(JSON.stringify(at('delivered'))))).status).toBe(200);
    expect(calls).toBe(1);
  });

  it('emits rejected for a delivery authenticate refused, and never dispatches it', async () => {
    const router = createCallbackRouter({
      authenticate: (request) => request.headers.get('x-token') === 'right',
    });
    const rejected: string[] = [];
    let dispatched = 0;
    router.on('rejected', ({ request }) => void rejected.push(request.headers.get('x-token') ?? ''));
    router.on('transfer', () => void dispatched++);
    const response = await router.fetchHandler(
      new Request('https://partner.example/callbacks', {
        method: 'POST',
        body: JSON.stringify(at('delivered')),
        headers: { 'x-token': 'wrong' },
      }),
    );
    expect(response.status).toBe(401);
    expect(rejected).toEqual(['wrong']);
    expect(dispatched).toBe(0);
  });

  it('bounds the default store', async () => {
    const store = new MemoryCallbackStore(100);
    const router = createCallbackRouter({ authenticate: 'none', store });
    for (let i = 0; i < 1000; i++) await router.dispatch(at('submitted', `t${i}`));
    expect(store.size).toBe(100);
  });

  it('forgets the least recently updated transfer first, however often another was updated', async () => {
    const store = new MemoryCallbackStore(3);
    const record = async (transferId: string, rank: number) => {
      const request = { transferId, status: `s${rank}`, rank, final: false, ttlMs: 1000 };
      const claim = await store.claim(request);
      if (claim.outcome !== 'claimed') throw new Error(`${transferId} ${claim.outcome}`);
      await store.commit(request, claim.token);
    };
    await record('a', 0);
    await record('b', 0);
    await record('c', 0);
    for (let rank = 1; rank <= 1000; rank++) await record('a', rank);
    await record('d', 0);
    expect(await store.get('b')).toBeUndefined();
    expect([await store.get('a'), await store.get('c'), await store.get('d')]).toEqual(['s1000', 's0', 's0']);
    await record('e', 0);
    expect(await store.get('c')).toBeUndefined();
    expect(store.size).toBe(3);
  });

  it('shares de-duplication between routers through an async store', async () => {
    const shared = new MemoryCallbackStore();
    const store: CallbackStore = {
      claim: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        return shared.claim(request);
      },
      commit: (request, token) => shared.commit(request, token),
      release: (request, token) => shared.release(request, token),
    };
    const a = createCallbackRouter({ authenticate: 'none', store });
    const b = createCallbackRouter({ authenticate: 'none', store });
    let dispatched = 0;
    for (const router of [a, b]) router.on('transfer', () => void dispatched++);
    await a.dispatch(at('delivered'));
    await b.dispatch(at('delivered'));
    await b.dispatch(at('submitted'));
    expect(dispatched).toBe(1);
  });

  it('handles concurrent deliveries of one transfer in order', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    router.on('transfer', (t) => void seen.push(t.status));
    await Promise.all(
      (['submitted', 'source_confirmed', 'source_confirmed', 'delivered', 'submitted'] as const).map((s) =>
        router.dispatch(at(s)),
      ),
    );
    expect(seen).toEqual(['submitted', 'source_confirmed', 'delivered']);
  });

  it('never dispatches out of order or twice for generated histories', async () => {
    const path: TransferStatus[][] = [
      ['submitted', 'source_confirmed', 'delivered'],
      ['submitted', 'source_confirmed', 'refund_pending', 'refunded'],
      ['submitted', 'failed'],
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
        async (which, picks) => {
          const history = path[which]!;
          const deliveries = picks.map((p) => history[p % history.length]!);
          const router = createCallbackRouter({ authenticate: 'none' });
          const seen: string[] = [];
          router.on('transfer', (t) => void seen.push(t.status));
          for (const status of deliveries) await router.dispatch(at(status));
          expect(new Set(seen).size).toBe(seen.length);
          const order = seen.map((status) => history.indexOf(status));
          expect(order).toEqual([...order].sort((x, y) => x - y));
          expect(seen[0]).toBe(deliveries[0]);
        },
      ),
      { numRuns: 200, seed: 42 },
    );
  });
});

describe('handlers', () => {
  const body = JSON.stringify(transfer({ status: 'delivered' }));

  function routerWithLog(options: Partial<Parameters<typeof createCallbackRouter>[0]> = {}) {
    const router = createCallbackRouter({ authenticate: 'none', ...options });
    const seen: BridgeTransfer[] = [];
    router.on('transfer', (t) => void seen.push(t));
    return { router, seen };
  }

  it('nodeHandler through a real node:http server', async () => {
    const { router, seen } = routerWithLog({
      authenticate: (request) => request.headers.get('x-token') === 'ok',
    });
    const url = await serve(router.nodeHandler);
    const post = (payload: BodyInit, headers: Record<string, string> = { 'x-token': 'ok' }) =>
      fetch(url, {
        method: 'POST',
        body: payload,
        headers: { 'content-type': 'application/json', ...headers },
      });
    expect((await post(body)).status).toBe(200);
    expect((await post(body)).status).toBe(200); // duplicate: accepted, not dispatched
    expect((await post('{broken')).status).toBe(400);
    expect((await post(body, { 'x-token': 'no' })).status).toBe(401);
    expect((await fetch(url)).status).toBe(405);
    expect((await post('x'.repeat(1024 * 1024 + 10))).status).toBe(413);
    expect(seen).toHaveLength(1);
  });

  it('nodeHandler refuses an oversized chunked body without reading it all', async () => {
    const { router, seen } = routerWithLog({ maxBodyBytes: 1000 });
    const url = await serve(router.nodeHandler);
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode('y'.repeat(100)));
        controller.close();
      },
    });
    const response = await fetch(url, { method: 'POST', body: stream, duplex: 'half' } as RequestInit).catch(
      () => undefined,
    );
    if (response) expect(response.status).toBe(413);
    expect(seen).toHaveLength(0);
  });

  it('nodeHandler takes a body Express already parsed', async () => {
    const { router, seen } = routerWithLog();
    const url = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        Object.assign(req, { body: JSON.parse(Buffer.concat(chunks).toString()) });
        router.nodeHandler(req, res);
      });
    });
    expect((await fetch(url, { method: 'POST', body })).status).toBe(200);
    expect(seen[0]!.status).toBe('delivered');
  });

  it('fetchHandler with web Request objects', async () => {
    const { router, seen } = routerWithLog({
      authenticate: (request) => request.body.length > 0 && request.method === 'POST',
    });
    const req = (init: RequestInit) => new Request('https://partner.example/callbacks', init);
    expect((await router.fetchHandler(req({ method: 'POST', body }))).status).toBe(200);
    expect((await router.fetchHandler(req({ method: 'POST', body: 'nope' }))).status).toBe(400);
    expect((await router.fetchHandler(req({ method: 'POST', body: '' }))).status).toBe(401);
    const wrong = await router.fetchHandler(req({ method: 'PUT', body }));
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    const big = await router.fetchHandler(req({ method: 'POST', body: 'z'.repeat(2 * 1024 * 1024) }));
    expect(big.status).toBe(413);
    expect(seen).toHaveLength(1);
  });

  it('answers 200 for a portfolio callback and passes it on', async () => {
    const { router } = routerWithLog();
    const unknown: unknown[] = [];
    router.on('unknown', (b) => void unknown.push(b));
    const response = await router.fetchHandler(
      new Request('https://p/cb', { method: 'POST', body: '{"kind":"portfolio"}' }),
    );
    expect(response.status).toBe(200);
    expect(unknown).toEqual([{ kind: 'portfolio' }]);
  });
});

describe('waiting on callbacks', () => {
  it('transfers.wait wakes on a callback and confirms it with one read', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const url = await serve(router.nodeHandler);
    const sim = createPartnerSimulator({ callbacks: url });
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
    const { transferId } = await client.bridge.execute({
      userId: sim.demo.userId,
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '3',
      signer,
    });
    const reads = () => sim.requests.filter((r) => r.path.startsWith('/bridge/transfers/')).length;
    const waiting = client.bridge.transfers.wait(
      { userId: sim.demo.userId, transferId },
      { router, pollIntervalMs: 60_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    sim.advance(transferId, 'source_confirmed');
    sim.advance(transferId, 'delivered');
    const final = await waiting;
    expect(final.status).toBe('delivered');
    // The first read, then one that confirms the callback: a callback alone never resolves a wait.
    expect(reads()).toBe(2);
  });
});
