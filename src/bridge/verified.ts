import type { BundleAuthorization } from '../schemas/bridge.js';
import type { Hex } from '../schemas/common.js';
import { keccak256Text } from './keccak.js';

/**
 * What `signBridgeBatch` needs of a verified batch, kept where the caller cannot reach it: the
 * public object is frozen, but a look-alike object built by hand must not sign anything.
 */
export interface VerifiedRecord {
  digest: Hex;
  /** The wallet verified as sender, depositor and recipient: the only address that may sign. */
  wallet: string;
  userOpHash: Hex;
  authorization: Readonly<BundleAuthorization> | null;
  /** The caller's own bundle object, digested again at signing to see that it did not change. */
  original: unknown;
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

/** Nesting deeper than any bundle has: a cyclic or absurdly deep value digests to a marker, never a throw. */
const MAX_DEPTH = 16;

/** JSON with sorted keys, so that two bundles with the same content have the same text. */
function canonical(value: unknown, depth: number): string {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : `"#${value}"`;
  if (typeof value === 'bigint') return `"#${value}n"`;
  if (typeof value !== 'object') return `"#${typeof value}"`;
  if (depth > MAX_DEPTH) return '"#deep"';
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item, depth + 1)).join(',')}]`;
  const keys = Object.keys(value).sort();
  let text = '{';
  for (const key of keys) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined) continue;
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonical(item, depth + 1)}`;
  }
  return `${text}}`;
}

/**
 * keccak256 of the bundle's canonical JSON: everything in it, the calls, the user operation and
 * the authorization included. Undefined when reading the bundle throws (a hostile getter).
 */
export function bundleDigest(bundle: unknown): Hex | undefined {
  try {
    return `0x${keccak256Text(canonical(bundle, 0))}`;
  } catch {
    return undefined;
  }
}
