// A rebuilt batch against the baseline: pinned facts, tolerances, and a person's consent in time.

import { Deadline } from '../../core/time.js';
import { BatchVerificationError } from '../../errors/bridge-errors.js';
import { AbortError } from '../../errors/client-errors.js';
import {
  outsideTolerance,
  pinnedDifferences,
  type QuoteChange,
  quoteChange,
} from '../../onchain/quote-change.js';
import type { VerifiedBridgeBatch } from '../../onchain/verify/verify.js';
import type { ExecutePolicy } from './options.js';
import { type BuiltIntent, QuoteChangedError, type RequoteReason } from './requote-errors.js';
import type { ExecuteProgress } from './types.js';

/** What the tolerances are anchored to: what the person agreed to, first or last. */
export interface Baseline {
  baseline: VerifiedBridgeBatch | undefined;
}

export interface AgreeOptions {
  requote: NonNullable<ExecutePolicy['requote']>;
  minAmountOutRaw: bigint | undefined;
  /** Set on a rebuild: reported as `requoted` with the change. */
  rebuilt: { attempt: number; reason: RequoteReason } | undefined;
  report: (progress: ExecuteProgress) => void;
  signal: AbortSignal | undefined;
}

const NO_ANSWER = Symbol('no answer');

/**
 * Lets `next` be signed only when it keeps what may never change, and moved within the tolerances
 * of the baseline or `accept` agreed in time (then it becomes the baseline: the person agreed to
 * it). The first verified batch is the baseline when none was given.
 */
export async function agreeWithBaseline(
  state: Baseline,
  next: VerifiedBridgeBatch,
  intent: BuiltIntent,
  options: AgreeOptions,
): Promise<void> {
  state.baseline ??= next;
  const baseline = state.baseline;
  const pinned = pinnedDifferences(baseline, next);
  if (pinned.length > 0) {
    throw new BatchVerificationError({
      issues: pinned.map(([field, expected, actual]) => ({
        check: `requote.${field}`,
        message: `${field} differs from the baseline: a rebuild may change prices and times, never this`,
        expected,
        actual,
      })),
    });
  }
  const change = quoteChange(baseline, next);
  if (options.rebuilt) options.report({ step: 'requoted', ...options.rebuilt, change });
  const { requote } = options;
  const reasons = outsideTolerance(
    change,
    {
      minAmountOutRaw: options.minAmountOutRaw,
      maxOutputDropBps: requote.maxOutputDropBps,
      maxFeeIncreaseBps: requote.maxFeeIncreaseBps,
    },
    baseline.source.amountRaw,
  );
  if (reasons.length === 0) return;
  const refused = (cause?: unknown) =>
    new QuoteChangedError({ baseline, next, change, intent, reasons, ...(cause ? { cause } : {}) });
  if (!requote.accept) throw refused();
  const answer = await ask(requote.accept, change, baseline, next, requote.consentTimeoutMs, options.signal);
  if (answer !== true) throw refused(answer === false ? undefined : answer);
  state.baseline = next;
}

/**
 * `accept`'s answer within `consentTimeoutMs`: true, false (a no, or no answer in time), or what it
 * threw. The caller's abort ends the call.
 */
async function ask(
  accept: NonNullable<NonNullable<ExecutePolicy['requote']>['accept']>,
  change: QuoteChange,
  baseline: VerifiedBridgeBatch,
  next: VerifiedBridgeBatch,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const deadline = new Deadline(timeoutMs, signal, {
    timedOut: () => NO_ANSWER,
    aborted: () => new AbortError({ cause: signal?.reason }),
  });
  try {
    const asked = Promise.resolve().then(() => accept(change, { signal: deadline.signal, baseline, next }));
    return (await deadline.race(asked)) === true;
  } catch (error) {
    if (error === NO_ANSWER) return false;
    if (error instanceof AbortError && signal?.aborted) throw error;
    return error;
  } finally {
    deadline.clear();
  }
}
