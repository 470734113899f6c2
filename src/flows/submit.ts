import type { RequestOptions } from '../core/request-options.js';
import { ApiError, IntentNotFoundError } from '../errors/api-error.js';
import { SubmitOutcomeUnknownError } from '../errors/bridge-errors.js';
import { ConnectionError, TimeoutError } from '../errors/client-errors.js';
import { sleep } from '../http/abort.js';
import type { BridgeSendResult, BridgeTransfer } from '../schemas/bridge.js';
import type { Hex } from '../schemas/common.js';

/** What the client remembers of an intent it constructed, to find out what became of a submit. */
export interface KnownIntent {
  userId: string;
  transferId: string;
  userOpHash: Hex;
}

/** Intents live minutes at most; this bounds memory for a long-running process. */
const MAX_INTENTS = 1_000;

/** The intents this client built lately, by intent id, oldest dropped first. */
export class IntentMemory {
  readonly #intents = new Map<string, KnownIntent>();

  remember(intentId: string, intent: KnownIntent): void {
    this.#intents.delete(intentId);
    this.#intents.set(intentId, intent);
    if (this.#intents.size > MAX_INTENTS) this.#intents.delete(this.#intents.keys().next().value as string);
  }

  get(intentId: string): KnownIntent | undefined {
    return this.#intents.get(intentId);
  }
}

/**
 * True when a submit may or may not have reached the service: no answer, or a gateway answering
 * for it. A 503 is the service's own "not now", and a 4xx a clear refusal.
 */
export function outcomeUnknown(error: unknown): boolean {
  if (error instanceof TimeoutError || error instanceof ConnectionError) return true;
  return error instanceof ApiError && error.status >= 500 && error.status !== 503;
}

/** Reads after an unclear submit, spaced out: the service may need a moment to record it. */
const OUTCOME_READ_DELAYS_MS = [0, 500, 1_500, 3_000];

/**
 * Finds out whether a submit that failed unclearly (or was answered "spent") went through, by
 * reading the transfer. Never submits again.
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
  for (const delay of OUTCOME_READ_DELAYS_MS) {
    if (delay > 0) {
      try {
        await sleep(delay, options?.signal, unknown);
      } catch {
        break;
      }
    }
    let transfer: BridgeTransfer;
    try {
      transfer = await read(known.userId, known.transferId, {
        ...(options?.signal ? { signal: options.signal } : {}),
      });
    } catch {
      continue;
    }
    if (transfer.status === 'expired') break;
    if (transfer.status !== 'pending') return { transferId: known.transferId, userOpHash: known.userOpHash };
  }
  // A spent intent whose transfer never left `pending` (or expired) is the service's clear answer.
  if (cause instanceof IntentNotFoundError) throw cause;
  throw unknown();
}
