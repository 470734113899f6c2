import { SigningError } from '../errors/bridge-errors.js';
import type { AuthorizationSignature } from '../schemas/bridge.js';
import type { Hex } from '../schemas/common.js';

/*
 * The one form of an ECDSA signature the chain takes. Recovery alone (viem's, ecrecover's) accepts
 * more: s in the upper half and v as 0/1. But the account validates the user operation with
 * OpenZeppelin's ECDSA.tryRecover, which refuses s > n/2 and v other than 27 or 28, and the chain
 * skips an EIP-7702 tuple with s > n/2. Such a submit spends the intent and can never validate, and
 * KMS signers (AWS KMS among them) do not normalise s: so signing normalises, and submitting refuses.
 */

/** The order n of secp256k1. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** The largest s the chain takes: ⌊n / 2⌋ (n is odd). */
const HALF_N = N >> 1n;

const RSV = /^0x[0-9a-fA-F]{130}$/;
const WORD = /^0x[0-9a-fA-F]{1,64}$/;

interface Ecdsa {
  r: bigint;
  s: bigint;
  yParity: number;
}

/** Why (r, s) is no signature whatever is done to it, or undefined when both are in [1, n). */
function rangeProblem(r: bigint, s: bigint): string | undefined {
  for (const [name, value] of [
    ['r', r],
    ['s', s],
  ] as const) {
    if (value === 0n) return `has ${name} = 0`;
    if (value >= N) return `has ${name} at or above the curve order n`;
  }
  return undefined;
}

/** (r, s, parity) with s in the lower half: the same signature of the same key, as the chain takes it. */
function lowS({ r, s, yParity }: Ecdsa): Ecdsa {
  return s > HALF_N ? { r, s: N - s, yParity: 1 - yParity } : { r, s, yParity };
}

const word = (value: bigint) => value.toString(16).padStart(64, '0');

/** r ‖ s ‖ v of a 65-byte signature given as 130 hex digits. */
function splitRsv(hex: string): { r: bigint; s: bigint; v: number } {
  return {
    r: BigInt(`0x${hex.slice(0, 64)}`),
    s: BigInt(`0x${hex.slice(64, 128)}`),
    v: Number.parseInt(hex.slice(128), 16),
  };
}

/** The parity a `v` names: 0/1 as a raw parity, 27/28 as Ethereum writes it; nothing else. */
function parityOfV(v: unknown): number | undefined {
  if (v === 0 || v === 27) return 0;
  if (v === 1 || v === 28) return 1;
  return undefined;
}

/**
 * The signer's user-operation signature (65 bytes `r ‖ s ‖ v`) in the form the account's check
 * takes: s ≤ n/2 (else n − s, the parity flipped) and v 27 or 28 (0/1 read as the parity). What
 * no rewriting makes valid is a `SigningError`.
 */
export function canonicalUserOpSignature(raw: unknown): Hex {
  if (typeof raw !== 'string' || !RSV.test(raw))
    throw new SigningError({ message: 'The signer returned a signature that is not 65 bytes' });
  const { r, s, v } = splitRsv(raw.slice(2));
  const yParity = parityOfV(v);
  const problem =
    yParity === undefined ? `has v = ${v} (only 0, 1, 27 and 28 name a parity)` : rangeProblem(r, s);
  if (problem !== undefined || yParity === undefined) {
    throw new SigningError({ message: `The signer returned a user-operation signature that ${problem}` });
  }
  const low = lowS({ r, s, yParity });
  return `0x${word(low.r)}${word(low.s)}${(27 + low.yParity).toString(16)}`;
}

/** The parity of an authorization from its `yParity` and/or `v`, or why there is none. */
function authorizationParity(yParity: unknown, v: unknown): number | string {
  const number = (value: unknown) => (typeof value === 'bigint' ? Number(value) : value);
  const fromYParity = yParity === undefined || yParity === null ? undefined : number(yParity);
  const given = v === undefined || v === null ? undefined : number(v);
  if (fromYParity !== undefined && fromYParity !== 0 && fromYParity !== 1)
    return 'has a yParity other than 0 or 1';
  const fromV = parityOfV(given);
  if (given !== undefined && fromV === undefined) return 'has a v other than 0, 1, 27 or 28';
  if (fromYParity !== undefined && fromV !== undefined && fromYParity !== fromV)
    return 'has a yParity and a v that name different parities';
  return fromYParity ?? fromV ?? 'has neither yParity nor v';
}

