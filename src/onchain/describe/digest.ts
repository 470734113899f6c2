// The digests that bind a description to what is signed, computed here (synchronously, without
// viem) so that describing a batch stays as cheap and as pure as verifying it: the EIP-191 digest
// a KMS or raw MPC signer receives, the EIP-7702 authorization hash, EIP-55 address checksums and
// the RFC 8785 (JCS) canonical JSON whose hash is the summary digest.
import type { BundleAuthorization } from '../../schemas/bridge.js';
import type { Address, Hex } from '../../schemas/common.js';
import { keccak256Hex, keccak256Text } from '../keccak.js';

/** `"\x19Ethereum Signed Message:\n32"`: what personal_sign puts before a 32-byte message. */
const EIP191_PREFIX_32 = '19457468657265756d205369676e6564204d6573736167653a0a3332';

/**
 * keccak256 of the EIP-191 prefix and the 32 bytes of `hash`: the digest a personal_sign over the
 * raw hash signs (viem's `hashMessage({ raw: hash })`), and what a KMS digest signing receives.
 */
export function erc191Digest(hash: Hex): Hex {
  return `0x${keccak256Hex(EIP191_PREFIX_32 + hash.slice(2).toLowerCase())}`;
}

/** An integer as RLP bytes (hex): minimal big-endian, zero as the empty string. */
function rlpInteger(value: number | bigint): string {
  const big = BigInt(value);
  if (big === 0n) return rlpBytes('');
  const hex = big.toString(16);
  return rlpBytes(hex.length % 2 ? `0${hex}` : hex);
}

/** RLP length prefix for a string (`0x80`) or list (`0xc0`) of `length` bytes. */
function rlpLength(length: number, offset: number): string {
  if (length < 56) return (offset + length).toString(16).padStart(2, '0');
  let size = length.toString(16);
  if (size.length % 2) size = `0${size}`;
  return (offset + 55 + size.length / 2).toString(16) + size;
}

function rlpBytes(hex: string): string {
  if (hex.length === 2 && Number.parseInt(hex, 16) < 0x80) return hex;
  return rlpLength(hex.length / 2, 0x80) + hex;
}

/**
 * The EIP-7702 signing hash of an authorization: keccak256(0x05 ‖ rlp([chainId, address, nonce])),
 * as viem's `hashAuthorization` computes it.
 */
export function authorizationHash(authorization: Readonly<BundleAuthorization>): Hex {
  const items =
    rlpInteger(authorization.chainId) +
    rlpBytes(authorization.address.slice(2).toLowerCase()) +
    rlpInteger(authorization.nonce);
  return `0x${keccak256Hex(`05${rlpLength(items.length / 2, 0xc0)}${items}`)}`;
}

/** An address in its EIP-55 mixed-case form. */
export function checksumAddress(address: string): Address {
  const lower = address.slice(2).toLowerCase();
  const hash = keccak256Text(lower);
  let out = '0x';
  for (let i = 0; i < lower.length; i++)
    out += Number.parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  return out as Address;
}

/** A value the canonical JSON can hold: what `JSON.parse` returns. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * RFC 8785 (JCS) canonical JSON: object keys sorted by their UTF-16 code units, numbers in their
 * ECMAScript form, strings escaped as `JSON.stringify` escapes them, no whitespace. What JCS
 * cannot hold (a non-finite number, a lone surrogate, anything not JSON) is a `TypeError`.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('canonical JSON holds finite numbers only');
    return JSON.stringify(value);
  }
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) throw new TypeError('canonical JSON holds well-formed strings only');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype)
    throw new TypeError('canonical JSON holds JSON values only');
  // The default sort compares UTF-16 code units, which is the order JCS asks for.
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${canonicalJson(key)}:${canonicalJson(value[key]!)}`).join(',')}}`;
}

/** keccak256 of the canonical JSON of `value`. */
export function canonicalDigest(value: JsonValue): Hex {
  return `0x${keccak256Text(canonicalJson(value))}`;
}
