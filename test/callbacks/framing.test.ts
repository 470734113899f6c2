import { getRequestListener } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { createCallbackRouter, type TransferStatus } from '../../src/index.js';
import { closeCallbackServers, serveCallbacks } from '../helpers/callback-server.js';

afterEach(closeCallbackServers);

const at = (status: TransferStatus, id = 'tr_1') => JSON.stringify(transfer({ transferId: id, status }));
const bytes = (text: string) => new TextEncoder().encode(text);

/** A delivery whose body stream says something else than its content-length. */
function framedAs(declared: number, chunks: readonly Uint8Array[]): Request {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return new Request('https://partner.example/callbacks', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(declared) },
    body: stream,
    duplex: 'half',
  } as RequestInit);
}

/** A delivery of declared length whose body never comes: only `bodyTimeoutMs` ends its read. */
function neverEnding(): { request: Request; stop: () => void } {
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      stop = () => controller.close();
    },
  });
  const request = new Request('https://partner.example/callbacks', {
    method: 'POST',
    headers: { 'content-length': '100' },
    body: stream,
    duplex: 'half',
  } as RequestInit);
  return { request, stop: () => stop() };
}

describe('fetchHandler holds a body of declared length to that length', () => {
  it('refuses a stream that yields more bytes than its content-length, and dispatches nothing', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    router.on('transfer', (t) => void seen.push(t.transferId));
    const body = at('delivered', 'tr_longer');
    // The declared part alone is no JSON; the whole body would be a valid delivery.
    const response = await router.fetchHandler(framedAs(10, [bytes(body)]));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'unreadable_body' });
    // The first chunk is exactly as long as declared; the second is past it.
    const split = await router.fetchHandler(
      framedAs(body.length - 1, [bytes(body.slice(0, -1)), bytes(body.slice(-1))]),
    );
    expect(split.status).toBe(400);
    expect(seen).toEqual([]);
  });

  it('refuses a stream that ends before its content-length, multi-byte text too', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    router.on('transfer', (t) => void seen.push(t.transferId));
    const body = at('delivered', 'tr_shorter');
    expect((await router.fetchHandler(framedAs(body.length + 1, [bytes(body)]))).status).toBe(400);
    // As many characters as declared, but "€" is three bytes: one byte short of two "€" more.
    const wide = JSON.stringify({ ...JSON.parse(body), note: '€€' });
    const wideBytes = bytes(wide).byteLength;
    expect((await router.fetchHandler(framedAs(wideBytes + 1, [bytes(wide)]))).status).toBe(400);
    expect(seen).toEqual([]);
    // Exactly as declared, in bytes: dispatched.
    const exact = await router.fetchHandler(framedAs(wideBytes, [bytes(wide)]));
    expect(exact.status).toBe(200);
    expect(seen).toEqual(['tr_shorter']);
  });

  it('behind a node adapter, a body exactly as long as declared is dispatched, one after another', async () => {
    const router = createCallbackRouter({ authenticate: 'none' });
    const seen: string[] = [];
    router.on('transfer', (t) => void seen.push(`${t.transferId} ${t.status}`));
    const url = await serveCallbacks(getRequestListener(router.fetchHandler));
    for (const status of ['submitted', 'delivered'] as const) {
      const body = JSON.stringify({ ...JSON.parse(at(status, 'tr_exact')), note: 'é€' });
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(200);
    }
    expect(seen).toEqual(['tr_exact submitted', 'tr_exact delivered']);
  });
});

describe('bodyTimeoutMs of reads waiting at once', () => {
  it('a shorter bound begun after a longer one still ends first', async () => {
    const slow = createCallbackRouter({ authenticate: 'none', bodyTimeoutMs: 5_000 });
    const quick = createCallbackRouter({ authenticate: 'none', bodyTimeoutMs: 200 });
    const order: string[] = [];
    const long = neverEnding();
    const short = neverEnding();
    const longAnswer = slow.fetchHandler(long.request).then((response) => {
      order.push(`slow ${response.status}`);
    });
    const shortAnswer = quick.fetchHandler(short.request).then((response) => {
      order.push(`quick ${response.status}`);
    });
    await shortAnswer;
    expect(order).toEqual(['quick 408']);
    long.stop();
    await longAnswer;
    // Its stream ended empty, short of the 100 bytes declared: refused, not waited on further.
    expect(order).toEqual(['quick 408', 'slow 400']);
  });
});
