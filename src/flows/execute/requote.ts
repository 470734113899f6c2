// The builds of one `bridge.execute`: construct → verify → compare to the baseline → sign in time →
// send, and again (within `requote`) when the quote could not be signed in time.
import { toRawAmount } from '../../core/amounts.js';
import { DEFAULTS } from '../../core/defaults.js';
import type { RequestOptions } from '../../core/request-options.js';
import { sleep } from '../../core/time.js';
import type { ExecuteTracker } from '../../core/tracking.js';
import { IntentNotFoundError, ServiceUnavailableError } from '../../errors/api-error.js';
import { BatchVerificationError, SubmitOutcomeUnknownError } from '../../errors/bridge-errors.js';
import { AbortError } from '../../errors/client-errors.js';
import type { SpanRunner } from '../../http/tracing.js';
import { quantity, sameAddress } from '../../onchain/hex.js';
import type { BridgeSigner } from '../../onchain/sign.js';
import {
  type VerifiedBridgeBatch,
  type VerifyBridgeBatchOptions,
  verifyBridgeBatch,
} from '../../onchain/verify/verify.js';
import type { ConstructArgs } from '../../resources/params.js';
import type { BridgeConstructResult, BridgeRoute } from '../../schemas/bridge.js';
import { withSubmitIds } from '../submit.js';
import { agreeWithBaseline, type Baseline } from './consent.js';
import type { ExecutePolicy } from './options.js';
import {
  type BuiltIntent,
  type OperationNonce,
  RequoteExhaustedError,
  RequoteNonceError,
  type RequoteReason,
  SigningTooSlowError,
} from './requote-errors.js';
import { SigningTimes, signInTime } from './signing.js';
import { trackBeforeSigning } from './tracking.js';
import type { BridgeExecuteResult, ExecuteProgress, ExecuteSteps } from './types.js';

/** Everything one `execute` call decided before its first construct. */
export interface ExecuteRun {
  steps: ExecuteSteps;
  /** The construct arguments as `execute` checked them, sent as they are at each build. */
  args: ConstructArgs;
  /** The amount asked for, as checked; undefined for a `maxAmount` construct. */
  amount: string | undefined;
  route: BridgeRoute;
  wallet: string;
  signer: BridgeSigner;
  verify: VerifyBridgeBatchOptions | undefined;
  policy: ExecutePolicy;
  /** Records each constructed transfer before anything of it is signed. */
  tracker: ExecuteTracker | undefined;
  report: (progress: ExecuteProgress) => void;
  span: SpanRunner;
  options: RequestOptions | undefined;
}

/** The first operation a signature exists for (from the moment the signer was called). */
interface SignedOperation extends OperationNonce {
  intent: BuiltIntent;
  authorization: { chainId: number; address: string; nonce: number } | null;
}

interface RunState extends Baseline {
  reasons: RequoteReason[];
  intents: BuiltIntent[];
  signed: SignedOperation | undefined;
}

type Build =
  | { done: BridgeExecuteResult }
  | { rebuild: RequoteReason; error: unknown; retryAfterMs?: number };

/** A client's signing times when the caller gave none (a bare `executeBridge`): learned per call. */
const unshared = () => new SigningTimes();

/**
 * Builds, verifies, signs and sends; with `requote`, builds again (up to `maxAttempts` times)
 * when the quote could not be signed or submitted in time. Without it, what would have been a
 * rebuild is the error of that step.
 */
export async function runBuilds(run: ExecuteRun): Promise<BridgeExecuteResult> {
  const requote = run.policy.requote;
  const state: RunState = { baseline: requote?.baseline, reasons: [], intents: [], signed: undefined };
  const times = run.steps.signingTimes ?? unshared();
  let reason: RequoteReason | undefined;
  for (let build = 1; ; build++) {
    const outcome = await buildOnce(run, state, times, build, reason);
    if ('done' in outcome) return outcome.done;
    if (!requote) throw outcome.error;
    state.reasons.push(outcome.rebuild);
    if (build > requote.maxAttempts) {
      throw new RequoteExhaustedError({
        attempts: build,
        reasons: state.reasons,
        intents: state.intents,
        cause: outcome.error,
      });
    }
    reason = outcome.rebuild;
    if (reason === 'service-503') {
      const waitMs = Math.min(outcome.retryAfterMs ?? requote.backoffMs, DEFAULTS.retry.maxRetryAfterMs);
      const signal = run.options?.signal;
      await sleep(waitMs, signal, () => new AbortError({ cause: signal?.reason }));
    }
  }
}

