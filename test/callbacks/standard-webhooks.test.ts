import { inspect } from 'node:util';
import { getRequestListener } from '@hono/node-server';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import {
  ArgumentError,
  type BridgeTransfer,
  type CallbackRouter,
  createCallbackRouter,
  DEFAULTS,
  type IgnoredCallback,
  type RejectedDelivery,
  type StandardWebhooksOptions,
  standardWebhooks,
  type TransferStatus,
} from '../../src/index.js';
import { closeCallbackServers, serveCallbacks } from '../helpers/callback-server.js';

afterEach(closeCallbackServers);

/** Secrets in the scheme's form, as a sending service shows them: `whsec_` and base64 of 24 bytes. */
const key = (fill: number) => Buffer.alloc(24, fill).toString('base64');
const KEY_A = key(0x5a);
const KEY_B = key(0xa5);
const SECRET_A = `whsec_${KEY_A}`;
const SECRET_B = `whsec_${KEY_B}`;

const at = (status: TransferStatus, id = 'tr_1') => transfer({ transferId: id, status });
const nowSec = () => Math.floor(Date.now() / 1000);

interface Signing {
  /** The secrets the sender signs with: one signature each, space-separated, as during a rotation. */
  secrets?: string[];
  id?: string;
  /** Seconds from now of the signed timestamp. */
  offsetSec?: number;
}

/** The headers the `standardwebhooks` library, as the sender, puts on `body`. */
function signedHeaders(body: string, { secrets = [SECRET_A], id = 'msg_1', offsetSec = 0 }: Signing = {}) {
  const timestamp = nowSec() + offsetSec;
  const signature = secrets
    .map((secret) => new Webhook(secret).sign(id, new Date(timestamp * 1000), body))
    .join(' ');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
  } as Record<string, string>;
}

const HANDLERS = ['nodeHandler', 'fetchHandler'] as const;
type HandlerName = (typeof HANDLERS)[number];

/** A router checking Standard Webhooks, served over real HTTP by one of its handlers. */
async function receiver(handler: HandlerName, options: StandardWebhooksOptions = { secret: SECRET_A }) {
  const logged: string[] = [];
  const log = (...values: unknown[]) =>
    void logged.push(values.map((v) => inspect(v, { depth: 6 })).join(' '));
  const router: CallbackRouter = createCallbackRouter({
    authenticate: standardWebhooks(options),
    logger: { debug: log, info: log, warn: log, error: log },
    logLevel: 'debug',
  });
  const dispatched: string[] = [];
  const ignored: IgnoredCallback[] = [];
  const rejected: RejectedDelivery[] = [];
  const errors: unknown[] = [];
  router.on('transfer', (t, kind) => void dispatched.push(`${t.transferId}:${kind}`));
  router.on('ignored', (event) => void ignored.push(event));
  router.on('rejected', (event) => void rejected.push(event));
  router.on('error', (error) => void errors.push(error));
  const url = await serveCallbacks(
    handler === 'nodeHandler' ? router.nodeHandler : getRequestListener(router.fetchHandler),
  );
  const post = async (body: string, headers: Record<string, string>) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: response.status, text: await response.text() };
  };
  return { router, post, dispatched, ignored, rejected, errors, logged };
}

