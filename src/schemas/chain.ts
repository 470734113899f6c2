// What an Ethereum JSON-RPC node answers to the three reads of `confirmUserOperation`
// (`eth_call`, `eth_blockNumber`, `eth_getLogs`), and what the SDK answers from them.
import * as z from 'zod';
import type { Hex } from './common.js';

const DATA = /^0x([0-9a-fA-F]{2})*$/;
const WORD = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function build() {
  // A node that pads a quantity with zeros (some do) is still read: the value is unambiguous.
  const quantity = z.string().regex(/^0x[0-9a-fA-F]{1,64}$/, 'expected a hex quantity');
  const data = z.string().regex(DATA, 'expected 0x-prefixed hex bytes');
  const word = z.string().regex(WORD, 'expected a 32-byte hex word');
  const log = z.looseObject({
    address: z.string().regex(ADDRESS, 'expected a 20-byte hex address'),
    topics: z.array(word).max(4),
    data,
    blockNumber: quantity,
    transactionHash: word,
    // A log of a block a reorganisation took away: the operation is not in the chain.
    removed: z.boolean().optional(),
  });
  return {
    quantity,
    /** `eth_call` of `getNonce`: one ABI word. */
    callWord: word,
    logs: z.array(log),
  };
}

let built: ReturnType<typeof build> | undefined;

/** The schemas of the node's answers, built on first use. */
export function chainSchemas(): ReturnType<typeof build> {
  built ??= build();
  return built;
}

/** One log as `eth_getLogs` answers it, checked. */
export type RpcLog = z.output<ReturnType<typeof build>['logs']>[number];

/**
 * The user operation is in a block: the EntryPoint's `UserOperationEvent` for its hash. Its nonce
 * is spent; `success` is false when its calls reverted (the transfer then ends `failed`).
 */
export interface UserOperationIncluded {
  status: 'included';
  /** False when the operation's calls reverted: included, nonce spent, nothing moved. */
  success: boolean;
  /** The `handleOps` transaction that included it. */
  transactionHash: Hex;
  blockNumber: bigint;
  /** What the operation paid for gas, in wei (from the paymaster when sponsored). */
  actualGasCost: bigint;
  /** The raw bytes of the EntryPoint's `UserOperationRevertReason`, when the calls reverted with data. */
  revertReason?: Hex;
}

/**
 * No event for the hash back to `fromBlock`, and the sender's EntryPoint nonce for that key is past
 * the operation's: another operation used the nonce, and this one can never execute.
 */
export interface UserOperationSuperseded {
  status: 'superseded';
  /** `getNonce(sender, key)`: the full value, `key << 64 | sequence`. */
  currentNonce: bigint;
}

/** No event, and the nonce is not used yet: the operation may still be included. */
export interface UserOperationPending {
  status: 'pending';
  currentNonce: bigint;
}

/**
 * The nonce is used, but the search did not reach back to where the operation could be (no
 * `fromBlock` was given and the default look-back found no event): it may be this operation or
 * another. Ask again with `fromBlock`: a block before the submit.
 */
export interface UserOperationUnknown {
  status: 'unknown';
  currentNonce: bigint;
}

/**
 * What the chain says of one user operation (`confirmUserOperation`, `bridge.confirmOnChain`).
 *
 * @example
 * const onChain = await confirmUserOperation({ rpc, entryPoint, userOpHash, sender, nonce });
 * if (onChain.status === 'included' && !onChain.success) log.warn('included, calls reverted');
 */
export type UserOperationConfirmation =
  | UserOperationIncluded
  | UserOperationSuperseded
  | UserOperationPending
  | UserOperationUnknown;