/** One build: what it ended with, or why to build again. */
async function buildOnce(
  run: ExecuteRun,
  state: RunState,
  times: SigningTimes,
  build: number,
  reason: RequoteReason | undefined,
): Promise<Build> {
  const { steps, options, policy } = run;
  let construct: BridgeConstructResult;
  try {
    construct = await steps.construct(run.args, options);
  } catch (error) {
    // The service's "not now" (a quote too short to sign, a fee above its ceiling), after any
    // retries of the transport: nothing was built.
    if (error instanceof ServiceUnavailableError)
      return { rebuild: 'service-503', error, ...retryAfter(error.retryAfterMs) };
    throw error;
  }
  await trackBeforeSigning(run.tracker, run.args.userId, construct);
  run.report({ step: 'constructed', construct });
  const intent: BuiltIntent = {
    intentId: construct.intentId,
    transferId: construct.transferId,
    userOpHash: construct.bundle.userOpHash,
  };
  state.intents.push(intent);
  let verified: VerifiedBridgeBatch;
  try {
    verified = await run.span('partner.verify', () => verifyBuilt(run, construct));
  } catch (error) {
    if (onlyTooCloseToExpiry(error)) return { rebuild: 'expiring', error };
    throw error;
  }
  run.report({ step: 'verified', summary: verified });
  if (policy.requote) {
    await agreeWithBaseline(state, verified, intent, {
      requote: policy.requote,
      minAmountOutRaw: floorRaw(policy.requote.minAmountOut, verified),
      rebuilt: build > 1 && reason !== undefined ? { attempt: build - 1, reason } : undefined,
      report: run.report,
      signal: options?.signal,
    });
  }
  const operation = operationOf(construct, verified, intent);
  excludeSecondOperation(state.signed, operation);
  const deadlineAt = verified.quoteExpiresAt.getTime() - policy.signing.submitMarginMs;
  const outcome = await run.span('partner.sign', () =>
    signInTime({
      verified,
      signer: run.signer,
      deadlineAt,
      budgetMs: policy.signing.budgetMs,
      times,
      onSignerCalled: () => {
        state.signed ??= operation;
      },
      options,
    }),
  );
  if (outcome.kind !== 'signed') {
    const elapsedMs = outcome.kind === 'late' ? outcome.elapsedMs : 0;
    const error = new SigningTooSlowError({ ...outcome, elapsedMs, intent });
    return { rebuild: outcome.kind === 'late' ? 'signer-late' : 'expiring', error };
  }
  run.report({ step: 'signed', signed: outcome.signed });
  return send(run, construct, verified, intent, outcome.signed);
}

async function send(
  run: ExecuteRun,
  construct: BridgeConstructResult,
  verified: VerifiedBridgeBatch,
  intent: BuiltIntent,
  signed: Parameters<ExecuteSteps['send']>[0] extends infer P
    ? Omit<P & object, 'userId' | 'intentId'>
    : never,
): Promise<Build> {
  const { steps, options } = run;
  const { userId } = run.args;
  let sent: Awaited<ReturnType<ExecuteSteps['send']>>;
  try {
    sent = await steps.send({ userId, intentId: intent.intentId, ...signed }, options);
  } catch (error) {
    // From here on the intent may be spent: whatever fails must say which transfer to look up.
    const withIds = withSubmitIds(error, intent as BuiltIntent & { userOpHash: `0x${string}` });
    // A clear refusal of an intent that ran out: the transfer read says so, not the message text.
    // Anything unclear went through the outcome resolution of `send` already and is never rebuilt.
    if (run.policy.requote && error instanceof IntentNotFoundError && steps.transfer) {
      const transfer = await steps.transfer(userId, intent.transferId, options).catch(() => undefined);
      if (transfer?.status === 'expired') return { rebuild: 'intent-expired', error: withIds };
    }
    throw withIds;
  }
  run.report({ step: 'submitted', transferId: sent.transferId, userOpHash: sent.userOpHash });
  return {
    done: {
      transferId: sent.transferId,
      userOpHash: sent.userOpHash,
      quote: construct.quote,
      route: run.route,
      summary: verified,
      ...(sent.onChain ? { onChain: sent.onChain } : {}),
    },
  };
}

