/**
 * 10,000 concurrent calls on a cold client against a local node:http service, next to the same
 * 10,000 calls made with bare ky + zod: how many token requests the SDK makes (one), and the
 * memory each holds while all 10,000 are in flight. A third contender, bare ky + zod whose fetch
 * gets an abort signal per call and nothing more, shows the least that any client of ky holds when
 * its timeout ends the fetch (the SDK's `timeoutMs` does).
 *
 * The service runs in this process and each client in a fresh child process of its own (with
 * --expose-gc), so that neither the server's sockets nor the other contender weigh on a figure.
 * The service holds every answer until all 10,000 requests have arrived; the child then collects
 * garbage and reads its heap (V8 heap and external memory) against the same reading taken before
 * the first call: what 10,000 calls in flight keep alive. Its peak RSS growth over the whole burst
 * is printed beside it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { route } from '../fixtures/wire.js';
import { median, table, verdict } from './lib.js';

const CALLS = 10_000;
const RUNS = 3;
const TOKEN = JSON.stringify({
  access_token: 'burst-token',
  token_type: 'Bearer',
  expires_in: 3600,
  scope: 'bridge:read',
});
const ROUTES = JSON.stringify({ data: [route()] });

type Kind = 'ky + zod' | 'ky + zod, abortable' | 'partner-s2s-sdk';
interface Reading {
  heapBytes: number;
  peakRssBytes: number;
  inFlight: number;
  tokenRequests: number;
}
type ChildMessage = { heapBytes: number } | { peakRssBytes: number; results: number };

const memory = () => {
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
};
const collect = () => (globalThis as { gc?: () => void }).gc!();

/** In the child: the client of one kind, 10,000 calls at once, the readings sent to the parent. */
async function child(kind: Kind, base: string): Promise<void> {
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') throw new Error('run with --expose-gc');
  let call: () => Promise<unknown>;
  if (kind === 'partner-s2s-sdk') {
    const { sdk } = await import('./sdk.js');
    const client = new sdk.PartnerClient({ baseUrl: base, clientId: 'burst', clientSecret: 'burst' });
    call = () => client.bridge.routes();
  } else {
    const { default: ky } = await import('ky');
    const { routesSchema } = await import('./schemas.js');
    const headers = { authorization: 'Bearer burst-token', accept: 'application/json' };
    if (kind === 'ky + zod') {
      const api = ky.create({ prefix: `${base}/api/v1/s2s`, retry: 0, timeout: false });
      call = async () => routesSchema.parse(await api.get('bridge/routes', { headers }).json());
    } else {
      // The least a ky client holds to end an attempt's fetch on time: an abort signal of its own
      // per call, handed to fetch through an option ky forwards (ky's `signal` option would join it
      // to ky's own with `AbortSignal.any`, and ky's `timeout` holds a timer and a race per call).
      // No timer at all: this is a floor, not a client.
      type Forwarded = { attemptSignal: AbortSignal };
      const api = ky.create({
        prefix: `${base}/api/v1/s2s`,
        retry: 0,
        timeout: false,
        fetch: ((request: Request, options: Forwarded) =>
          globalThis.fetch(request, { signal: options.attemptSignal })) as typeof fetch,
      });
      call = async () => {
        const attemptSignal = new AbortController().signal;
        const options = { headers, attemptSignal } as Forwarded & { headers: typeof headers };
        return routesSchema.parse(await api.get('bridge/routes', options).json());
      };
    }
  }
  collect();
  const before = memory();
  const rssBefore = process.memoryUsage().rss;
  process.on('message', (message) => {
    if (message !== 'in flight') return;
    collect();
    process.send!({ heapBytes: memory() - before } satisfies ChildMessage);
  });
  const results = await Promise.all(Array.from({ length: CALLS }, () => call()));
  const peakRssBytes = process.resourceUsage().maxRSS * 1024 - rssBefore;
  process.send!({ peakRssBytes, results: results.length } satisfies ChildMessage);
  process.disconnect();
}