/**
 * The signer's EIP-7702 authorization signature as the service takes it and the chain applies it:
 * `r` and `s` as 32-byte words, s ≤ n/2 (else n − s, the parity flipped), `yParity` 0 or 1 (from
 * `yParity`, or from `v` as 0/1 or 27/28). What no rewriting makes valid is a `SigningError`.
 */
export function canonicalAuthorization(signed: unknown): AuthorizationSignature {
  let read: Ecdsa | string;
  try {
    const { r, s, v, yParity } = (signed ?? {}) as Record<string, unknown>;
    const parity = authorizationParity(yParity, v);
    if (typeof r !== 'string' || typeof s !== 'string' || !WORD.test(r) || !WORD.test(s))
      read = 'has no r and s of at most 32 bytes each';
    else if (typeof parity === 'string') read = parity;
    else read = { r: BigInt(r), s: BigInt(s), yParity: parity };
  } catch {
    read = 'cannot be read';
  }
  const problem = typeof read === 'string' ? read : rangeProblem(read.r, read.s);
  if (problem !== undefined || typeof read === 'string') {
    throw new SigningError({ message: `The signer returned an authorization signature that ${problem}` });
  }
  const low = lowS(read);
  return { r: `0x${word(low.r)}`, s: `0x${word(low.s)}`, yParity: low.yParity === 0 ? 0 : 1 };
}

/** Why the chain refuses (r, s) as given: out of range, or s above n/2. */
function formProblems(r: bigint, s: bigint): string[] {
  const range = rangeProblem(r, s);
  if (range !== undefined) return [range];
  return s > HALF_N ? ['has s above n/2'] : [];
}

/**
 * Why the chain would refuse a submit's signatures (empty when it takes them): the user operation's
 * (`0xff00` ‖ r ‖ s ‖ v) with s > n/2, v other than 27/28 or r, s out of range, and the
 * authorization's with s > n/2 or r, s out of range. Each reason names the signature.
 */
export function submittedSignatureProblems(
  signature: string,
  authorization?: { r: string; s: string; yParity: number } | undefined,
): string[] {
  const problems: string[] = [];
  const userOp = signature.slice(0, 6).toLowerCase() === '0xff00' ? `0x${signature.slice(6)}` : '';
  if (RSV.test(userOp)) {
    const { r, s, v } = splitRsv(userOp.slice(2));
    const found = formProblems(r, s);
    if (v !== 27 && v !== 28) found.push(`has v = ${v}, not 27 or 28`);
    for (const problem of found)
      problems.push(`the user-operation signature ${problem}: the account's ECDSA check refuses it`);
  } else {
    problems.push('the user-operation signature is not 0xff00 followed by 65 bytes');
  }
  if (authorization !== undefined) {
    const { r, s, yParity } = authorization;
    const found =
      WORD.test(r) && WORD.test(s)
        ? formProblems(BigInt(r), BigInt(s))
        : ['has no r and s of at most 32 bytes each'];
    if (yParity !== 0 && yParity !== 1) found.push('has a yParity other than 0 or 1');
    for (const problem of found) {
      problems.push(
        `the EIP-7702 authorization ${problem}: the chain skips it, so the wallet is not delegated and the operation cannot validate`,
      );
    }
  }
  return problems;
}

/**
 * Refuses, before anything is sent, signatures the chain would refuse: submitted, the intent would
 * be spent on an operation that can never validate. `signBridgeBatch` returns them in the form the
 * chain takes.
 */
export function refuseNonCanonical(signed: {
  signature: string;
  authorization?: { r: string; s: string; yParity: number } | undefined;
}): void {
  const problems = submittedSignatureProblems(signed.signature, signed.authorization);
  if (problems.length === 0) return;
  throw new SigningError({
    message: `Not submitted: ${problems.join('; ')}. signBridgeBatch returns signatures in the form the chain takes`,
  });
}
