import { ArgumentError } from '../index.js';
import { createPartnerSimulator, type SimulatorOptions } from '../testing/index.js';
import { type Io, integerFlag, keyFromEnv, parseCommandLine, UsageError } from './common.js';

export const SIMULATE_USAGE = `usage: partner-s2s-sdk simulate [options]

Starts the Partner Service Interface simulator over HTTP and runs until SIGINT or SIGTERM, or
until the process that started it (npx, a test harness) ends.
The partner API is under <baseUrl>, the admin API under <adminUrl>: docs/simulator.md, shipped
in the package (node_modules/partner-s2s-sdk/docs/simulator.md), describes both.

options:
  --port N                   port to listen on, 0 for any free one (default 4010)
  --host HOST                address to bind (default 127.0.0.1). Anyone who reaches the port
                             can administer the simulator (unless --admin-token is set): bind
                             another host only on purpose
  --auto-advance             move submitted transfers on by themselves
  --callback-url URL         POST every callback to URL
  --callback-header 'n: v'   send this header with each callback (repeatable)
  --callback-signing-secret S
                             sign each callback the Standard Webhooks way with S, a
                             whsec_<base64> secret (repeatable: one signature each, as
                             during a rotation); check it with standardWebhooks
  --seed N                   deterministic ids, demo credentials and wallet
  --admin-token TOKEN        every admin call must send Authorization: Bearer TOKEN
  --chain-rpc URL            be the bundler on the chain at URL (anvil, or anvil --fork-url
                             of Base): construct reads balances, delegation and nonces there,
                             a submit sends EntryPoint handleOps, its receipt moves the
                             transfer; the destination side stays simulated. Fund the demo
                             wallet on that chain (the admin API's fund is refused)
  --bundler-key-env VAR      with --chain-rpc: send handleOps from the key this environment
                             variable holds (default: the node's first unlocked account)
  --json                     print one line of JSON instead of text
  -h, --help                 this help`;

const LOOPBACK = '127.0.0.1';

/** `'name: value'` pairs as a header record; a pair without a colon is a usage error. */
function headerFlags(values: string[] | undefined): Record<string, string> | undefined {
  if (!values || values.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(':');
    if (colon <= 0)
      // Not echoed: the value is a secret the receiver checks (a token), colon or not.
      throw new UsageError(`--callback-header must be 'name: value' (what was given is not shown)`);
    headers[value.slice(0, colon).trim()] = value.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * Tells whoever runs the simulator, on stderr, each time a callback delivery fails: a receiver that
 * is down or refuses shows up at once, not only in `GET /__admin/v1/callbacks`.
 */
function reportFailedCallbacks(sim: ReturnType<typeof createPartnerSimulator>, io: Io) {
  const reported = new WeakMap<object, number>();
  const timer = setInterval(() => {
    for (const delivery of sim.callbackDeliveries) {
      if (delivery.lastError === null || reported.get(delivery) === delivery.attempts) continue;
      reported.set(delivery, delivery.attempts);
      const outcome = delivery.state === 'failed' ? 'gave up' : 'will retry';
      io.err(
        `callback ${delivery.status} of ${delivery.transferId} failed (try ${delivery.attempts}): ${delivery.lastError}; ${outcome}`,
      );
    }
  }, 250);
  // Watching must not keep the process alive once the server is closed.
  timer.unref();
  return timer;
}

/**
 * `--chain-rpc` and `--bundler-key-env` as the simulator's `chain` option, the node asked for its
 * chain id first: a URL where no node answers is one line and exit 1, not a server that fails its
 * first construct. Only the URL's origin is ever shown (a provider's path may hold an API key).
 */
async function chainFlags(rpcUrl: string | undefined, keyEnv: string | undefined, io: Io) {
  if (rpcUrl === undefined) {
    if (keyEnv !== undefined) throw new UsageError('--bundler-key-env needs --chain-rpc');
    return undefined;
  }
  let where: string;
  try {
    const url = new URL(rpcUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    where = url.origin;
  } catch {
    throw new UsageError(
      '--chain-rpc must be the http(s) URL of a JSON-RPC node (what was given is not shown)',
    );
  }
  const bundlerPrivateKey =
    keyEnv === undefined ? undefined : keyFromEnv('bundler-key-env', keyEnv, io, 'the bundler');
  let chainId: number;
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(10_000),
    });
    const answer = (await response.json()) as { result?: unknown };
    if (typeof answer.result !== 'string') throw new Error(`HTTP ${response.status}, no chain id`);
    chainId = Number.parseInt(answer.result, 16);
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } }).cause?.code;
    const reason = typeof cause === 'string' ? cause : error instanceof Error ? error.message : String(error);
    throw new ChainUnreachable(`no JSON-RPC node answered eth_chainId at ${where}: ${reason}`);
  }
  return {
    chainId,
    where,
    options: { rpcUrl, ...(bundlerPrivateKey ? { bundlerPrivateKey } : {}) },
  };
}