/** The service: a token on demand, and the routes once all the burst's requests are in. */
async function service() {
  let held: ServerResponse[] = [];
  let tokenRequests = 0;
  let onAllIn: (() => void) | undefined;
  let idle: NodeJS.Timeout | undefined;
  const answer = (res: ServerResponse, body: string) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/auth/token')) {
        tokenRequests++;
        answer(res, TOKEN);
        return;
      }
      held.push(res);
      clearTimeout(idle);
      // A client that keeps fewer than 10,000 in flight is measured with what it has in flight.
      if (held.length >= CALLS) onAllIn?.();
      else idle = setTimeout(() => onAllIn?.(), 2000);
    });
  });
  server.maxRequestsPerSocket = 0;
  await new Promise<void>((resolve) =>
    server.listen({ port: 0, host: '127.0.0.1', backlog: 65_535 }, resolve),
  );
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Resolves with the number of requests in flight once they are all in (or stop coming). */
    allIn: () =>
      new Promise<number>((resolve) => {
        onAllIn = () => {
          onAllIn = undefined;
          clearTimeout(idle);
          resolve(held.length);
        };
      }),
    release: () => {
      for (const res of held) answer(res, ROUTES);
      held = [];
    },
    tokenRequests: () => tokenRequests,
    reset: () => {
      tokenRequests = 0;
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

async function run(kind: Kind, svc: Awaited<ReturnType<typeof service>>): Promise<Reading> {
  svc.reset();
  const proc: ChildProcess = fork(import.meta.filename, ['--child', kind, svc.base], {
    execArgv: [...process.execArgv.filter((arg) => arg !== '--expose-gc'), '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: ChildMessage[] = [];
  const finished = new Promise<void>((resolve, reject) => {
    proc.on('message', (message: ChildMessage) => {
      messages.push(message);
      if ('peakRssBytes' in message) resolve();
    });
    proc.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${kind} child exited ${code}`))));
  });
  const inFlight = await svc.allIn();
  const heap = new Promise<number>((resolve) =>
    proc.on('message', (message: ChildMessage) => {
      if ('heapBytes' in message) resolve(message.heapBytes);
    }),
  );
  proc.send('in flight');
  const heapBytes = await heap;
  svc.release();
  await finished;
  const end = messages.find((message) => 'peakRssBytes' in message) as
    | { peakRssBytes: number; results: number }
    | undefined;
  if (end?.results !== CALLS) throw new Error(`${kind}: ${end?.results} of ${CALLS} calls answered`);
  return { heapBytes, peakRssBytes: end.peakRssBytes, inFlight, tokenRequests: svc.tokenRequests() };
}

export async function burst(): Promise<void> {
  const svc = await service();
  const readings = new Map<Kind, Reading[]>([
    ['ky + zod', []],
    ['ky + zod, abortable', []],
    ['partner-s2s-sdk', []],
  ]);
  try {
    for (let r = 0; r < RUNS; r++) {
      // Rotate which goes first, so that none always meets a warmer machine.
      const kinds = [...readings.keys()];
      const order = [...kinds.slice(r % kinds.length), ...kinds.slice(0, r % kinds.length)];
      for (const kind of order) readings.get(kind)!.push(await run(kind, svc));
    }
  } finally {
    svc.close();
  }
  const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1);
  const heapOf = (kind: Kind) => median(readings.get(kind)!.map((r) => r.heapBytes));
  table(
    `${CALLS.toLocaleString('en')} concurrent calls on a cold client, GET /bridge/routes over loopback HTTP (median of ${RUNS} runs, each in a fresh process)`,
    ['client', 'in flight', 'token requests', 'heap in flight MB', 'each run', 'peak RSS growth MB'],
    [...readings].map(([kind, runs]) => [
      kind,
      Math.min(...runs.map((r) => r.inFlight)).toLocaleString('en'),
      kind === 'partner-s2s-sdk' ? runs.map((r) => r.tokenRequests).join(', ') : '— (fixed token)',
      mb(heapOf(kind)),
      runs.map((r) => mb(r.heapBytes)).join(', '),
      mb(median(runs.map((r) => r.peakRssBytes))),
    ]),
  );
  const sdkRuns = readings.get('partner-s2s-sdk')!;
  verdict(
    `${CALLS.toLocaleString('en')} concurrent cold calls, token requests`,
    sdkRuns.map((r) => r.tokenRequests).join(', '),
    'exactly 1 in every run',
    sdkRuns.every((r) => r.tokenRequests === 1),
  );
  const ratio = heapOf('partner-s2s-sdk') / heapOf('ky + zod');
  verdict(
    `${CALLS.toLocaleString('en')} concurrent cold calls, heap in flight × bare ky + zod`,
    `${ratio.toFixed(2)}× (${mb(heapOf('partner-s2s-sdk'))} MB / ${mb(heapOf('ky + zod'))} MB)`,
    '≤ 1.25×',
    ratio <= 1.25,
  );
  // Not a target: what the row above measures against. Any client of ky whose timeout ends the
  // fetch holds at least the abortable contender's heap; the SDK's figure over that one is what its
  // own structure and its other promises (User-Agent, `.withResponse()`, events) hold.
  const floor = heapOf('ky + zod, abortable');
  console.log(
    `  ky + zod with an abort signal per call, × bare ky + zod: ${(floor / heapOf('ky + zod')).toFixed(3)}×; ` +
      `partner-s2s-sdk × that: ${(heapOf('partner-s2s-sdk') / floor).toFixed(3)}×`,
  );
}

if (process.argv[2] === '--child') await child(process.argv[3] as Kind, process.argv[4]!);
