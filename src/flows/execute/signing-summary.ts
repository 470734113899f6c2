import { describeBridgeBatch } from '../../onchain/describe/describe.js';
import type { BridgeBatchView } from '../../onchain/describe/types.js';
import type { VerifiedBridgeBatch } from '../../onchain/verify/verify.js';

/**
 * What a signer is shown as `summary` of the batch it signs: the description an approver reads
 * and a signer's policy checks (`binding.erc191Digest` is what it is asked to sign), in one place
 * so every signer of `execute` gets the same view.
 */
export function signingSummary(verified: VerifiedBridgeBatch): BridgeBatchView {
  return describeBridgeBatch(verified);
}
