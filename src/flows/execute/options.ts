// The `requote` and `signing` options of `bridge.execute`: their types, and their check before any request.
import * as z from 'zod';
import { decimalLiteral } from '../../core/amounts.js';
import { parseArgs } from '../../core/args.js';
import { DEFAULTS, withDefaults } from '../../core/defaults.js';
import type { QuoteChange } from '../../onchain/quote-change.js';
import { verifiedRecord } from '../../onchain/verified.js';
import type { VerifiedBridgeBatch } from '../../onchain/verify/verify.js';

/** What `requote.accept` is told besides the change. */
export interface AcceptContext {
  /** Fires when `consentTimeoutMs` is over or the call is aborted: stop asking then. */
  signal: AbortSignal;
  /** The verified batch the tolerances are anchored to. */
  baseline: VerifiedBridgeBatch;
  /** The rebuilt verified batch the change leads to. */
  next: VerifiedBridgeBatch;
}

/**
 * How `bridge.execute` rebuilds a batch whose quote could not be signed in time, and what a rebuild
 * may change without asking. Every rebuild is verified again and compared to the baseline (the
 * first verified batch, or `baseline`), never to the attempt before it.
 *
 * @example
 * requote: { maxAttempts: 2, maxOutputDropBps: 50, maxFeeIncreaseBps: 20, accept: (change) => askApprover(change) }
 */
export interface RequoteOptions {
  /**
   * Rebuilds after the first construct.
   * @default DEFAULTS.requote.maxAttempts
   */
  maxAttempts?: number;
  /** The least `amountOut` ever signed, a decimal in destination units, whatever the baseline. */
  minAmountOut?: string;
  /**
   * The largest drop of `amountOut` below the baseline's, in bps of the baseline's, taken without asking.
   * @default DEFAULTS.requote.maxOutputDropBps
   */
  maxOutputDropBps?: number;
  /**
   * The largest rise of provider plus gas fee above the baseline's, in bps of the amount, taken without asking.
   * @default DEFAULTS.requote.maxFeeIncreaseBps
   */
  maxFeeIncreaseBps?: number;
  /**
   * Asked only about a change outside the tolerances; true makes the rebuilt batch the new
   * baseline. Without it such a change is a `QuoteChangedError`.
   * @example accept: async (change, { signal }) => approvals.ask(describeQuoteChange(change), { signal })
   */
  accept?: (change: QuoteChange, context: AcceptContext) => boolean | Promise<boolean>;
  /**
   * The time `accept` has to answer (no answer is a no); it counts against the new quote's life: a
   * quote that did not outlive the consent is built again, never signed.
   * @default DEFAULTS.requote.consentTimeoutMs
   */
  consentTimeoutMs?: number;
  /**
   * What the person agreed to, as `verifyBridgeBatch` returned it; else the first verified batch.
   * @example requote: { baseline: verifiedShownToTheUser }
   */
  baseline?: VerifiedBridgeBatch;
}

/**
 * The time a signer is given.
 *
 * @example
 * signing: { budgetMs: 45_000, submitMarginMs: 5_000 } // an approval that takes up to 45 s
 */
export interface SigningOptions {
  /**
   * The signer is not called when the quote's time left (less `submitMarginMs`) is below this.
   * Without it: the 95th percentile of this client's past signing times for the signer's address
   * once 3 are known, else no check before signing (the deadline still aborts it).
   */
  budgetMs?: number;
  /**
   * Time kept before the quote's expiry to submit: the signer's `signal` fires there, and a
   * signature that comes later is discarded, never sent.
   * @default DEFAULTS.signing.submitMarginMs
   */
  submitMarginMs?: number;
}

/** The options as checked, with their defaults. */
export interface ExecutePolicy {
  requote:
    | {
        maxAttempts: number;
        minAmountOut: string | undefined;
        maxOutputDropBps: number;
        maxFeeIncreaseBps: number;
        accept: RequoteOptions['accept'];
        consentTimeoutMs: number;
        /** The wait before rebuilding after a 503 without `Retry-After` (`DEFAULTS.requote`; no option). */
        backoffMs: number;
        baseline: VerifiedBridgeBatch | undefined;
      }
    | undefined;
  signing: { budgetMs: number | undefined; submitMarginMs: number };
}

const MAX_MS = 2 ** 31 - 1;
const ms = z
  .number({ error: 'must be a number of milliseconds' })
  .nonnegative('must not be negative')
  .max(MAX_MS, `must be at most ${MAX_MS}`);
const bps = z.int({ error: 'must be a whole number of basis points' }).min(0).max(10_000);

const schema = z.object({
  requote: z
    .strictObject({
      maxAttempts: z.int({ error: 'must be a whole number' }).min(0).max(20).optional(),
      minAmountOut: z
        .string({ error: 'must be a decimal string' })
        .superRefine((value, ctx) => {
          const read = decimalLiteral(value);
          if ('error' in read) ctx.addIssue({ code: 'custom', message: read.error });
        })
        .optional(),
      maxOutputDropBps: bps.optional(),
      maxFeeIncreaseBps: bps.optional(),
      accept: z
        .custom<RequoteOptions['accept']>((v) => typeof v === 'function', 'must be a function')
        .optional(),
      consentTimeoutMs: ms.positive('must be positive').optional(),
      baseline: z
        .custom<VerifiedBridgeBatch>(
          (v) => verifiedRecord(v) !== undefined,
          'must be a batch verifyBridgeBatch returned',
        )
        .optional(),
    })
    .optional(),
  signing: z.strictObject({ budgetMs: ms.optional(), submitMarginMs: ms.optional() }).optional(),
});

/** Checks `requote` and `signing` (an `ArgumentError` naming each problem) and fills in the defaults. */
export function executePolicy(requote: unknown, signing: unknown): ExecutePolicy {
  const checked = parseArgs(schema, { requote, signing }, 'bridge.execute');
  const given = checked.requote;
  return {
    requote: given && {
      ...withDefaults(DEFAULTS.requote, given),
      minAmountOut: given.minAmountOut?.trim(),
      accept: given.accept,
      baseline: given.baseline,
    },
    signing: { ...withDefaults(DEFAULTS.signing, checked.signing), budgetMs: checked.signing?.budgetMs },
  };
}