function verifyBuilt(run: ExecuteRun, construct: BridgeConstructResult): VerifiedBridgeBatch {
  return verifyBridgeBatch(
    { route: run.route, construct, wallet: run.wallet, amount: run.amount },
    run.verify,
  );
}

/** Refused for nothing but being too close to its expiry: a new quote may pass. */
function onlyTooCloseToExpiry(error: unknown): boolean {
  return (
    error instanceof BatchVerificationError &&
    error.issues.length > 0 &&
    error.issues.every((issue) => issue.check === 'quote.expiry')
  );
}

function retryAfter(ms: number | undefined): { retryAfterMs?: number } {
  return ms === undefined ? {} : { retryAfterMs: ms };
}

/** `requote.minAmountOut` in destination base units; a floor finer than the token rounds up. */
function floorRaw(minAmountOut: string | undefined, verified: VerifiedBridgeBatch): bigint | undefined {
  if (minAmountOut === undefined) return undefined;
  const decimals = verified.destination.decimals;
  const [whole = '0', fraction = ''] = minAmountOut.split('.');
  const kept = fraction.slice(0, decimals);
  const raw = toRawAmount(kept ? `${whole}.${kept}` : whole, decimals);
  return /[1-9]/.test(fraction.slice(decimals)) ? raw + 1n : raw;
}

/** The sender, EntryPoint nonce and authorization of a verified build. */
function operationOf(
  construct: BridgeConstructResult,
  verified: VerifiedBridgeBatch,
  intent: BuiltIntent,
): SignedOperation {
  const authorization = verified.authorization;
  return {
    intent,
    sender: construct.bundle.userOp.sender,
    // The verifier hashed the operation with this nonce, so it reads.
    nonce: quantity(construct.bundle.userOp.nonce) ?? -1n,
    authorization: authorization && {
      chainId: authorization.chainId,
      address: authorization.address,
      nonce: authorization.nonce,
    },
  };
}

/**
 * Once a signature exists for an earlier operation, a rebuilt one must be its twin for the
 * EntryPoint (same sender, same nonce) so that at most one of them can execute. A rebuilt batch
 * without the authorization an earlier signature carries means that authorization may be spent:
 * an unclear outcome, never signed again.
 */
function excludeSecondOperation(signed: SignedOperation | undefined, next: SignedOperation): void {
  if (!signed || signed.intent.intentId === next.intent.intentId) return;
  const refuse = (what?: string) =>
    new RequoteNonceError({
      intentId: next.intent.intentId,
      signed: signed.intent,
      expected: { sender: signed.sender, nonce: signed.nonce },
      actual: { sender: next.sender, nonce: next.nonce },
      ...(what ? { what } : {}),
    });
  if (!sameAddress(signed.sender, next.sender) || signed.nonce !== next.nonce) throw refuse();
  if (!signed.authorization) return;
  if (!next.authorization) {
    throw new SubmitOutcomeUnknownError({
      ...signed.intent,
      cause: refuse('no EIP-7702 authorization (the signed one may have been applied)'),
    });
  }
  const a = signed.authorization;
  const b = next.authorization;
  if (a.nonce !== b.nonce || a.chainId !== b.chainId || !sameAddress(a.address, b.address))
    throw refuse(`EIP-7702 authorization nonce ${b.nonce} on chain ${b.chainId}`);
}
