import {
  type ExecuteTracker,
  isExecuteTracker,
  TRACK_BEFORE_SIGNING,
  type TrackedOperation,
} from '../../core/tracking.js';
import { ArgumentError } from '../../errors/client-errors.js';
import { TrackerError } from '../../errors/tracker-errors.js';
import { quantity } from '../../onchain/hex.js';
import type { BridgeBundle, BridgeConstructResult } from '../../schemas/bridge.js';

/** The `tracker` of `bridge.execute`, checked before any request: one made by `createTransferTracker`. */
export function checkExecuteTracker(tracker: unknown): ExecuteTracker | undefined {
  if (tracker === undefined || isExecuteTracker(tracker)) return tracker;
  throw new ArgumentError({
    where: 'bridge.execute',
    issues: [{ path: 'tracker', message: 'must be a transfer tracker made by createTransferTracker' }],
  });
}

/**
 * Records the constructed transfer with the tracker before anything is signed, so that a process
 * dying while signing still learns how the transfer ends (an intent never signed: that it expired).
 * When the record cannot be written, execute stops here: nothing is signed or sent.
 */
export async function trackBeforeSigning(
  tracker: ExecuteTracker | undefined,
  userId: string,
  construct: BridgeConstructResult,
): Promise<void> {
  if (!tracker) return;
  const expiresAt = Date.parse(construct.quote.expiresAt);
  try {
    await tracker[TRACK_BEFORE_SIGNING]({
      userId,
      transferId: construct.transferId,
      expiresAt: Number.isFinite(expiresAt) ? expiresAt : undefined,
      ...operationOf(construct.bundle),
    });
  } catch (error) {
    throw new TrackerError({
      stage: 'track',
      transferId: construct.transferId,
      message: `bridge.execute: the tracker could not record ${construct.transferId}; nothing was signed or sent`,
      cause: error,
    });
  }
}

/** The bundle's operation as a tracker keeps it; none when its nonce does not read. */
export function operationOf(
  bundle: Pick<BridgeBundle, 'chainId'> & {
    entryPoint: string;
    userOpHash: string;
    userOp: { sender: string; [field: string]: unknown };
  },
): { operation?: TrackedOperation } {
  const nonce = quantity(bundle.userOp.nonce);
  if (nonce === undefined) return {};
  const { chainId, entryPoint, userOpHash } = bundle;
  return {
    operation: { chainId, entryPoint, userOpHash, sender: bundle.userOp.sender, nonce: nonce.toString() },
  };
}
