import { readFile } from 'node:fs/promises';
import {
  API_PREFIX,
  ArgumentError,
  BatchVerificationError,
  type BridgeBatchView,
  type BridgeConstructResult,
  type BridgeRoute,
  describeBridgeBatch,
  signBridgeBatch,
  type VerifiedBridgeBatch,
  verifyBridgeBatch,
} from '../index.js';
import { EXIT, help, type Io, keyFromEnv, line, parseCommandLine, toJson, UsageError } from './common.js';
import { clientFromEnv, ENV_HELP } from './ops.js';

/*
 * The bridge flow for a team whose backend is not JavaScript: `verify` checks a saved construct
 * result offline, `sign` verifies and signs it with a key from the environment, and `send` submits
 * what `sign` printed. The verifier and signer are the SDK's own (verifyBridgeBatch,
 * signBridgeBatch): a batch the CLI signs is one the SDK would sign.
 */

const BATCH_OPTIONS = `  --wallet      the user's wallet (the signer's address): the batch's sender, depositor and recipient
  --amount A    the amount construct was asked for, in token units (e.g. 25.5)
  --max-amount  construct was asked for the whole balance (maxAmount: true) instead
                One of --amount and --max-amount is required: without the amount meant, a batch
                for any amount would pass.
  --locale L    the locale of the description's numbers and dates (default en-US), e.g. de-DE
  --time-zone Z the time zone of its times (default UTC), e.g. Europe/Berlin`;

export const VERIFY_USAGE = `usage: partner-s2s-sdk verify <construct.json> --route <route.json> [--wallet 0x…]
                              (--amount A | --max-amount) [--now TIME] [--json]

Verifies a saved construct result against the route as you read it, offline. construct.json holds
the answer of POST /api/v1/s2s/bridge/construct/transaction/batch as the service sent it
({"data": …}), or what bridge.construct() returned; route.json the answer of GET
/api/v1/s2s/bridge/routes ({"data": […]}: the construct result's route is taken from it), the
output of routes --json, or one route. Prints what the batch does, one fact a line, its warnings
and the digests a signer receives (exit 0), or every issue (exit 1).
${BATCH_OPTIONS}
                Without --wallet, the batch's own sender is assumed (weaker: it says so).
  --now TIME    check expiry as of this ISO 8601 time (e.g. 2025-01-31T12:00:00Z), for a fixture
                saved earlier; default: now`;

export const SIGN_USAGE = `usage: partner-s2s-sdk sign <construct.json> --route <route.json> --wallet 0x…
                            (--amount A | --max-amount) --key-env VAR [--json]

Verifies a saved construct result as verify does (the same files), writes what it does on stderr
(as verify prints it), then signs it with the private key held in the environment variable VAR
(never printed; never give a key as a flag), and prints one JSON object on stdout, with or
without --json:
  {"signature":"0xff00…","authorization":{"r":"0x…","s":"0x…","yParity":0}}
authorization is null when the bundle asks for none (the wallet is already delegated). What does
not verify is not signed: nothing on stdout, the issues on stderr, exit 1.
${BATCH_OPTIONS}
  --key-env VAR the name of the environment variable holding the wallet's 32-byte hex private key

Then: partner-s2s-sdk send --user USER --intent INTENT --signed signed.json (or --signed - to pipe).`;

export const SEND_USAGE = `usage: partner-s2s-sdk send --user USER --intent INTENT --signed <file|-> [--json]

Submits a signed batch: the JSON object that "partner-s2s-sdk sign" printed, read from a file, or
from stdin with --signed -. Prints the transfer id (--json: {"transferId","userOpHash"}).
  --intent   the intentId of the construct result that was signed

${ENV_HELP}`;

/** What `-` may bring on stdin: a signed batch is a few hundred bytes. */
const MAX_STDIN_BYTES = 1 << 20;
/** An ISO 8601 time with its offset: a time without one would be read in the machine's zone. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

async function readStdin(io: Io): Promise<string> {
  if (!io.stdin) throw new UsageError('no standard input to read - from');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of io.stdin) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk);
    size += bytes.length;
    if (size > MAX_STDIN_BYTES) throw new UsageError(`standard input is over ${MAX_STDIN_BYTES} bytes`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A JSON file, or stdin for `-`; what cannot be read or parsed is a usage error naming it. */
