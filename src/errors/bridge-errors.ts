import type { UserOperationConfirmation } from '../schemas/chain.js';
import { formatIssues } from '../schemas/issues.js';
import { PartnerError } from './base.js';

/** One failed check of a bridge batch. */
export interface VerificationIssue {
  /** Stable identifier of the check, e.g. `approve.amount`. */
  check: string;
  message: string;
  expected?: string;
  actual?: string;
}

/**
 * The batch does not do exactly what was asked: do not sign it. `issues` lists every failed check.
 *
 * @example
 * catch (e) { if (e instanceof BatchVerificationError) for (const i of e.issues) log(i.check, i.message); }
 */
export class BatchVerificationError extends PartnerError {
  override name = 'BatchVerificationError' as const;
  readonly issues: VerificationIssue[];

  constructor({ issues }: { issues: VerificationIssue[] }) {
    // Named by check, the one id a partner's alerting keys on.
    const named = issues.map((issue) => ({ path: issue.check, message: issue.message }));
    super(
      `Bridge batch rejected (${issues.length} issue${issues.length === 1 ? '' : 's'}): ${formatIssues(named, 3)}`,
    );
    this.issues = issues;
  }
}

/**
 * A submit went out, its answer did not say whether the service took it (a timeout, a lost
 * connection, an unreadable success, a 401, a gateway's 5xx, or the caller's abort), and reading
 * the transfer did not tell either. The original failure is the `cause`. Do not rebuild blindly:
 * look the transfer up (or `client.bridge.confirmOnChain`) first; sending the same intent again is
 * safe. With the source chain in the client's `chains`, `onChain` is what the chain said
 * (`pending`: the operation may still land; `unknown`: its nonce is used, the search found no
 * event), or undefined when the chain could not be read.
 *
 * @example
 * catch (e) { if (e instanceof SubmitOutcomeUnknownError) await queue.checkLater(e.transferId, e.userOpHash); }
 */
export class SubmitOutcomeUnknownError extends PartnerError {
  override name = 'SubmitOutcomeUnknownError' as const;
  readonly intentId: string;
  readonly transferId: string | undefined;
  readonly userOpHash: string | undefined;
  /** What the chain said of the operation, when the client has an RPC for its chain and it answered. */
  readonly onChain: UserOperationConfirmation | undefined;

  constructor(init: {
    intentId: string;
    transferId?: string | undefined;
    userOpHash?: string | undefined;
    onChain?: UserOperationConfirmation | undefined;
    cause?: unknown;
  }) {
    super(
      `The outcome of submitting intent ${init.intentId} is unknown; check transfer ${init.transferId ?? '(unknown)'} before rebuilding${
        init.onChain ? ` (on chain: ${init.onChain.status})` : ''
      }`,
      { cause: init.cause },
    );
    this.intentId = init.intentId;
    this.transferId = init.transferId;
    this.userOpHash = init.userOpHash;
    this.onChain = init.onChain;
  }
}

/**
 * The chain says a submitted operation can never execute: no `UserOperationEvent` for its hash
 * since the block before the submit, and the sender's EntryPoint nonce for its key is past the
 * operation's (another operation used it). Safe to build a new intent. `currentNonce` is
 * `getNonce(sender, key)`, the full value. The original failure of the submit is the `cause`.
 *
 * @example
 * catch (e) { if (e instanceof OperationSupersededError) return client.bridge.execute(params); // safe to rebuild
 * }
 */
export class OperationSupersededError extends PartnerError {
  override name = 'OperationSupersededError' as const;
  readonly intentId: string;
  readonly transferId: string;
  readonly userOpHash: string;
  readonly currentNonce: bigint;

  constructor(init: {
    intentId: string;
    transferId: string;
    userOpHash: string;
    currentNonce: bigint;
    cause?: unknown;
  }) {
    super(
      `The operation ${init.userOpHash} of intent ${init.intentId} can never execute: its nonce was used by another (the sender's nonce is now ${init.currentNonce})`,
      { cause: init.cause },
    );
    this.intentId = init.intentId;
    this.transferId = init.transferId;
    this.userOpHash = init.userOpHash;
    this.currentNonce = init.currentNonce;
  }
}

/**
 * The signer failed, or produced a signature that does not recover to its own address or that no
 * rewriting makes one the chain accepts; or `bridge.send` was given a signature the chain would
 * refuse (s above n/2, v other than 27 or 28). Nothing was sent.
 *
 * @example
 * catch (e) { if (e instanceof SigningError) log.error('check the KMS key behind the signer', e.cause); }
 */
export class SigningError extends PartnerError {
  override name = 'SigningError' as const;

  constructor({ message, cause }: { message: string; cause?: unknown }) {
    super(message, { cause });
  }
}
