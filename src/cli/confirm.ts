import {
  type BridgeConstructResult,
  confirmUserOperation,
  type UserOperationConfirmation,
} from '../index.js';
import { payloadOf, readJson } from './batch.js';
import { EXIT, help, type Io, line, parseCommandLine, toJson, UsageError } from './common.js';

/*
 * `confirm`: what the chain says of a saved construct result's user operation, read from the
 * EntryPoint through an RPC the operator names (the SDK's confirmUserOperation).
 */

export const CONFIRM_USAGE = `usage: partner-s2s-sdk confirm --rpc <url> [--from-block N] [--json] <construct.json>

Asks the source chain what became of a saved construct result's user operation (its EntryPoint,
userOpHash, sender and nonce), through the JSON-RPC node at --rpc (an http(s) URL: the SDK's
confirmUserOperation). Prints the status first on one line, exit 0:
  included     in a block: success or reverted, the transaction, the gas cost (revert reason too)
  superseded   another operation used its nonce: it can never execute, a rebuild is safe
  pending      its nonce is not used yet: it may still land
  unknown      its nonce is used, and no event was found as far back as the search went
--json prints the answer as JSON (numbers as decimal strings). A bad URL, a node that cannot be
reached or answers nonsense: one line on stderr, exit 1.
  --rpc URL       the source chain's JSON-RPC URL (its path and query are never printed)
  --from-block N  a block at or before the submit: the search goes back to it (without it, over
                  the last DEFAULTS.confirm.lookBackBlocks blocks, and a used nonce is unknown)`;

/** The one line that says what the chain said. */
function describe(answer: UserOperationConfirmation): string {
  switch (answer.status) {
    case 'included': {
      const outcome = answer.success ? 'success' : 'reverted (its calls failed: nothing moved)';
      const reason = answer.revertReason ? `, revert reason ${answer.revertReason}` : '';
      return line`included: ${outcome}, block ${answer.blockNumber}, transaction ${answer.transactionHash}, gas cost ${answer.actualGasCost} wei${reason}`;
    }
    case 'superseded':
      return line`superseded: another operation used its nonce (the sender's nonce is now ${answer.currentNonce}); a rebuild is safe`;
    case 'pending':
      return line`pending: its nonce is not used yet (the sender's nonce is ${answer.currentNonce}); it may still land`;
    default:
      return line`${answer.status}: its nonce is used (now ${answer.currentNonce}) and no event was found back to where the search went; give --from-block`;
  }
}

/** The RPC URL's problem, never quoting it: its path and query often hold an API key. */
function urlProblem(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : 'must be an http(s) URL';
  } catch {
    return 'must be an http(s) URL';
  }
}

/** `confirm`: one status line (or JSON) on stdout; any failure one line on stderr. */
export async function confirm(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandLine(
    args,
    { rpc: { type: 'string' }, 'from-block': { type: 'string' }, json: { type: 'boolean' } },
    true,
  );
  if (values.help) return help(io, CONFIRM_USAGE);
  if (positionals.length !== 1) throw new UsageError('give exactly one construct.json');
  if (values.rpc === undefined) throw new UsageError("--rpc is required: the source chain's JSON-RPC URL");
  const problem = urlProblem(values.rpc);
  if (problem) {
    io.err(`error: --rpc ${problem}`);
    return EXIT.failed;
  }
  const fromBlock = values['from-block'];
  if (fromBlock !== undefined && !/^(\d+|0x[0-9a-fA-F]+)$/.test(fromBlock))
    throw new UsageError('--from-block must be a block number (decimal or 0x hex)');
  const construct = payloadOf(await readJson(positionals[0]!, 'construct result', io)) as
    | Partial<BridgeConstructResult>
    | undefined;
  const bundle = construct?.bundle;
  try {
    const answer = await confirmUserOperation({
      rpc: values.rpc,
      entryPoint: bundle?.entryPoint as string,
      userOpHash: bundle?.userOpHash as string,
      sender: bundle?.userOp?.sender as string,
      nonce: bundle?.userOp?.nonce as string,
      ...(fromBlock === undefined ? {} : { fromBlock }),
    });
    io.out(values.json ? toJson(answer) : describe(answer));
    return EXIT.ok;
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    const message = error instanceof Error ? error.message : String(error);
    io.err(line`error: ${name}: ${message}`);
    return EXIT.failed;
  }
}
