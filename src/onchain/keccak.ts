import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils';

/**
 * keccak256 (the original Keccak padding, as Ethereum uses) from `@noble/hashes`, the audited
 * implementation viem itself uses, imported directly so that verifying never loads viem.
 */

/**
 * keccak256 of the bytes that `hex` spells (no `0x`, even length, already validated), as 64
 * lowercase hex characters without `0x`.
 */
export function keccak256Hex(hex: string): string {
  return bytesToHex(keccak_256(hexToBytes(hex)));
}

/** keccak256 of a UTF-8 string, as 64 hex characters: its bytes go in as they are, not through hex. */
export function keccak256Text(text: string): string {
  return bytesToHex(keccak_256(utf8ToBytes(text)));
}
