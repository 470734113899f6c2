import { VERSION } from '../index.js';
import { SEND_USAGE, SIGN_USAGE, send, sign, VERIFY_USAGE, verify } from './batch.js';
import { EXIT, type Io, report, terminalIo, UsageError } from './common.js';
import { CONFIRM_USAGE, confirm } from './confirm.js';
import { OPENAPI_USAGE, openapi } from './openapi.js';
import { ROUTES_USAGE, routes, TOKEN_USAGE, TRANSFERS_USAGE, token, transfers } from './ops.js';
import { SIMULATE_USAGE, simulate } from './simulate.js';

/*
 * The `partner-s2s-sdk` command: a stand-alone simulator for partners whose tests are not written
 * in JavaScript, and a few operator commands over the public SDK. Built on node:util's parseArgs.
 */

const COMMANDS: Record<string, { run: (args: string[], io: Io) => Promise<number>; usage: string }> = {
  simulate: { run: simulate, usage: SIMULATE_USAGE },
  token: { run: token, usage: TOKEN_USAGE },
  routes: { run: routes, usage: ROUTES_USAGE },
  transfers: { run: transfers, usage: TRANSFERS_USAGE },
  verify: { run: verify, usage: VERIFY_USAGE },
  sign: { run: sign, usage: SIGN_USAGE },
  send: { run: send, usage: SEND_USAGE },
  confirm: { run: confirm, usage: CONFIRM_USAGE },
  openapi: { run: openapi, usage: OPENAPI_USAGE },
};

export const USAGE = `usage: partner-s2s-sdk <command> [options]

commands:
  simulate     run the simulator over HTTP, with its admin API; its amounts (fund,
               balance) are base units, as strings of digits
  token        the scopes and expiry of a token for the credential in the environment
  routes       the bridge routes, one line each
  transfers    list a user's transfers, or get one
  verify       verify a saved construct result against a route, offline
  sign         verify a saved construct result, then sign it with a key from the environment
  send         submit what sign printed; prints the transfer id
  confirm      ask the source chain what became of a saved construct result's user operation
  openapi      print the OpenAPI 3.1 document of the interface (as partner-s2s-sdk/openapi.json)

Run "partner-s2s-sdk <command> --help" for a command's options, "partner-s2s-sdk --version"
for the version. Documentation ships in the package, under node_modules/partner-s2s-sdk/:
  docs/cli.md        these commands
  docs/simulator.md  simulate: the simulator as a server, and its admin API
  README.md          the SDK, and the other guides in docs/
exit codes: 0 ok, 1 verification failed or the service refused, 2 usage error`;

/**
 * Runs one command line and resolves with its exit code; never exits the process itself, so that
 * a signal-driven `simulate` can finish closing first.
 *
 * @example
 * const code = await main(['routes', '--json'], { out: console.log, err: console.error, env: process.env });
 */
export async function main(argv: string[], streams: Io): Promise<number> {
  const io = terminalIo(streams, argv);
  const [name, ...args] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    io.out(VERSION);
    return EXIT.ok;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.err : io.out)(USAGE);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`error: unknown command ${JSON.stringify(name)}`);
    io.err(USAGE);
    return EXIT.usage;
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    return report(io, error, error instanceof UsageError ? command.usage : undefined);
  }
}
