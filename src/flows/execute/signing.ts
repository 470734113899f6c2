// Signing within the quote's life: the learned signing times of a client, and one bounded signing.
import { DEFAULTS } from '../../core/defaults.js';
import type { RequestOptions } from '../../core/request-options.js';
import { Deadline } from '../../core/time.js';
import { AbortError, TimeoutError } from '../../errors/client-errors.js';
import {
  type BridgeSigner,
  type SignedBridgeBatch,
  type SignerCallContext,
  signBridgeBatch,
} from '../../onchain/sign.js';
import type { VerifiedBridgeBatch } from '../../onchain/verify/verify.js';
import { signingSummary } from './signing-summary.js';

/** Samples kept per signer address: recent enough to follow a signer that got slower. */
const SAMPLES_PER_SIGNER = 20;
/** Signer addresses remembered; the least recently used goes first. */
const MAX_SIGNERS = 1_000;

/**
 * The signing times of a client and every client `withOptions` made from it, by signer address:
 * what a quote's time left is compared to before a signer is called. A late or aborted signing
 * counts with the time it had taken, so a signer that never finishes in time is known as slow.
 */
export class SigningTimes {
  readonly #times = new Map<string, number[]>();

  record(address: string, elapsedMs: number): void {
    const key = address.toLowerCase();
    const samples = this.#times.get(key) ?? [];
    this.#times.delete(key);
    samples.push(elapsedMs);
    if (samples.length > SAMPLES_PER_SIGNER) samples.shift();
    this.#times.set(key, samples);
    if (this.#times.size > MAX_SIGNERS) this.#times.delete(this.#times.keys().next().value as string);
  }

  /** The learned budget: the percentile of the samples once enough are known, else undefined. */
  budgetMs(address: string): number | undefined {
    const samples = this.#times.get(address.toLowerCase());
    if (!samples || samples.length < DEFAULTS.signing.learnedMinSamples) return undefined;
    const sorted = [...samples].sort((a, b) => a - b);
    const rank = Math.ceil((DEFAULTS.signing.learnedPercentile / 100) * sorted.length) - 1;
    return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
  }
}

/** How one signing ended: signed in time, given up before the signer was called, or late. */
export type SigningOutcome =
  | { kind: 'signed'; signed: SignedBridgeBatch }
  | { kind: 'too-slow'; budgetMs: number | undefined; leftMs: number }
  | { kind: 'late'; budgetMs: number | undefined; leftMs: number; elapsedMs: number };

export interface SignInTime {
  verified: VerifiedBridgeBatch;
  signer: BridgeSigner;
  /** The deadline of the signature (epoch ms): the quote's expiry less the submit margin. */
  deadlineAt: number;
  /** `signing.budgetMs` as given, else learned from `times`. */
  budgetMs: number | undefined;
  times: SigningTimes;
  /** Called once the signer is called: from then on a signature counts as existing. */
  onSignerCalled: () => void;
  options: RequestOptions | undefined;
}

const LATE = Symbol('late');

/**
 * Signs within the quote's life, the call's `signal` and its `timeoutMs`: the signer is not called
 * when the time left is below the budget, is told by its `signal` when the deadline passes, and
 * what it answers after that is dropped.
 */
export async function signInTime(input: SignInTime): Promise<SigningOutcome> {
  const { verified, options } = input;
  const signal = options?.signal;
  const aborted = () => new AbortError({ cause: signal?.reason });
  const budgetMs = input.budgetMs ?? input.times.budgetMs(input.signer.address);
  const leftMs = input.deadlineAt - Date.now();
  if (leftMs <= 0 || (budgetMs !== undefined && leftMs < budgetMs))
    return { kind: 'too-slow', budgetMs, leftMs };
  if (signal?.aborted) throw aborted();
  const timeoutMs = options?.timeoutMs ?? Number.POSITIVE_INFINITY;
  const lateFirst = leftMs <= timeoutMs;
  const deadline = new Deadline(Math.min(leftMs, timeoutMs), signal, {
    timedOut: () =>
      lateFirst ? LATE : new TimeoutError({ method: 'bridge.execute', path: 'sign', timeoutMs }),
    aborted,
  });
  const context: SignerCallContext = { signal: deadline.signal, summary: signingSummary(verified) };
  let startedAt: number | undefined;
  const started = () => {
    if (startedAt === undefined) {
      startedAt = performance.now();
      input.onSignerCalled();
    }
  };
  const { signer } = input;
  const bound: BridgeSigner = {
    address: signer.address,
    signMessage: (args) => {
      started();
      return signer.signMessage(args, context);
    },
    ...(signer.signAuthorization
      ? {
          signAuthorization: (args) => {
            started();
            return signer.signAuthorization!(args, context);
          },
        }
      : {}),
  };
  try {
    return { kind: 'signed', signed: await deadline.race(signBridgeBatch({ verified, signer: bound })) };
  } catch (error) {
    if (error !== LATE) throw error;
    return {
      kind: 'late',
      budgetMs,
      leftMs,
      elapsedMs: startedAt === undefined ? 0 : Math.round(performance.now() - startedAt),
    };
  } finally {
    deadline.clear();
    if (startedAt !== undefined) input.times.record(signer.address, performance.now() - startedAt);
  }
}
