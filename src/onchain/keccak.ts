import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils';

/**
 * keccak256 (the original Keccak padding, as Ethereum uses) from `@noble/hashes`, the audited
 * implementation viem itself uses, imported directly so that verifying never loads viem. Hashing
 * is most of the verifier's work: what is hashed is decoded as cheaply as the runtime allows.
 */

/** keccak256 of no bytes: a user operation without initCode or paymaster hashes it every time. */
const EMPTY = 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';

/** Node's and Bun's Buffer decode hex natively, several times faster than noble's loop. */
const NativeBuffer = (globalThis as { Buffer?: { from(hex: string, encoding: 'hex'): Uint8Array } }).Buffer;
const decodeHex = NativeBuffer ? (hex: string) => NativeBuffer.from(hex, 'hex') : hexToBytes;

/**
 * keccak256 of the bytes that `hex` spells (no `0x`, even length, already validated), as 64
 * lowercase hex characters without `0x`.
 */
export function keccak256Hex(hex: string): string {
  return hex.length === 0 ? EMPTY : bytesToHex(keccak_256(decodeHex(hex)));
}

/** keccak256 of a UTF-8 string, as 64 hex characters: its bytes go in as they are, not through hex. */
export function keccak256Text(text: string): string {
  return bytesToHex(keccak_256(utf8ToBytes(text)));
}
