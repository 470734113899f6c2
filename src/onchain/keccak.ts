import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils';

/**
 * keccak256 (the original Keccak padding, as Ethereum uses) from `@noble/hashes`, the audited
 * implementation viem itself uses, imported directly so that verifying never loads viem. Hashing
 * is most of the verifier's work (noble's keccak-f permutation, once per 136-byte block): what is
 * hashed is decoded as cheaply as the runtime allows, and what recurs from batch to batch is
 * permuted once, remembered under the exact bytes it was computed from.
 */

/** keccak256 of no bytes: a user operation without initCode or paymaster hashes it every time. */
const EMPTY = 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';

type Sponge = ReturnType<typeof keccak_256.create>;
interface HexBuffer extends Uint8Array {
  toString(encoding?: 'hex'): string;
}

/** Node's and Bun's Buffer read and write hex natively, several times faster than noble's loops. */
const NativeBuffer = (
  globalThis as {
    Buffer?: { from(hex: string, encoding: 'hex'): Uint8Array; alloc(size: number): HexBuffer };
  }
).Buffer;
const decodeHex = NativeBuffer ? (hex: string) => NativeBuffer.from(hex, 'hex') : hexToBytes;
/** One digest at a time (hashing is synchronous): written here, read out as hex at once. */
const digestBuffer = NativeBuffer?.alloc(32);
const squeeze: (sponge: Sponge) => string = digestBuffer
  ? (sponge) => {
      sponge.digestInto(digestBuffer);
      return digestBuffer.toString('hex');
    }
  : (sponge) => bytesToHex(sponge.digest());

/**
 * The one sponge every hash runs in, reset from a state by noble's `_cloneInto` (a copy of 200
 * bytes) rather than built anew, which allocates twice and costs fifteen times more. Hashing is
 * synchronous and calls nothing outside: no hash can start while another is under way.
 */
const scratch = keccak_256.create();
const EMPTY_STATE = keccak_256.create();
const sponge = (from: Sponge): Sponge => from._cloneInto(scratch);

/**
 * keccak256 of the bytes that `hex` spells (no `0x`, even length, already validated), as 64
 * lowercase hex characters without `0x`.
 */
export function keccak256Hex(hex: string): string {
  return hex.length === 0 ? EMPTY : squeeze(sponge(EMPTY_STATE).update(decodeHex(hex)));
}

/** keccak256 of a UTF-8 string, as 64 hex characters: its bytes go in as they are, not through hex. */
export function keccak256Text(text: string): string {
  return squeeze(sponge(EMPTY_STATE).update(utf8ToBytes(text)));
}

/**
 * How many inputs each memory below holds. A partner's batches come from a few chains, entry
 * points, delegates and routes; past this the oldest entry is dropped, so a stream of novel
 * inputs costs one map operation each and never grows the heap.
 */
const REMEMBERED = 64;

/** Looks `key` up in `memory`, making and adding it when absent, the oldest entry dropped when full. */
function remember<T>(memory: Map<string, T>, key: string, make: () => T): T {
  let value = memory.get(key);
  if (value === undefined) {
    value = make();
    if (memory.size >= REMEMBERED) memory.delete(memory.keys().next().value as string);
    memory.set(key, value);
  }
  return value;
}

const digests = new Map<string, string>();

/**
 * `keccak256Hex` of an input that recurs across batches (a chain's EIP-712 domain, a delegate in
 * place of the EIP-7702 marker), remembered under the input itself: a digest is only ever reused
 * for exactly the bytes it is the digest of. Not for inputs that differ per batch (they would only
 * churn the memory).
 */
export function keccak256HexRecurring(hex: string): string {
  return remember(digests, hex, () => keccak256Hex(hex));
}

/** The sponge absorbs 136 bytes (272 hex characters) a block, and permutes once per block. */
const BLOCK_HEX = 272;

/**
 * Blocks of the call data absorbed once per distinct prefix. The first two blocks of an
 * `executeBatch` of two or three calls hold only its layout (selector, offsets, lengths) and the
 * first call's target, the route's token: the same for every batch of a route, while the first
 * figure of a batch (the approved amount) starts at byte 296 at the earliest.
 */
const SHARED_BLOCKS = 2;
const prefixes = new Map<string, Sponge>();

/**
 * `keccak256Hex` of call data, whose first blocks most batches share with the batches before: the
 * sponge's state after them is remembered under exactly those bytes, and each hash goes on from a
 * copy of it. The state after a block is a function of the blocks absorbed alone, so the digest is
 * the same as hashing the whole input.
 */
export function keccak256HexSharedPrefix(hex: string): string {
  const prefixLength = SHARED_BLOCKS * BLOCK_HEX;
  if (hex.length <= prefixLength) return keccak256Hex(hex);
  const prefix = hex.slice(0, prefixLength);
  const absorbed = remember(prefixes, prefix, () => keccak_256.create().update(decodeHex(prefix)));
  return squeeze(sponge(absorbed).update(decodeHex(hex.slice(prefixLength))));
}