describe.each(HANDLERS)(
  'standardWebhooks through %s over HTTP, the standardwebhooks library signing',
  (handler) => {
    it('accepts a valid delivery and dispatches it once', async () => {
      const r = await receiver(handler);
      const body = JSON.stringify(at('delivered'));
      expect(await r.post(body, signedHeaders(body))).toMatchObject({ status: 200 });
      expect(r.dispatched).toEqual(['tr_1:bridge_transfer_delivered']);
      expect(r.rejected).toEqual([]);
    });

    it('during a rotation accepts either secret signing, and a delivery signed with both', async () => {
      const r = await receiver(handler, { secrets: [SECRET_A, SECRET_B] });
      const first = JSON.stringify(at('delivered', 'tr_a'));
      const second = JSON.stringify(at('delivered', 'tr_b'));
      const both = JSON.stringify(at('delivered', 'tr_c'));
      expect((await r.post(first, signedHeaders(first, { secrets: [SECRET_A], id: 'm_a' }))).status).toBe(
        200,
      );
      expect((await r.post(second, signedHeaders(second, { secrets: [SECRET_B], id: 'm_b' }))).status).toBe(
        200,
      );
      const twoSignatures = signedHeaders(both, { secrets: [SECRET_B, SECRET_A], id: 'm_c' });
      expect(twoSignatures['webhook-signature']!.split(' ')).toHaveLength(2);
      expect((await r.post(both, twoSignatures)).status).toBe(200);
      expect(r.dispatched.sort()).toEqual([
        'tr_a:bridge_transfer_delivered',
        'tr_b:bridge_transfer_delivered',
        'tr_c:bridge_transfer_delivered',
      ]);

      // The old secret alone still accepts a delivery the sender signed with both; a third does not.
      const oldOnly = await receiver(handler, { secret: SECRET_A });
      expect((await oldOnly.post(both, twoSignatures)).status).toBe(200);
      const other = await receiver(handler, { secret: `whsec_${key(0x11)}` });
      expect((await other.post(both, twoSignatures)).status).toBe(401);
      expect(other.dispatched).toEqual([]);
    });

    it('refuses a stale delivery, past or future, outside the tolerance (401, no listener)', async () => {
      const r = await receiver(handler);
      const body = JSON.stringify(at('delivered'));
      expect((await r.post(body, signedHeaders(body, { offsetSec: -310 }))).status).toBe(401);
      expect((await r.post(body, signedHeaders(body, { offsetSec: 310 }))).status).toBe(401);
      expect(r.dispatched).toEqual([]);
      expect(r.rejected).toHaveLength(2);
      // Within the default 300 s either way it is accepted.
      expect((await r.post(body, signedHeaders(body, { offsetSec: -280 }))).status).toBe(200);
      expect(r.dispatched).toEqual(['tr_1:bridge_transfer_delivered']);

      const tight = await receiver(handler, { secret: SECRET_A, toleranceSec: 30 });
      expect((await tight.post(body, signedHeaders(body, { offsetSec: -60 }))).status).toBe(401);
      expect((await tight.post(body, signedHeaders(body, { offsetSec: 60 }))).status).toBe(401);
      expect((await tight.post(body, signedHeaders(body, { offsetSec: -10 }))).status).toBe(200);
    });

    it('a replay within the tolerance is a duplicate: answered, never dispatched twice', async () => {
      const r = await receiver(handler);
      const body = JSON.stringify(at('delivered'));
      const headers = signedHeaders(body);
      expect(await r.post(body, headers)).toMatchObject({ status: 200 });
      const replayed = await r.post(body, headers);
      expect(replayed.status).toBe(200);
      expect(JSON.parse(replayed.text)).toMatchObject({ outcome: 'ignored' });
      expect(r.dispatched).toEqual(['tr_1:bridge_transfer_delivered']);
      expect(r.ignored.map((event) => event.reason)).toEqual(['duplicate']);
    });

    it('a seen webhook-id with another body, even a newer state validly signed, reaches no listener', async () => {
      const r = await receiver(handler);
      const first = JSON.stringify(at('source_confirmed'));
      expect((await r.post(first, signedHeaders(first, { id: 'msg_reused' }))).status).toBe(200);
      const newer = JSON.stringify(at('delivered'));
      expect((await r.post(newer, signedHeaders(newer, { id: 'msg_reused' }))).status).toBe(401);
      expect(r.dispatched).toEqual(['tr_1:bridge_transfer_source_confirmed']);
      // The same state under a new id is the sender's next message: dispatched.
      expect((await r.post(newer, signedHeaders(newer, { id: 'msg_next' }))).status).toBe(200);
      expect(r.dispatched).toEqual([
        'tr_1:bridge_transfer_source_confirmed',
        'tr_1:bridge_transfer_delivered',
      ]);
    });

    it('a resend of the same message after a failed listener is dispatched again (at least once)', async () => {
      const r = await receiver(handler);
      let fail = true;
      r.router.on('bridge_transfer_delivered', () => {
        if (fail) {
          fail = false;
          throw new Error('ledger down');
        }
      });
      const body = JSON.stringify(at('delivered'));
      expect((await r.post(body, signedHeaders(body, { id: 'msg_retry', offsetSec: -5 }))).status).toBe(500);
      // The sender retries the same message: same id and body, a new timestamp and signature.
      expect((await r.post(body, signedHeaders(body, { id: 'msg_retry' }))).status).toBe(200);
      expect(r.dispatched).toEqual(['tr_1:bridge_transfer_delivered', 'tr_1:bridge_transfer_delivered']);
    });

    it('refuses a tampered body, id, timestamp or signature (401, no listener)', async () => {
      const r = await receiver(handler);
      const body = JSON.stringify(at('delivered'));
      const headers = signedHeaders(body);
      const tamperedBody = JSON.stringify({ ...at('delivered'), userId: 'user-2' });
      const flipped = headers['webhook-signature']!.replace(
        /,(.)/,
        (_, c: string) => `,${c === 'A' ? 'B' : 'A'}`,
      );
      const attempts: [string, Record<string, string>][] = [
        [tamperedBody, headers],
        [`${body} `, headers],
        [body, { ...headers, 'webhook-id': 'msg_2' }],
        [body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) }],
        [body, { ...headers, 'webhook-signature': flipped }],
      ];
      for (const [sent, sentHeaders] of attempts) expect((await r.post(sent, sentHeaders)).status).toBe(401);
      expect(r.dispatched).toEqual([]);
      expect(r.rejected).toHaveLength(attempts.length);
      expect(r.errors).toEqual([]);
    });

    it('refuses a delivery missing a header, or with one it cannot read (401, no listener)', async () => {
      const r = await receiver(handler);
      const body = JSON.stringify(at('delivered'));
      const headers = signedHeaders(body);
      const without = (name: string) =>
        Object.fromEntries(Object.entries(headers).filter(([n]) => n !== name));
      const signature = headers['webhook-signature']!;
      const attempts: Record<string, string>[] = [
        {},
        without('webhook-id'),
        without('webhook-timestamp'),
        without('webhook-signature'),
        { ...headers, 'webhook-timestamp': 'soon' },
        { ...headers, 'webhook-timestamp': `${headers['webhook-timestamp']}.5` },
        { ...headers, 'webhook-signature': signature.replace('v1,', 'v1a,') },
        { ...headers, 'webhook-signature': signature.replace('v1,', '') },
        { ...headers, 'webhook-signature': 'v1,not*base64' },
        { ...headers, 'webhook-signature': `v1,${Buffer.alloc(31).toString('base64')}` },
      ];
      for (const sent of attempts) expect((await r.post(body, sent)).status).toBe(401);
      expect(r.dispatched).toEqual([]);
      expect(r.rejected).toHaveLength(attempts.length);
    });

    it('never puts a secret into an answer, an event or a log line', async () => {
      const r = await receiver(handler, { secrets: [SECRET_A, SECRET_B] });
      const body = JSON.stringify(at('delivered'));
      const answers = [
        await r.post(body, signedHeaders(body, { secrets: [`whsec_${key(0x11)}`] })),
        await r.post(body, signedHeaders(body, { offsetSec: -1_000 })),
        await r.post(body, {}),
        await r.post(body, signedHeaders(body)),
        await r.post(body, signedHeaders(body)),
      ];
      const texts = [
        ...answers.map((answer) => answer.text),
        inspect(r.rejected, { depth: 8 }),
        inspect(r.errors, { depth: 8 }),
        ...r.logged,
        inspect(r.router, { depth: 8, showHidden: true }),
      ];
      for (const text of texts) {
        for (const secret of [KEY_A, KEY_B]) expect(text).not.toContain(secret);
        expect(text).not.toContain(Buffer.from(KEY_A, 'base64').toString('hex'));
      }
    });
  },
);

