/**
 * Callbacks over real HTTP: each handler against a bare handler doing the least a correct endpoint
 * does (read the body, JSON.parse, the same zod checks of the transfer, answer 200), both in one
 * process, interleaved, driven by the same thin client over loopback keep-alive connections:
 * `nodeHandler` against a bare node:http handler, and `fetchHandler` against the bare web handler,
 * both behind the same Request/Response adapter (@hono/node-server's, as a node server of a
 * fetch-style handler runs it). Then memory after 1,000,000 callbacks over 100,000 transfers with
 * the default store.
 */

import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { TransferStatus } from 'partner-s2s-sdk';
import { transfer } from '../fixtures/wire.js';
import { type Contender, fixed, interleaveSamples, median, pairedRatio, ratioVerdict, table } from './lib.js';
import { transferSchema } from './schemas.js';
import { sdk } from './sdk.js';

const PATH: TransferStatus[] = [
  'submitted',
  'source_confirmed',
  'source_confirmed',
  'delivered',
  'submitted',
];
// One body template; the transfer id and status change per callback, as they would on the wire.
const template = JSON.stringify(transfer({ transferId: '@ID@', status: '@STATUS@' as TransferStatus }));
const [head, middle, tail] = (() => {
  const [a, rest] = template.split('@ID@') as [string, string];
  const [b, c] = rest.split('@STATUS@') as [string, string];
  return [a, b, c];
})();
const body = (id: string | number, status: string) => `${head}t${id}${middle}${status}${tail}`;

/** What both sides do with a transfer: nothing, so that only the endpoints' own work is compared. */
const listener = (_transfer: unknown) => {};
const schema = transferSchema;
const JSON_HEADERS = { 'content-type': 'application/json' };
const RECEIVED = JSON.stringify({ received: true });

/** The bare web endpoint: the body as text, JSON.parse, the same zod parse, a JSON answer. */
async function bareFetch(request: Request): Promise<Response> {
  if (request.method !== 'POST') return new Response(null, { status: 405 });
  try {
    listener(schema.parse(JSON.parse(await request.text())));
  } catch {
    return new Response(JSON.stringify({ error: 'invalid_body' }), { status: 400, headers: JSON_HEADERS });
  }
  return new Response(RECEIVED, { status: 200, headers: JSON_HEADERS });
}

/** The bare node:http endpoint: the chunks joined, JSON.parse, the same zod parse, a JSON answer. */
function bareNode(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      listener(schema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    } catch {
      res.writeHead(400, JSON_HEADERS);
      res.end(JSON.stringify({ error: 'invalid_body' }));
      return;
    }
    res.writeHead(200, JSON_HEADERS);
    res.end(RECEIVED);
  });
}

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 1_048_576;
}

const ROUNDS = 41;
const LIFE: TransferStatus[] = ['submitted', 'source_confirmed', 'delivered'];
let seq = 0;
/**
 * A new (transfer, state) per delivery, each transfer going through three states in order as on
 * the wire, so that the router claims and commits every one.
 */
const nextBody = () => {
  const i = seq++;
  return body(`${Math.floor(i / 3)}`, LIFE[i % 3]!);
};

function ratioTable(title: string, baseline: string, samples: Map<string, number[]>): void {
  const base = samples.get(baseline)!;
  table(
    title,
    ['handler', 'median µs/delivery', 'deliveries/s', `× ${baseline}`],
    [...samples].map(([name, values]) => [
      name,
      fixed(median(values), 2),
      Math.round(1e6 / median(values)).toLocaleString('en'),
      fixed(pairedRatio(values, base)),
    ]),
  );
}

/** The length of the first whole answer in `text` (content-length or chunked), if it is all there. */
function answerLength(text: string): number | undefined {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = text.slice(0, headEnd).toLowerCase();
  const declared = /\r\ncontent-length: *(\d+)/.exec(head);
  if (declared) {
    const end = headEnd + 4 + Number(declared[1]);
    return text.length >= end ? end : undefined;
  }
  const last = text.indexOf('\r\n0\r\n\r\n', headEnd);
  return last < 0 ? undefined : last + 7;
}

/**
 * A client of hand-written requests over keep-alive sockets, one request in flight per socket:
 * a client this thin leaves the server's work to dominate the time. The sockets stay open across
 * rounds, so that no round pays for connecting.
 */
