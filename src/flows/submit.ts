import type { RequestOptions } from '../core/request-options.js';
import { sleep } from '../core/time.js';
import {
  ApiError,
  AuthenticationError,
  IntentNotFoundError,
  ServiceUnavailableError,
} from '../errors/api-error.js';
import { isPartnerError } from '../errors/base.js';
import { OperationSupersededError, SubmitOutcomeUnknownError } from '../errors/bridge-errors.js';
import {
  AbortError,
  ConnectionError,
  ResponseValidationError,
  TimeoutError,
} from '../errors/client-errors.js';
import { isRetryable } from '../http/retry.js';
import { ENDPOINTS } from '../resources/endpoints.js';
import type { BridgeSendResult, BridgeTransfer } from '../schemas/bridge.js';
import type { UserOperationConfirmation, UserOperationIncluded } from '../schemas/chain.js';
import type { Hex } from '../schemas/common.js';
import type { Issue } from '../schemas/issues.js';

/**
 * What a submit resolves with: the service's ids, and, when an unclear outcome was settled by the
 * chain (the client's `chains`), the operation's `UserOperationEvent` (`onChain.success` false: its
 * calls reverted, the transfer will end `failed`).
 */
export type SubmitResult = BridgeSendResult & { onChain?: UserOperationIncluded };

/** A submit the service took: its result, and the answer that result came from. */
export interface TakenSubmit {
  result: SubmitResult;
  response: Response | undefined;
  requestId: string | undefined;
}

/** What the client remembers of an intent it constructed, to find out what became of a submit. */
export interface KnownIntent {
  userId: string;
  transferId: string;
  userOpHash: Hex;
  /** The operation's chain, EntryPoint, sender and nonce: what the chain is asked after an unclear submit. */
  operation?: { chainId: number; entryPoint: string; sender: string; nonce: bigint };
  /** Set once a submit of the intent is known to be taken: a re-send returns it, sending nothing. */
  taken?: TakenSubmit;
}

/** Intents live minutes at most; this bounds memory for a long-running process. */
const MAX_INTENTS = 1_000;

/**
 * The intents a client and every client derived from it built or submitted lately, by intent id,
 * oldest dropped first. Shared like the token cache: whichever of them submits, any of them can
 * find out what became of the submit, and none of them submits a taken intent again.
 */
export class IntentMemory {
  readonly #intents = new Map<string, KnownIntent>();

  remember(intentId: string, intent: KnownIntent): void {
    this.#intents.delete(intentId);
    this.#intents.set(intentId, intent);
    if (this.#intents.size > MAX_INTENTS) this.#intents.delete(this.#intents.keys().next().value as string);
  }

  /** Records that the service took a submit of `intentId` for `userId`. */
  taken(intentId: string, userId: string, taken: TakenSubmit): void {
    const { transferId, userOpHash } = taken.result;
    this.remember(intentId, { userId, transferId, userOpHash, taken });
  }

  get(intentId: string): KnownIntent | undefined {
    return this.#intents.get(intentId);
  }
}

/**
 * True when a submit that went out may or may not have been taken: no answer, a success that cannot
 * be read (the status says taken, the body cannot confirm which transfer), the caller leaving
 * before the answer, a 401 (replaying it with a new token would be a second submit), or a 5xx. Of
 * the 5xx only the service's own 503, in its JSON envelope, is a clear "not now": a gateway's 503
 * page says nothing about whether the service acted. A 4xx is a clear refusal.
 */
export function outcomeUnknown(error: unknown): boolean {
  if (
    error instanceof TimeoutError ||
    error instanceof ConnectionError ||
    error instanceof AbortError ||
    error instanceof ResponseValidationError ||
    error instanceof AuthenticationError
  )
    return true;
  const serviceRefusal =
    error instanceof ServiceUnavailableError && error.code !== undefined && error.statusText !== undefined;
  return error instanceof ApiError && error.status >= 500 && error.status <= 599 && !serviceRefusal;
}

/** True for an answer refused as not the one asked for: read again, it may be right next time. */
export function isAnswerMismatch(error: unknown): error is ResponseValidationError {
  return error instanceof ResponseValidationError && error.mismatched.length > 0;
}

/**
 * Refuses a submit's answer that names another transfer or user operation than the batch this
 * client built for the intent: the service's answer is then no word on this submit, whose outcome
 * is found out as any unclear one.
 */
export function refuseOtherSubmit(result: BridgeSendResult, known: KnownIntent, status: number): void {
  const issues: Issue[] = [];
  if (result.transferId !== known.transferId)
    issues.push({ path: 'data.transferId', message: 'is not the transfer of the batch sent' });
  if (result.userOpHash.toLowerCase() !== known.userOpHash.toLowerCase())
    issues.push({ path: 'data.userOpHash', message: 'is not the hash of the batch sent' });
  if (issues.length === 0) return;
  throw ResponseValidationError.mismatch({
    method: 'POST',
    path: ENDPOINTS.send.path,
    status,
    issues,
  });
}

/** The ids that let a caller look up what became of a submit. */
export interface SubmitIds {
  intentId: string;
  transferId: string;
  userOpHash: Hex;
}

/**
 * Gives an error thrown once a submit went out the ids to look its transfer up, whatever its class:
 * a caller who retries the whole flow without them may bridge twice.
 */
export function withSubmitIds(error: unknown, ids: SubmitIds): unknown {
  if (!isPartnerError(error)) return error;
  const target = error as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(ids)) if (target[key] === undefined) target[key] = value;
  return error;
}

