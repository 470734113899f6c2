import type { VerifiedBridgeBatch } from '../onchain/verify.js';

/**
 * What a signer is shown as `summary` of the batch it signs: one place, so that a richer
 * description of the verified batch replaces it for every signer at once. For now the verified
 * batch itself: its summary fields, frozen.
 */
export function signingSummary(verified: VerifiedBridgeBatch): unknown {
  return verified;
}
