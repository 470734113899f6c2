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
 * look the transfer up (or confirm `userOpHash` on chain) first; sending the same intent again is
 * safe.
 *
 * @example
 * catch (e) { if (e instanceof SubmitOutcomeUnknownError) await queue.checkLater(e.transferId, e.userOpHash); }
 */
export class SubmitOutcomeUnknownError extends PartnerError {
  override name = 'SubmitOutcomeUnknownError' as const;
  readonly intentId: string;
  readonly transferId: string | undefined;
  readonly userOpHash: string | undefined;

  constructor(init: {
    intentId: string;
    transferId?: string | undefined;
    userOpHash?: string | undefined;
    cause?: unknown;
  }) {
    super(
      `The outcome of submitting intent ${init.intentId} is unknown; check transfer ${init.transferId ?? '(unknown)'} before rebuilding`,
      { cause: init.cause },
    );
    this.intentId = init.intentId;
    this.transferId = init.transferId;
    this.userOpHash = init.userOpHash;
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