/** Reads after an unclear submit, spaced out: the service may need a moment to record it. */
const OUTCOME_READ_DELAYS_MS = [0, 500, 1_500, 3_000];
/**
 * After the caller aborted, the one read made to find out what happened: it cannot use the aborted
 * signal, and a caller who asked to stop waits for no schedule, only this bounded look.
 */
const OUTCOME_CHECK_AFTER_ABORT_MS = 2_000;

/**
 * Finds out whether a submit that failed unclearly (or was answered "spent") went through, by
 * reading the transfer with `read` (which reports its answers to the submit's caller). Never
 * submits again.
 */
export async function resolveSubmitOutcome(
  intentId: string,
  known: KnownIntent | undefined,
  cause: unknown,
  read: (userId: string, transferId: string, options: RequestOptions) => Promise<BridgeTransfer>,
  options: RequestOptions | undefined,
): Promise<BridgeSendResult> {
  const unknown = () =>
    new SubmitOutcomeUnknownError({
      intentId,
      transferId: known?.transferId,
      userOpHash: known?.userOpHash,
      cause,
    });
  if (!known) throw cause instanceof IntentNotFoundError ? cause : unknown();
  const aborted = options?.signal?.aborted === true;
  const checkMs = Math.min(options?.timeoutMs ?? OUTCOME_CHECK_AFTER_ABORT_MS, OUTCOME_CHECK_AFTER_ABORT_MS);
  // The schedule is the retry: each read is one attempt, so that four reads stay four and the
  // whole resolution stays within the waits plus four times the call's attempt time.
  const readOptions = (): RequestOptions =>
    aborted
      ? { signal: AbortSignal.timeout(checkMs), timeoutMs: checkMs, maxRetries: 0 }
      : {
          ...(options?.signal ? { signal: options.signal } : {}),
          ...(options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
          maxRetries: 0,
        };
  for (const delay of aborted ? [0] : OUTCOME_READ_DELAYS_MS) {
    if (delay > 0) {
      try {
        await sleep(delay, options?.signal, unknown);
      } catch {
        break;
      }
    }
    let transfer: BridgeTransfer;
    try {
      transfer = await read(known.userId, known.transferId, readOptions());
    } catch (error) {
      // A refused read (a stopped credential, a missing scope) is refused again later; an answer
      // naming another transfer may be right on the next read.
      if (!isRetryable(error) && !isAnswerMismatch(error)) break;
      continue;
    }
    if (transfer.status === 'expired') break;
    if (transfer.status !== 'pending') return { transferId: known.transferId, userOpHash: known.userOpHash };
  }
  // A spent intent whose transfer never left `pending` (or expired) is the service's clear answer.
  if (cause instanceof IntentNotFoundError) throw cause;
  throw unknown();
}

/**
 * After the reads could not settle an unclear submit (`failure`: the `SubmitOutcomeUnknownError`,
 * or the `IntentNotFoundError` of a spent intent whose transfer never moved), asks the chain:
 * `included` settles it (reverted too: the transfer exists and will end `failed`), `superseded` is
 * an `OperationSupersededError` (safe to rebuild), `pending` and `unknown` keep the failure, an
 * unclear outcome carrying `onChain`. A chain that cannot be read leaves the failure as it was.
 */
export async function settleOnChain(
  intentId: string,
  known: KnownIntent,
  failure: unknown,
  confirm: () => Promise<UserOperationConfirmation>,
): Promise<SubmitResult> {
  let onChain: UserOperationConfirmation;
  try {
    onChain = await confirm();
  } catch {
    throw failure;
  }
  const { transferId, userOpHash } = known;
  const cause = failure instanceof SubmitOutcomeUnknownError ? failure.cause : failure;
  if (onChain.status === 'included') return { transferId, userOpHash, onChain };
  if (onChain.status === 'superseded')
    throw new OperationSupersededError({
      intentId,
      transferId,
      userOpHash,
      currentNonce: onChain.currentNonce,
      cause,
    });
  if (!(failure instanceof SubmitOutcomeUnknownError)) throw failure;
  throw new SubmitOutcomeUnknownError({ intentId, transferId, userOpHash, onChain, cause });
}
