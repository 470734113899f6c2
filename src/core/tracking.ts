/**
 * What `bridge.execute` needs of a transfer tracker: one call that records a transfer before
 * anything is signed. A symbol rather than a method name, so that the tracker's public `track`
 * stays as documented; `Symbol.for` makes it the same symbol in every copy of the package.
 */
export const TRACK_BEFORE_SIGNING: unique symbol = Symbol.for(
  'partner-s2s-sdk.tracker.track-before-signing',
) as never;

/**
 * A transfer's user operation as the tracker keeps it (JSON-safe: the nonce a decimal string): what
 * it asks the chain about when the transfer is overdue in `submitted`.
 */
export interface TrackedOperation {
  chainId: number;
  entryPoint: string;
  userOpHash: string;
  sender: string;
  /** The full nonce, `key << 64 | sequence`, in decimal. */
  nonce: string;
}

/** A transfer `execute` has constructed, as the tracker records it. */
export interface ExecutedTransfer {
  userId: string;
  transferId: string;
  /** The quote's expiry (epoch ms): an intent never signed is read once shortly after it. */
  expiresAt: number | undefined;
  /** The batch's operation, when its nonce reads. */
  operation?: TrackedOperation;
}

/** A transfer tracker as `bridge.execute` sees it (`createTransferTracker` returns one). */
export interface ExecuteTracker {
  /** Records the transfer durably; rejects when it could not. */
  [TRACK_BEFORE_SIGNING](transfer: ExecutedTransfer): Promise<unknown>;
}

/** True for an object `execute` can record a transfer with. */
export function isExecuteTracker(value: unknown): value is ExecuteTracker {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<ExecuteTracker>)[TRACK_BEFORE_SIGNING] === 'function'
  );
}