export async function readJson(path: string, what: string, io: Io): Promise<unknown> {
  let text: string;
  const name = path === '-' ? 'on standard input' : path;
  if (path === '-') {
    text = await readStdin(io);
  } else {
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new UsageError(
        `cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`the ${what} ${name} is not JSON`);
  }
}

const BATCH_FLAGS = {
  route: { type: 'string' },
  wallet: { type: 'string' },
  amount: { type: 'string' },
  'max-amount': { type: 'boolean' },
  locale: { type: 'string' },
  'time-zone': { type: 'string' },
  json: { type: 'boolean' },
} as const;

interface BatchFlags {
  locale?: string | undefined;
  'time-zone'?: string | undefined;
  route?: string | undefined;
  wallet?: string | undefined;
  amount?: string | undefined;
  'max-amount'?: boolean | undefined;
}

/**
 * What a saved file holds, as the SDK returns it: the service's answer `{"data": …}`, saved as a
 * client in another language received it, is read as its `data`. A construct result or a route has
 * no `data` field of its own.
 */
export function payloadOf(saved: unknown): unknown {
  return typeof saved === 'object' && saved !== null && !Array.isArray(saved) && 'data' in saved
    ? (saved as { data: unknown }).data
    : saved;
}

/**
 * The route a route file names for `construct`: the file holds one route, or a list of them (the
 * routes answer as sent, or `routes --json`), of which the one the construct result was built on.
 */
function routeFor(saved: unknown, construct: unknown, path: string): unknown {
  const routes = payloadOf(saved);
  if (!Array.isArray(routes)) return routes;
  const routeId = (construct as { quote?: { routeId?: unknown } } | null)?.quote?.routeId;
  if (typeof routeId !== 'string')
    throw new UsageError(
      line`${path} holds a list of routes, and the construct result names no quote.routeId to choose one by`,
    );
  const route = routes.find((candidate) => (candidate as { routeId?: unknown } | null)?.routeId === routeId);
  if (route === undefined) throw new UsageError(line`${path} holds no route ${routeId}`);
  return route;
}

/** The construct result, route and amount a command line names; the wallet as given, if given. */
async function readBatch(values: BatchFlags, positionals: string[], io: Io) {
  if (positionals.length !== 1) throw new UsageError('give exactly one construct.json');
  if (!values.route) throw new UsageError('--route is required');
  if (values.amount !== undefined && values['max-amount'])
    throw new UsageError('give --amount or --max-amount, not both');
  // Without the amount the batch is checked against itself only: a batch for any amount passes.
  if (values.amount === undefined && !values['max-amount']) {
    throw new UsageError(
      '--amount or --max-amount is required: the amount construct was asked for, or --max-amount for a maxAmount construct',
    );
  }
  const construct = payloadOf(await readJson(positionals[0]!, 'construct result', io));
  const route = routeFor(await readJson(values.route, 'route', io), construct, values.route);
  return {
    construct: construct as BridgeConstructResult,
    route: route as BridgeRoute,
    ...(values.amount !== undefined ? { amount: values.amount } : {}),
  };
}

/** The files a batch was read from, for the hints of a refusal. */
interface BatchFiles {
  construct: string;
  route: string;
}

const fileName = (path: string) => (path === '-' ? 'standard input' : path);

/** Every issue of a refused batch, on stderr, and what a file should hold when it holds something else. */
function printIssues(io: Io, error: BatchVerificationError, files: BatchFiles): void {
  io.err(`verification failed: ${error.issues.length} issue(s)`);
  for (const issue of error.issues) {
    const detail =
      issue.expected !== undefined ? line` (expected ${issue.expected}, got ${issue.actual})` : '';
    io.err(`${line`  ${issue.check}: ${issue.message}`}${detail}`);
  }
  const checks = new Set(error.issues.map((issue) => issue.check));
  if (checks.has('shape.construct'))
    io.err(
      line`hint: ${fileName(files.construct)} should hold the answer of POST ${API_PREFIX}/bridge/construct/transaction/batch, as the service sent it ({"data": …}) or as bridge.construct() returned it`,
    );
  if (checks.has('shape.route'))
    io.err(
      line`hint: ${fileName(files.route)} should hold the answer of GET ${API_PREFIX}/bridge/routes ({"data": […]}), the output of routes --json, or one route of them`,
    );
}

/**
 * What the batch does, as `describeBridgeBatch` words it, in the locale and zone the flags name; a
 * locale or zone the runtime does not know is a usage error, before anything is signed.
 */
function describeFor(verified: VerifiedBridgeBatch, values: BatchFlags, now?: Date): BridgeBatchView {
  try {
    return describeBridgeBatch(verified, {
      ...(values.locale !== undefined ? { locale: values.locale } : {}),
      ...(values['time-zone'] !== undefined ? { timeZone: values['time-zone'] } : {}),
      ...(now ? { now } : {}),
    });
  } catch (error) {
    if (!(error instanceof ArgumentError)) throw error;
    const problem = error.issues.find((issue) => issue.path !== 'now') ?? error.issues[0];
    throw new UsageError(
      line`--${problem?.path === 'timeZone' ? 'time-zone' : 'locale'}: ${problem?.message}`,
    );
  }
}

/** The description, then the digests in full: what an approver compares with a signer's screen. */
function printDescription(write: (text: string) => void, view: BridgeBatchView): void {
  write(line`${view.title}`);
  for (const fact of view.lines) write(line`  ${fact}`);
  for (const warning of view.warnings) write(line`  warning ${warning.code}: ${warning.text}`);
  const { binding } = view;
  write(line`  userOpHash         ${binding.userOpHash}`);
  write(line`  erc191Digest       ${binding.erc191Digest}`);
  if (binding.authorizationHash) write(line`  authorizationHash  ${binding.authorizationHash}`);
  write(line`  bundleDigest       ${binding.bundleDigest}`);
  write(line`  summaryDigest      ${binding.summaryDigest}`);
}

/** `verify`: offline, against the route as read and the wallet and amount meant. */
export async function verify(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandLine(args, { ...BATCH_FLAGS, now: { type: 'string' } }, true);
  if (values.help) return help(io, VERIFY_USAGE);
  const batch = await readBatch(values, positionals, io);
  let now: Date | undefined;
  if (values.now !== undefined) {
    now = new Date(values.now);
    if (!ISO_TIME.test(values.now) || Number.isNaN(now.getTime()))
      throw new UsageError('--now must be an ISO 8601 time with its offset, e.g. 2025-01-31T12:00:00Z');
  }
  let wallet = values.wallet;
  if (wallet === undefined) {
    // Without the signer's address the batch can only be checked against itself: say so.
    const sender = (batch.construct as { bundle?: { userOp?: { sender?: unknown } } })?.bundle?.userOp
      ?.sender;
    if (typeof sender !== 'string') throw new UsageError('--wallet is required: the batch names no sender');
    wallet = sender;
    io.err(line`note: no --wallet given; checking against the batch's own sender ${sender}`);
  }
  try {
    const verified = verifyBridgeBatch({ ...batch, wallet, ...(now ? { now } : {}) });
    const view = describeFor(verified, values, now);
    if (values.json) io.out(toJson({ ok: true, summary: verified, description: view }));
    else printDescription(io.out, view);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof BatchVerificationError)) throw error;
    if (values.json) io.out(toJson({ ok: false, issues: error.issues }));
    else printIssues(io, error, { construct: positionals[0]!, route: values.route! });
    return EXIT.failed;
  }
}

