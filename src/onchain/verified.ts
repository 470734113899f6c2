import type { BundleAuthorization } from '../schemas/bridge.js';
import type { Hex } from '../schemas/common.js';
import { encodeExecuteBatch, isHex, quantity } from './hex.js';
import { keccak256Hex, keccak256Text } from './keccak.js';

/**
 * What `signBridgeBatch` needs of a verified batch, kept where the caller cannot reach it: the
 * public object is frozen, but a look-alike object built by hand must not sign anything.
 */
export interface VerifiedRecord {
  /** The text of the bundle verified (see `bundleText`). */
  text: string;
  /** The wallet verified as sender, depositor and recipient: the only address that may sign. */
  wallet: string;
  userOpHash: Hex;
  authorization: Readonly<BundleAuthorization> | null;
  /** The caller's own bundle object, digested again at signing to see that it did not change. */
  original: unknown;
  /** `textDigest(text)`, once read. */
  digest?: Hex;
}

// Shared through the global symbol registry so that a batch verified by one copy of the package
// (ESM and CJS side by side) signs with the other; the key is versioned with the record's shape.
const KEY = Symbol.for('partner-s2s-sdk.verified-batches.v1');
const registry: WeakMap<object, VerifiedRecord> =
  ((globalThis as Record<symbol, unknown>)[KEY] as WeakMap<object, VerifiedRecord> | undefined) ??
  new WeakMap();
(globalThis as Record<symbol, unknown>)[KEY] = registry;

export function registerVerified(batch: object, record: VerifiedRecord): void {
  registry.set(batch, record);
}

export function verifiedRecord(batch: unknown): VerifiedRecord | undefined {
  return typeof batch === 'object' && batch !== null ? registry.get(batch) : undefined;
}

/**
 * The `digest` getter of every verified batch. One function for all of them: V8 keeps the fields
 * of an object whose accessor it has seen before in fast mode, while a getter made per batch (a
 * closure) turned each batch into a dictionary, which cost more to build and freeze than the rest
 * of the summary.
 */
export function readDigest(this: unknown): Hex {
  const record = verifiedRecord(this);
  if (!record) throw new TypeError('digest is read from a batch that verifyBridgeBatch returned');
  record.digest ??= textDigest(record.text);
  return record.digest;
}

/** JSON with sorted keys, of a value that came out of `JSON.parse`. */
function canonical(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
}

/**
 * The bundle as JSON text, with the calls and the call data each standing as the hash of their
 * `executeBatch` encoding (the largest part, hashed once). `callDataHash` is for the verifier,
 * which has proven the calls encode to the call data and has hashed it already. Key order is the
 * object's own: compare two texts with `sameBundle`. Undefined when the bundle cannot be read as
 * JSON (a hostile getter, broken calls, a bigint).
 */
export function bundleText(bundle: unknown, callDataHash?: string): string | undefined {
  try {
    const { calls, userOp } = bundle as Record<string, unknown>;
    const { callData } = userOp as Record<string, unknown>;
    // Copied key by key, in the objects' own order: object rest and spread cost more than the
    // JSON text itself, and the verifier builds one per batch.
    const text = without(bundle as Record<string, unknown>, 'calls', 'userOp');
    text.userOp = without(userOp as Record<string, unknown>, 'callData');
    let callsHash = callDataHash;
    let dataHash = callDataHash;
    if (callDataHash === undefined) {
      if (!Array.isArray(calls) || !isHex(callData) || callData.length % 2 !== 0) return undefined;
      const read = calls.map((call: Record<string, unknown>) => {
        const value = quantity(call.value);
        const { target, data } = call;
        if (value === undefined || !isHex(target) || target.length !== 42 || !isHex(data) || data.length % 2)
          throw new TypeError('not a call');
        return { target, value, data };
      });
      callsHash = keccak256Hex(encodeExecuteBatch(read).slice(2));
      dataHash = keccak256Hex(callData.slice(2).toLowerCase());
    }
    text['#calls'] = callsHash;
    text['#callData'] = dataHash;
    return JSON.stringify(text);
  } catch {
    return undefined;
  }
}

/** The object's own enumerable string-keyed fields but `skip` and `skipToo`, in their order. */
function without(value: Record<string, unknown>, skip: string, skipToo?: string): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === skip || key === skipToo) continue;
    // An own `__proto__` (JSON.parse makes one) stays a field, as object spread would keep it.
    if (key === '__proto__')
      Object.defineProperty(copy, key, {
        value: value[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else copy[key] = value[key];
  }
  return copy;
}

/** The same bundle content, whatever the order of keys in the two texts. */
export function sameBundle(a: string, b: string): boolean {
  try {
    return a === b || canonical(JSON.parse(a)) === canonical(JSON.parse(b));
  } catch {
    return false; // nested past the stack: not a bundle anyone verified
  }
}

/** keccak256 of a bundle text's canonical (sorted-key) form: the same for the same content. */
export function textDigest(text: string): Hex {
  let sorted: string;
  try {
    sorted = canonical(JSON.parse(text));
  } catch {
    sorted = text; // nested past the stack: the text as it is still names this bundle
  }
  return `0x${keccak256Text(sorted)}`;
}