/** The node of --chain-rpc did not answer: exit 1 with one line, no usage. */
class ChainUnreachable extends Error {
  override name = 'ChainUnreachable';
}

/** How often the parent is looked for: well inside the 2 s a harness may wait for the port. */
const PARENT_POLL_MS = 250;

/**
 * Calls `stop` once the process that started this one is gone. `npx` runs the bin through a shell
 * that dies of a SIGTERM without passing it on, and a harness that kills its launcher with SIGKILL
 * passes nothing on at all: either way the simulator, orphaned, would keep its port. An orphan is
 * re-parented (to init or a subreaper), so a changed `process.ppid` means the parent went away;
 * reading it is a field read, cheap enough to poll. `parent` is read before the simulator says it
 * is listening: a harness may kill the launcher as soon as it reads that line.
 */
function watchParent(parent: number, stop: () => void): NodeJS.Timeout {
  const timer = setInterval(() => {
    if (process.ppid !== parent) stop();
  }, PARENT_POLL_MS);
  // Watching must not keep the process alive once the server is closed.
  timer.unref();
  return timer;
}

/**
 * `simulate`: serves a simulator until a signal, then closes the server and the simulator's timers
 * so that the process ends by itself with exit code 0. Resolves once the server is listening, with
 * a promise of the exit code.
 */
export async function simulate(args: string[], io: Io): Promise<number> {
  const parent = process.ppid;
  const { values } = parseCommandLine(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'auto-advance': { type: 'boolean' },
    'callback-url': { type: 'string' },
    'callback-header': { type: 'string', multiple: true },
    'callback-signing-secret': { type: 'string', multiple: true },
    seed: { type: 'string' },
    'admin-token': { type: 'string' },
    'chain-rpc': { type: 'string' },
    'bundler-key-env': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.out(SIMULATE_USAGE);
    return 0;
  }
  const port = integerFlag('port', values.port, 0, 65_535) ?? 4010;
  const seed = integerFlag('seed', values.seed, 0, Number.MAX_SAFE_INTEGER);
  // The default is loopback only; any other address is bound solely because --host named it.
  const host = values.host ?? LOOPBACK;
  const callbackHeaders = headerFlags(values['callback-header']);
  const signingSecrets = values['callback-signing-secret'];
  const chain = await chainFlags(values['chain-rpc'], values['bundler-key-env'], io);
  const options: SimulatorOptions = {
    ...(values['auto-advance'] ? { autoAdvance: true } : {}),
    ...(values['callback-url'] ? { callbacks: values['callback-url'] } : {}),
    ...(callbackHeaders ? { callbackHeaders } : {}),
    ...(signingSecrets?.length ? { callbackSigning: { secrets: signingSecrets } } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(values['admin-token'] !== undefined ? { adminToken: values['admin-token'] } : {}),
    ...(chain ? { chain: chain.options } : {}),
  };
  let sim: ReturnType<typeof createPartnerSimulator>;
  try {
    sim = createPartnerSimulator(options);
  } catch (error) {
    // The options came from the command line: a value the simulator refuses is a usage error.
    if (error instanceof ArgumentError) throw new UsageError(error.message);
    throw error;
  }
  const server = await sim.listen(port, host);
  const info = {
    baseUrl: server.url,
    adminUrl: `${server.url}${sim.adminPath}`,
    organisationId: sim.demo.organisationId,
    clientId: sim.demo.credentials.clientId,
    clientSecret: sim.demo.credentials.clientSecret,
    userId: sim.demo.userId,
    wallet: sim.demo.wallet,
    ...(chain ? { chain: { chainId: chain.chainId, rpc: chain.where } } : {}),
  };
  if (values.json) {
    io.out(JSON.stringify(info));
  } else {
    io.out(`Partner simulator listening on ${info.baseUrl}
  admin API      ${info.adminUrl}${values['admin-token'] === undefined ? '' : '   (Authorization: Bearer <--admin-token>)'}
  organisation   ${info.organisationId}
  client id      ${info.clientId}
  client secret  ${info.clientSecret}
  user           ${info.userId}
  wallet         ${info.wallet.address}
  private key    ${info.wallet.privateKey}   (a test key: never fund it on a real chain)${
    chain
      ? `
  chain          ${chain.chainId} at ${chain.where}: handleOps goes there; fund the wallet on that local or forked chain`
      : ''
  }
Stop with Ctrl-C.`);
  }
  const watch = reportFailedCallbacks(sim, io);
  return new Promise<number>((resolve) => {
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      clearInterval(watch);
      clearInterval(orphaned);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      sim.close();
      void server.close().then(() => resolve(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    const orphaned = watchParent(parent, stop);
  });
}
