// `confirmUserOperation`: what the chain says of one user operation, read from the EntryPoint (the
// sender's nonce first, then the `UserOperationEvent` logs for its hash, newest page first). The
// specification's errors rule 5: after an unclear submit, confirm on chain before rebuilding.
import * as z from 'zod';
import { durationMs, maxRetries, parseArgs, parseOptions } from '../core/args.js';
import { DEFAULTS } from '../core/defaults.js';
import { ArgumentError, ResponseValidationError } from '../errors/client-errors.js';
import {
  confirmationOf,
  decodeOperationLogs,
  getNonceCallData,
  logPages,
  nonceKey,
  type OperationFacts,
  operationLogFilter,
} from '../onchain/confirm.js';
import type { BridgeBundle } from '../schemas/bridge.js';
import { chainSchemas, type UserOperationConfirmation } from '../schemas/chain.js';
import { ADDRESS_PATTERN, HASH32_PATTERN } from '../schemas/common.js';
import type { Issue } from '../schemas/issues.js';
import { ChainReader, type ChainReadOptions, type ChainRpc, chainRpcSchema } from './rpc.js';

export type { ChainReadOptions, ChainRpc, Eip1193Provider } from './rpc.js';

/** A whole number as a bigint, a `0x` hex string, a decimal string, or a safe integer. */
export type Quantity = bigint | string | number;

/** What `confirmUserOperation` takes. */
export interface ConfirmUserOperationParams {
  /**
   * The source chain's node: an http(s) JSON-RPC URL, or an EIP-1193 provider (a viem client).
   * @example 'https://base-mainnet.g.alchemy.com/v2/<key>'
   */
  rpc: ChainRpc;
  /** The bundle's `entryPoint`. */
  entryPoint: string;
  /** The bundle's `userOpHash`. */
  userOpHash: string;
  /** `bundle.userOp.sender`: the user's wallet. */
  sender: string;
  /** `bundle.userOp.nonce`, the full value (`key << 64 | sequence`). */
  nonce: Quantity;
  /**
   * A block at or before the one the operation could first be included in (the latest block
   * before the submit). With it, a used nonce without an event back to here is `superseded`;
   * without it the search covers `DEFAULTS.confirm.lookBackBlocks` and such a nonce is `unknown`
   * (unless that reaches the chain's first block).
   */
  fromBlock?: Quantity | undefined;
}

/** The options of `confirmUserOperation` and `bridge.confirmOnChain`: each read's bounds. */
export type ConfirmOptions = ChainReadOptions;

const MAX_UINT256 = (1n << 256n) - 1n;

const quantitySchema = (what: string) =>
  z.union([z.bigint(), z.string(), z.number()]).transform((value, ctx) => {
    let parsed: bigint | undefined;
    if (typeof value === 'bigint') parsed = value;
    else if (typeof value === 'number') parsed = Number.isSafeInteger(value) ? BigInt(value) : undefined;
    else if (/^0x[0-9a-fA-F]{1,64}$/.test(value) || /^\d{1,78}$/.test(value)) parsed = BigInt(value);
    if (parsed === undefined || parsed < 0n || parsed > MAX_UINT256) {
      ctx.addIssue({ code: 'custom', message: `must be ${what}: a bigint, a 0x hex or decimal string` });
      return z.NEVER;
    }
    return parsed;
  });

const paramsSchema = z.lazy(() =>
  z.strictObject({
    rpc: chainRpcSchema,
    entryPoint: z.string().regex(ADDRESS_PATTERN, 'must be a 20-byte hex address'),
    userOpHash: z.string().regex(HASH32_PATTERN, 'must be a 32-byte hex hash'),
    sender: z.string().regex(ADDRESS_PATTERN, 'must be a 20-byte hex address'),
    nonce: quantitySchema('a non-negative whole number below 2^256'),
    fromBlock: quantitySchema('a block number').optional(),
  }),
);

const optionsSchema = z.lazy(() =>
  z.strictObject({
    signal: z
      .custom<AbortSignal>((value) => value instanceof AbortSignal, 'must be an AbortSignal')
      .optional(),
    timeoutMs: durationMs.optional(),
    maxRetries: maxRetries.optional(),
    maxRetryTimeMs: durationMs.optional(),
  }),
);

/** The arguments of a confirmation, checked: what `confirmChecked` reads with. */
export interface CheckedConfirmation extends OperationFacts {
  rpc: ChainRpc;
  fromBlock: bigint | undefined;
}

/**
 * What the chain says of a user operation: `included` (its `UserOperationEvent`: `success`, the
 * transaction, block and gas cost, and the raw `revertReason` when its calls reverted),
 * `superseded` (no event back to `fromBlock`, and the sender's nonce for its key is past it: it can
 * never execute), `pending` (its nonce is not used yet: it may still land) or `unknown` (the nonce is
 * used but the search did not reach back far enough: give `fromBlock`). Reads the nonce first, then
 * the logs, newest page first (`DEFAULTS.confirm.pageBlocks` blocks a page). Each read is bounded
 * and retried like the SDK's reads; what a node answers that is not an answer is a typed error.
 *
 * @example
 * import { confirmUserOperation } from 'partner-s2s-sdk';
 * const { bundle } = built; // a construct result
 * const onChain = await confirmUserOperation({
 *   rpc: process.env.BASE_RPC_URL!,
 *   entryPoint: bundle.entryPoint,
 *   userOpHash: bundle.userOpHash,
 *   sender: bundle.userOp.sender,
 *   nonce: bundle.userOp.nonce as string,
 *   fromBlock: blockBeforeSubmit,
 * }, { timeoutMs: 10_000 });
 * if (onChain.status === 'superseded') rebuild(); // this operation can never execute
 */