/**
 * `sign`: verifies, then signs with viem's `privateKeyToAccount` on the key the environment holds.
 * Prints one JSON object whatever `--json` says, as its output is meant for `send` and for programs.
 */
export async function sign(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandLine(
    args,
    { ...BATCH_FLAGS, 'key-env': { type: 'string' } },
    true,
  );
  if (values.help) return help(io, SIGN_USAGE);
  const batch = await readBatch(values, positionals, io);
  if (!values.wallet) throw new UsageError('--wallet is required: the address the key signs for');
  // Checked before it is shown in a message: a key given there is refused, not echoed.
  if (!ADDRESS.test(values.wallet)) throw new UsageError('--wallet must be an address: 0x and 40 hex digits');
  const keyEnv = values['key-env'];
  if (!keyEnv) throw new UsageError('--key-env is required: the name of the variable holding the key');
  const key = keyFromEnv('key-env', keyEnv, io, "the wallet's");
  // Loaded here only: the other commands start without viem's accounts.
  const { privateKeyToAccount } = await import('viem/accounts');
  let account: ReturnType<typeof privateKeyToAccount>;
  try {
    account = privateKeyToAccount(key);
  } catch {
    // The value is never shown: a secret pasted into the wrong variable must not reach a log.
    throw new UsageError(line`${keyEnv} does not hold a 32-byte hex private key`);
  }
  if (account.address.toLowerCase() !== values.wallet.toLowerCase()) {
    io.err(
      line`the key in ${keyEnv} is for ${account.address}, not for --wallet ${values.wallet}: nothing signed`,
    );
    return EXIT.failed;
  }
  try {
    const verified = verifyBridgeBatch({ ...batch, wallet: values.wallet });
    // On stderr: stdout is the one JSON object `send` reads.
    printDescription(io.err, describeFor(verified, values));
    const signed = await signBridgeBatch({ verified, signer: account });
    io.out(toJson({ signature: signed.signature, authorization: signed.authorization ?? null }));
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof BatchVerificationError)) throw error;
    printIssues(io, error, { construct: positionals[0]!, route: values.route! });
    return EXIT.failed;
  }
}

/** `send`: submits what `sign` printed, with the credential in the environment. */
export async function send(args: string[], io: Io): Promise<number> {
  const { values } = parseCommandLine(args, {
    user: { type: 'string' },
    intent: { type: 'string' },
    signed: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return help(io, SEND_USAGE);
  for (const flag of ['user', 'intent', 'signed'] as const)
    if (!values[flag]) throw new UsageError(`--${flag} is required`);
  const client = clientFromEnv(io);
  const signed = await readJson(values.signed!, 'signed batch', io);
  const { signature, authorization } = (signed ?? {}) as { signature?: unknown; authorization?: unknown };
  if (typeof signed !== 'object' || signed === null || typeof signature !== 'string')
    throw new UsageError('the signed batch is not what sign printed: it has no signature');
  const result = await client.bridge.send({
    userId: values.user!,
    intentId: values.intent!,
    signature: signature as `0x${string}`,
    // null: the bundle asked for none, and the service wants the field left out then.
    ...(authorization !== null && authorization !== undefined
      ? { authorization: authorization as never }
      : {}),
  });
  io.out(values.json ? toJson(result) : line`${result.transferId}`);
  return EXIT.ok;
}