async function client(
  port: number,
  connections: number,
): Promise<{
  send: (count: number) => Promise<void>;
  close: () => void;
}> {
  const sockets: Socket[] = await Promise.all(
    Array.from(
      { length: connections },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => resolve(socket));
          socket.setNoDelay(true);
          socket.setEncoding('latin1');
          socket.once('error', reject);
        }),
    ),
  );
  const write = (socket: Socket) => {
    const text = nextBody();
    socket.write(
      `POST /callbacks HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  };
  const send = async (count: number) => {
    let sent = 0;
    await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve, reject) => {
            let pending = '';
            const onData = (chunk: string) => {
              pending += chunk;
              for (;;) {
                const length = answerLength(pending);
                if (length === undefined) return;
                if (!pending.startsWith('HTTP/1.1 200')) {
                  reject(new Error(`answered ${pending.slice(0, length)}`));
                  return;
                }
                pending = pending.slice(length);
                if (sent < count) {
                  sent++;
                  write(socket);
                } else {
                  socket.off('data', onData);
                  resolve();
                  return;
                }
              }
            };
            socket.on('data', onData);
            sent++;
            write(socket);
          }),
      ),
    );
  };
  const close = () => {
    for (const socket of sockets) socket.destroy();
  };
  return { send, close };
}

/**
 * A handler and its bare baseline, each on a node:http server of its own, driven by the same
 * client in interleaved rounds; prints the table and the row's verdict.
 */
async function overHttp(
  row: string,
  baseline: [string, RequestListener],
  handler: [string, RequestListener],
): Promise<void> {
  const N = 500;
  const CONNECTIONS = 8;
  const servers = await Promise.all(
    [baseline[1], handler[1]].map(async (listen) => {
      const server = createServer({ keepAliveTimeout: 60_000 }, listen);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  const clients = await Promise.all(
    servers.map((server) => client((server.address() as AddressInfo).port, CONNECTIONS)),
  );
  const contenders: Contender[] = [baseline[0], handler[0]].map((name, i) => ({
    name,
    run: async () => {
      await clients[i]!.send(N);
      return N;
    },
  }));
  for (const c of contenders) await c.run();
  const samples = await interleaveSamples(contenders, ROUNDS);
  ratioTable(
    `${handler[0]} over loopback HTTP, ${CONNECTIONS} keep-alive connections, ${N.toLocaleString('en')} per round (${ROUNDS} interleaved rounds; ratios are medians of per-round ratios)`,
    baseline[0],
    samples,
  );
  ratioVerdict(row, pairedRatio(samples.get(handler[0])!, samples.get(baseline[0])!), 1.15);
  for (const c of clients) c.close();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
}

export async function nodeHandlers(): Promise<void> {
  const router = sdk.createCallbackRouter({ authenticate: 'none' });
  router.on('transfer', listener);
  await overHttp(
    'nodeHandler × bare JSON.parse + zod node handler',
    ['bare node handler', bareNode],
    ['nodeHandler', router.nodeHandler],
  );
}

export async function fetchHandlers(): Promise<void> {
  const router = sdk.createCallbackRouter({ authenticate: 'none' });
  router.on('transfer', listener);
  await overHttp(
    'fetchHandler × bare web handler, same Request/Response adapter',
    ['bare web handler (adapter)', getRequestListener(bareFetch)],
    ['fetchHandler (adapter)', getRequestListener(router.fetchHandler)],
  );
}

export async function callbacks(): Promise<void> {
  await fetchHandlers();
  await nodeHandlers();
  await memory();
}

export async function memory(): Promise<void> {
  const fresh = sdk.createCallbackRouter({ authenticate: 'none' });
  fresh.on('transfer', () => {});
  const before = heapMb();
  const marks: string[][] = [];
  for (let i = 0; i < 1_000_000; i++) {
    const id = i % 100_000;
    await fresh.dispatch(body(id, PATH[Math.floor(i / 100_000) % PATH.length]!));
    if ((i + 1) % 250_000 === 0)
      marks.push([`after ${(i + 1).toLocaleString('en')}`, fixed(heapMb() - before, 1)]);
  }
  table(
    'Memory, default store, 1,000,000 callbacks over 100,000 transfers',
    ['callbacks', 'heap growth MB'],
    marks,
  );
}
