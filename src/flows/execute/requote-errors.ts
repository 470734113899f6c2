import { PartnerError } from '../../errors/base.js';
import type { QuoteChange } from '../../onchain/quote-change.js';
import type { VerifiedBridgeBatch } from '../../onchain/verify/verify.js';

/** Why quote-aware `execute` built a batch again. */
export type RequoteReason = 'expiring' | 'signer-late' | 'service-503' | 'intent-expired';

/** The ids of one batch `execute` built: what a partner looks up or logs. */
export interface BuiltIntent {
  intentId: string;
  transferId: string;
  userOpHash: string;
}

/**
 * A rebuilt quote moved outside the tolerances of `requote` against the baseline (the first
 * verified batch or `requote.baseline`), and no `accept` agreed to it in time (none given, it said
 * no, or it outlived `consentTimeoutMs`). Nothing was signed or sent for `intentId`. `baseline` and
 * `next` are the two verified batches, `change` each figure of `next` against `baseline`.
 *
 * @example
 * catch (e) { if (e instanceof QuoteChangedError) notify(`amountOut moved ${e.change.amountOut.deltaBps} bps`); }
 */
export class QuoteChangedError extends PartnerError {
  override name = 'QuoteChangedError' as const;
  readonly code = 'QUOTE_CHANGED' as const;
  readonly baseline: VerifiedBridgeBatch;
  readonly next: VerifiedBridgeBatch;
  readonly change: QuoteChange;
  readonly intentId: string;
  readonly transferId: string;
  readonly reasons: string[];

  constructor(init: {
    baseline: VerifiedBridgeBatch;
    next: VerifiedBridgeBatch;
    change: QuoteChange;
    intent: BuiltIntent;
    reasons: string[];
    cause?: unknown;
  }) {
    super(
      `QUOTE_CHANGED: the quote of intent ${init.intent.intentId} moved outside the tolerances (${init.reasons.join('; ')}) and was not accepted; nothing was signed or sent for it`,
      { cause: init.cause },
    );
    this.baseline = init.baseline;
    this.next = init.next;
    this.change = init.change;
    this.intentId = init.intent.intentId;
    this.transferId = init.intent.transferId;
    this.reasons = init.reasons;
  }
}

/**
 * `execute` built the batch `attempts` times (the first construct and `requote.maxAttempts`
 * rebuilds) and none could be signed and submitted in time; `reasons` says why each was given up,
 * in order, and `intents` which were built. No signature was submitted: each of them expires.
 *
 * @example
 * catch (e) { if (e instanceof RequoteExhaustedError) log.warn({ attempts: e.attempts, reasons: e.reasons }); }
 */
export class RequoteExhaustedError extends PartnerError {
  override name = 'RequoteExhaustedError' as const;
  readonly code = 'REQUOTE_EXHAUSTED' as const;
  /** The batches built: the first construct and each rebuild (not requests, as elsewhere). */
  override readonly attempts: number;
  readonly reasons: RequoteReason[];
  readonly intents: BuiltIntent[];

  constructor(init: { attempts: number; reasons: RequoteReason[]; intents: BuiltIntent[]; cause?: unknown }) {
    super(
      `REQUOTE_EXHAUSTED: ${init.attempts} batch${init.attempts === 1 ? '' : 'es'} built, none signed in time (${init.reasons.join(', ')}); no signature was submitted`,
      { cause: init.cause },
    );
    this.attempts = init.attempts;
    this.reasons = init.reasons;
    this.intents = init.intents;
  }
}

/** The sender and EntryPoint nonce of a user operation (nonce as `key << 64 | sequence`). */
export interface OperationNonce {
  sender: string;
  nonce: bigint;
}

/**
 * A rebuilt batch would let two operations execute: a signature already exists for an earlier
 * operation of this `execute` (`signedIntentId`), and the rebuilt one has another sender or nonce
 * (or another EIP-7702 authorization nonce), so the EntryPoint could run both. The rebuilt intent
 * `intentId` was not signed; the earlier signature was never submitted, but it exists: check
 * `signedUserOpHash` on chain before building anything else.
 *
 * @example
 * catch (e) { if (e instanceof RequoteNonceError) alert(`do not rebuild: ${e.signedUserOpHash} was signed`); }
 */
export class RequoteNonceError extends PartnerError {
  override name = 'RequoteNonceError' as const;
  readonly code = 'REQUOTE_NONCE' as const;
  readonly intentId: string;
  readonly signedIntentId: string;
  readonly signedUserOpHash: string;
  readonly expected: OperationNonce;
  readonly actual: OperationNonce;

  constructor(init: {
    intentId: string;
    signed: BuiltIntent;
    expected: OperationNonce;
    actual: OperationNonce;
    what?: string;
  }) {
    super(
      `REQUOTE_NONCE: the rebuilt intent ${init.intentId} has ${init.what ?? `sender ${init.actual.sender} nonce ${init.actual.nonce}`} where the signed intent ${init.signed.intentId} has ${init.what ? 'another' : `sender ${init.expected.sender} nonce ${init.expected.nonce}`}: both could execute, so it was not signed`,
    );
    this.intentId = init.intentId;
    this.signedIntentId = init.signed.intentId;
    this.signedUserOpHash = init.signed.userOpHash;
    this.expected = init.expected;
    this.actual = init.actual;
  }
}

/**
 * Without a `requote` option, the quote of `intentId` could not be signed in time: its time left
 * (`leftMs`, to the quote's expiry less `signing.submitMarginMs`) was below the signing budget
 * (`budgetMs`) so the signer was not called (`elapsedMs` 0), or the signer took `elapsedMs` and
 * missed that deadline, its signature discarded. Nothing was sent. Pass `requote` to rebuild.
 *
 * @example
 * catch (e) { if (e instanceof SigningTooSlowError) log.warn(`signer needs ${e.budgetMs} ms, had ${e.leftMs}`); }
 */
export class SigningTooSlowError extends PartnerError {
  override name = 'SigningTooSlowError' as const;
  readonly code = 'SIGNING_TOO_SLOW' as const;
  readonly budgetMs: number | undefined;
  readonly elapsedMs: number;
  readonly leftMs: number;
  readonly intentId: string;
  readonly transferId: string;

  constructor(init: {
    budgetMs: number | undefined;
    elapsedMs: number;
    leftMs: number;
    intent: BuiltIntent;
  }) {
    const why =
      init.elapsedMs === 0
        ? `the signing budget of ${init.budgetMs} ms exceeds the ${init.leftMs} ms left`
        : `the signer took ${init.elapsedMs} ms of the ${init.leftMs} ms left`;
    super(
      `SIGNING_TOO_SLOW: intent ${init.intent.intentId} could not be signed in time (${why}); nothing was sent`,
    );
    this.budgetMs = init.budgetMs;
    this.elapsedMs = init.elapsedMs;
    this.leftMs = init.leftMs;
    this.intentId = init.intent.intentId;
    this.transferId = init.intent.transferId;
  }
}
