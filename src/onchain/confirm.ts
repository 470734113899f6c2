// The pure half of `confirmUserOperation`: what to ask the EntryPoint (its nonce call, its log
// filter) and what its answers mean. The reads themselves are flows/confirm.ts's.
import type { RpcLog, UserOperationConfirmation, UserOperationIncluded } from '../schemas/chain.js';
import type { Hex } from '../schemas/common.js';
import type { Issue } from '../schemas/issues.js';
import { addressWord, uintWord, wordUint } from './hex.js';
import { keccak256Text } from './keccak.js';

/** What identifies one user operation to its EntryPoint (v0.7 and v0.8 alike). */
export interface OperationFacts {
  entryPoint: string;
  userOpHash: string;
  sender: string;
  /** The full nonce: `key << 64 | sequence`. */
  nonce: bigint;
}

/** Topics and selector, hashed on first use: importing the SDK hashes nothing. */
let hashed: { event: string; revert: string; getNonce: string } | undefined;
function signatures() {
  hashed ??= {
    event: `0x${keccak256Text('UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)')}`,
    revert: `0x${keccak256Text('UserOperationRevertReason(bytes32,address,uint256,bytes)')}`,
    getNonce: keccak256Text('getNonce(address,uint192)').slice(0, 8),
  };
  return hashed;
}

/** The key half of a nonce: the account's validation is chosen by it (MAv2's owner is key 1). */
export function nonceKey(nonce: bigint): bigint {
  return nonce >> 64n;
}

/** The `eth_call` data of `getNonce(sender, key)`. */
export function getNonceCallData(sender: string, key: bigint): Hex {
  return `0x${signatures().getNonce}${addressWord(sender)}${uintWord(key)}`;
}

/** A block number as a JSON-RPC quantity. */
export function blockTag(block: bigint): Hex {
  return `0x${block.toString(16)}`;
}

/**
 * The `eth_getLogs` filter of one page: the EntryPoint's `UserOperationEvent` and
 * `UserOperationRevertReason` for the hash (both index it first), blocks `from` to `to` inclusive.
 */
export function operationLogFilter(facts: OperationFacts, from: bigint, to: bigint) {
  const { event, revert } = signatures();
  return {
    address: facts.entryPoint.toLowerCase(),
    topics: [[event, revert], facts.userOpHash.toLowerCase()],
    fromBlock: blockTag(from),
    toBlock: blockTag(to),
  };
}

/**
 * The pages of the log search, newest first: from `latest` back to `start`, `pageBlocks` a page.
 * RPC providers cap the block range of one `eth_getLogs`, and the event is most likely recent.
 */
export function logPages(latest: bigint, start: bigint, pageBlocks: bigint): [from: bigint, to: bigint][] {
  const pages: [bigint, bigint][] = [];
  for (let to = latest; to >= start; to -= pageBlocks) {
    const from = to - pageBlocks + 1n;
    pages.push([from > start ? from : start, to]);
  }
  return pages;
}

/** The inclusion a page of logs shows, or the problems of a page that does not read as the EntryPoint's. */
export type DecodedLogs = { included: UserOperationIncluded | undefined; issues: Issue[] };

const same = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase();

/**
 * Reads the `UserOperationEvent` of the operation out of a page of logs (and its
 * `UserOperationRevertReason`, from the same transaction). Logs of other contracts or hashes are
 * the node's noise and skipped; a removed log (a reorganised block) is not an inclusion. An event
 * for the hash that names another sender or nonce, or whose data is not the event's, is an issue:
 * the hash binds both, so the node is answering something else.
 */
export function decodeOperationLogs(logs: readonly RpcLog[], facts: OperationFacts): DecodedLogs {
  const { event, revert } = signatures();
  const issues: Issue[] = [];
  const mine = logs.filter(
    (log) =>
      log.removed !== true && same(log.address, facts.entryPoint) && same(log.topics[1], facts.userOpHash),
  );
  const index = mine.findIndex((log) => same(log.topics[0], event));
  if (index < 0) return { included: undefined, issues };
  const found = mine[index]!;
  const path = `result.${logs.indexOf(found)}`;
  const data = found.data.slice(2);
  if (found.topics.length !== 4 || data.length !== 4 * 64) {
    issues.push({ path: `${path}.data`, message: 'is not a UserOperationEvent (4 topics, 4 words of data)' });
    return { included: undefined, issues };
  }
  const word = (i: number) => data.slice(i * 64, (i + 1) * 64);
  if (!same(found.topics[2], `0x${addressWord(facts.sender)}`))
    issues.push({ path: `${path}.topics.2`, message: 'names another sender than the operation' });
  if (wordUint(word(0)) !== facts.nonce)
    issues.push({ path: `${path}.data`, message: 'names another nonce than the operation' });
  const success = wordUint(word(1));
  if (success > 1n) issues.push({ path: `${path}.data`, message: 'has a success flag that is not a bool' });
  if (issues.length > 0) return { included: undefined, issues };
  const included: UserOperationIncluded = {
    status: 'included',
    success: success === 1n,
    transactionHash: found.transactionHash.toLowerCase() as Hex,
    blockNumber: BigInt(found.blockNumber),
    actualGasCost: wordUint(word(2)),
  };
  const reason = mine.find(
    (log) => same(log.topics[0], revert) && same(log.transactionHash, found.transactionHash),
  );
  if (reason) {
    const bytes = revertBytes(reason.data.slice(2));
    if (bytes === undefined)
      issues.push({
        path: `result.${logs.indexOf(reason)}.data`,
        message: 'is not a UserOperationRevertReason',
      });
    else included.revertReason = `0x${bytes}`;
  }
  return issues.length > 0 ? { included: undefined, issues } : { included, issues };
}

/** The `bytes` of `(uint256 nonce, bytes revertReason)`, or undefined when the encoding does not hold. */
function revertBytes(data: string): string | undefined {
  if (data.length < 3 * 64) return undefined;
  const offset = wordUint(data.slice(64, 128));
  if (offset !== 64n) return undefined;
  const length = wordUint(data.slice(128, 192));
  if (length > BigInt(data.length)) return undefined;
  const end = 192 + Number(length) * 2;
  return end <= data.length ? data.slice(192, end).toLowerCase() : undefined;
}

/**
 * What the facts say: the event when there is one; without it, a nonce past the operation's is
 * `superseded` only when the search reached back to where the operation could have been included,
 * `unknown` otherwise; a nonce not yet past it is `pending`. The nonce was read before the logs, so
 * an operation included between the two reads is found in the logs, never called superseded.
 */
export function confirmationOf(facts: {
  nonce: bigint;
  currentNonce: bigint;
  included: UserOperationIncluded | undefined;
  reachedStart: boolean;
}): UserOperationConfirmation {
  if (facts.included) return facts.included;
  const { currentNonce } = facts;
  if (currentNonce <= facts.nonce) return { status: 'pending', currentNonce };
  return facts.reachedStart ? { status: 'superseded', currentNonce } : { status: 'unknown', currentNonce };
}