export async function confirmUserOperation(
  params: ConfirmUserOperationParams,
  options?: ConfirmOptions,
): Promise<UserOperationConfirmation> {
  const where = 'confirmUserOperation';
  const checked = checkConfirmation(params, where);
  return confirmChecked(checked, parseOptions(optionsSchema, options, where));
}

/** The arguments checked: every problem named at once, before any request. */
export function checkConfirmation(params: unknown, where: string): CheckedConfirmation {
  const { rpc, entryPoint, userOpHash, sender, nonce, fromBlock } = parseArgs(paramsSchema, params, where);
  return { rpc, entryPoint, userOpHash, sender, nonce, fromBlock };
}

/** `confirmUserOperation` on checked arguments and options. */
export async function confirmChecked(
  checked: CheckedConfirmation,
  options: ConfirmOptions | undefined,
): Promise<UserOperationConfirmation> {
  const reader = new ChainReader(checked.rpc, options);
  const schemas = chainSchemas();
  const read = async <T>(method: string, params: unknown[], schema: z.ZodType<T>): Promise<T> => {
    const result = await reader.read(method, params);
    const parsed = schema.safeParse(result);
    if (parsed.success) return parsed.data;
    // An empty call result is what a node answers when no contract is at the address.
    const message =
      method === 'eth_call' && result === '0x'
        ? 'is empty: no EntryPoint answers getNonce at that address on this chain'
        : (parsed.error.issues[0]?.message ?? 'is not what was asked');
    throw bad(reader, method, [{ path: 'result', message }]);
  };
  // The nonce first: an operation included after this read is in the logs read after it.
  const call = { to: checked.entryPoint, data: getNonceCallData(checked.sender, nonceKey(checked.nonce)) };
  const currentNonce = BigInt(await read('eth_call', [call, 'latest'], schemas.callWord));
  // A nonce not yet used means no operation of it was included: there is no event to look for.
  if (currentNonce <= checked.nonce) return { status: 'pending', currentNonce };
  const latest = BigInt(await read('eth_blockNumber', [], schemas.quantity));
  const lookBack = BigInt(DEFAULTS.confirm.lookBackBlocks);
  const start = checked.fromBlock ?? (latest >= lookBack ? latest - lookBack + 1n : 0n);
  for (const [from, to] of logPages(latest, start, BigInt(DEFAULTS.confirm.pageBlocks))) {
    const logs = await read('eth_getLogs', [operationLogFilter(checked, from, to)], schemas.logs);
    const { included, issues } = decodeOperationLogs(logs, checked);
    if (issues.length > 0) throw bad(reader, 'eth_getLogs', issues);
    if (included) return included;
  }
  // The look-back covered the whole chain when it reached its first block.
  const reachedStart = checked.fromBlock !== undefined || start === 0n;
  return confirmationOf({ nonce: checked.nonce, currentNonce, included: undefined, reachedStart });
}

function bad(reader: ChainReader, method: string, issues: Issue[]): ResponseValidationError {
  return new ResponseValidationError({ method, path: reader.endpoint, status: 200, issues });
}

/** The latest block number, for `fromBlock` before a submit: one short read, no retry. */
export async function latestBlock(rpc: ChainRpc, signal: AbortSignal | undefined): Promise<bigint> {
  const reader = new ChainReader(rpc, {
    signal,
    timeoutMs: DEFAULTS.confirm.blockReadTimeoutMs,
    maxRetries: 0,
  });
  const parsed = chainSchemas().quantity.safeParse(await reader.read('eth_blockNumber', []));
  if (!parsed.success)
    throw bad(reader, 'eth_blockNumber', [{ path: 'result', message: 'expected a hex quantity' }]);
  return BigInt(parsed.data);
}

/** What `bridge.confirmOnChain` takes: a construct result, or anything with its `bundle`. */
export interface ConfirmOnChainParams {
  bundle: Pick<BridgeBundle, 'chainId' | 'entryPoint' | 'userOpHash'> & {
    userOp: { sender: string; nonce?: unknown; [field: string]: unknown };
  };
  /** A block at or before the submit: see `ConfirmUserOperationParams.fromBlock`. */
  fromBlock?: Quantity | undefined;
}

const bundleSchema = z.lazy(() =>
  z.looseObject({
    bundle: z.looseObject({
      chainId: z.int().positive(),
      entryPoint: z.string(),
      userOpHash: z.string(),
      userOp: z.looseObject({ sender: z.string(), nonce: z.union([z.string(), z.bigint(), z.number()]) }),
    }),
    fromBlock: z.unknown().optional(),
  }),
);

/**
 * The confirmation of a construct result's operation through `chains`, checked before any request:
 * the bundle's fields, and an RPC for its chain.
 */
export function confirmationOfBundle(
  construct: unknown,
  chains: Readonly<Record<number, ChainRpc>> | undefined,
  where: string,
): CheckedConfirmation {
  const { bundle, fromBlock } = parseArgs(bundleSchema, construct, where);
  const rpc = chains?.[bundle.chainId];
  if (rpc === undefined) {
    throw new ArgumentError({
      where,
      issues: [
        {
          path: 'bundle.chainId',
          message: `no RPC for chain ${bundle.chainId}: give one in the client's chains option`,
        },
      ],
    });
  }
  return checkConfirmation(
    {
      rpc,
      entryPoint: bundle.entryPoint,
      userOpHash: bundle.userOpHash,
      sender: bundle.userOp.sender,
      nonce: bundle.userOp.nonce,
      ...(fromBlock === undefined ? {} : { fromBlock }),
    },
    where,
  );
}

export { optionsSchema as confirmOptionsSchema };