describe('standardWebhooks options', () => {
  it('toleranceSec defaults to DEFAULTS.callbacks.webhookToleranceSec, 300 s', () => {
    expect(DEFAULTS.callbacks.webhookToleranceSec).toBe(300);
  });

  it.each([
    ['a secret without the whsec_ prefix', { secret: KEY_A }],
    ['a secret that is not base64', { secret: 'whsec_not base64!' }],
    ['an empty secret', { secret: 'whsec_' }],
    ['a secret that is no string', { secret: 42 }],
    ['both secret and secrets', { secret: SECRET_A, secrets: [SECRET_B] }],
    ['neither', {}],
    ['no secrets', { secrets: [] }],
    ['a bad secret among secrets', { secrets: [SECRET_A, `whsec_${KEY_B}$`] }],
    ['a negative tolerance', { secret: SECRET_A, toleranceSec: -1 }],
    ['a tolerance that is no finite number', { secret: SECRET_A, toleranceSec: Number.NaN }],
    ['an unknown option', { secret: SECRET_A, tolerance: 60 }],
  ])('%s is an ArgumentError at construction, naming no secret', (_, options) => {
    let thrown: unknown;
    try {
      standardWebhooks(options as StandardWebhooksOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ArgumentError);
    const text = `${(thrown as Error).message} ${inspect(thrown, { depth: 8 })}`;
    expect(text).toContain('standardWebhooks');
    for (const secret of [KEY_A, KEY_B]) expect(text).not.toContain(secret);
  });

  it('a zero tolerance is allowed, and refuses a delivery signed seconds ago', async () => {
    const router = createCallbackRouter({
      authenticate: standardWebhooks({ secret: SECRET_A, toleranceSec: 0 }),
    });
    const seen: BridgeTransfer[] = [];
    router.on('transfer', (t) => void seen.push(t));
    const body = JSON.stringify(at('delivered'));
    const headers = signedHeaders(body, { offsetSec: -5 });
    const response = await router.fetchHandler(
      new Request('https://partner.example/callbacks', { method: 'POST', body, headers }),
    );
    expect(response.status).toBe(401);
    expect(seen).toEqual([]);
  });
});
