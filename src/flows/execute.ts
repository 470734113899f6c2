import { parseArgs, parseOptions, readArgs, requestOptionsSchema } from '../core/args.js';
import { ignoreReport, isolate, type Report } from '../core/isolate.js';
import type { RequestOptions } from '../core/request-options.js';
import { ArgumentError } from '../errors/client-errors.js';
import { type SpanRunner, untraced } from '../http/tracing.js';
import type { QuoteChange } from '../onchain/quote-change.js';
import type { BridgeSigner, SignedBridgeBatch } from '../onchain/sign.js';
import type { BridgeBatchSummary, VerifyBridgeBatchOptions } from '../onchain/verify.js';
import { type BridgeConstructParams, constructArgs } from '../resources/params.js';
import type { BridgeConstructResult, BridgeQuote, BridgeRoute, BridgeTransfer } from '../schemas/bridge.js';
import type { Hex } from '../schemas/common.js';
import { executePolicy, type RequoteOptions, type SigningOptions } from './execute-options.js';
import { runBuilds } from './requote.js';
import type { RequoteReason } from './requote-errors.js';
import type { SigningTimes } from './signing.js';

/** One step of `bridge.execute`, reported as it completes. */
export type ExecuteProgress =
  | { step: 'route'; route: BridgeRoute }
  | { step: 'constructed'; construct: BridgeConstructResult }
  | { step: 'verified'; summary: BridgeBatchSummary }
  | { step: 'signed'; signed: SignedBridgeBatch }
  | { step: 'submitted'; transferId: string; userOpHash: Hex }
  /** A batch built again and verified: why, and how it differs from the baseline. */
  | { step: 'requoted'; attempt: number; reason: RequoteReason; change: QuoteChange };

/** What `bridge.execute` takes: the construct arguments, the signer, and optional verify options and progress callback. */
export type BridgeExecuteParams = BridgeConstructParams & {
  /** Signs for the user's wallet; its address must be the wallet the batch is built for. */
  signer: BridgeSigner;
  /** Allow-lists and margins of the verification. */
  verify?: VerifyBridgeBatchOptions;
  /**
   * Build the batch again (verified again, compared to the baseline) when its quote cannot be
   * signed or submitted in time. Without it, such a quote ends the call (`SigningTooSlowError`).
   * @example requote: { maxAttempts: 2, maxOutputDropBps: 50, maxFeeIncreaseBps: 20 }
   */
  requote?: RequoteOptions;
  /**
   * The time the signer is given.
   * @example signing: { budgetMs: 30_000, submitMarginMs: 5_000 }
   */
  signing?: SigningOptions;
  /**
   * Called after each step, and not awaited (an async function is fine). What it throws, or a
   * promise it returns that rejects, is logged at `warn` through the client's `logger` and never
   * changes the outcome.
   */
  onProgress?: (progress: ExecuteProgress) => void;
};

/** What `bridge.execute` returns once the batch is submitted. */
export interface BridgeExecuteResult {
  transferId: string;
  userOpHash: Hex;
  /** The quote the batch was built on: the figures that count. */
  quote: BridgeQuote;
  route: BridgeRoute;
  /** What the verified batch does. */
  summary: BridgeBatchSummary;
}

export interface ExecuteSteps {
  route(routeId: string, options: RequestOptions | undefined): Promise<BridgeRoute | undefined>;
  construct(
    params: Parameters<typeof constructArgs.parse>[0],
    options: RequestOptions | undefined,
  ): Promise<BridgeConstructResult>;
  send(
    params: { userId: string; intentId: string } & SignedBridgeBatch,
    options: RequestOptions | undefined,
  ): Promise<{ transferId: string; userOpHash: Hex }>;
  /** The client's spans: `partner.verify` and `partner.sign`, the steps that make no request. */
  span?: SpanRunner;
  /** Told what `onProgress` threw or rejected with. */
  report?: Report;
  /** Reads a transfer: tells an intent that ran out from one refused for another reason. */
  transfer?(userId: string, transferId: string, options: RequestOptions | undefined): Promise<BridgeTransfer>;
  /** The client's signing times, shared with every client `withOptions` made from it. */
  signingTimes?: SigningTimes;
}

/** The whole bridge flow, verified before signing: route → construct → verify → sign → send. */
export async function executeBridge(
  steps: ExecuteSteps,
  params: BridgeExecuteParams,
  options: RequestOptions | undefined,
): Promise<BridgeExecuteResult> {
  const { signer, verify, onProgress, request, wallet, requote, signing } = readArgs('bridge.execute', () => {
    const { signer, verify, onProgress, requote, signing, ...request } =
      params ?? ({} as BridgeExecuteParams);
    const address: unknown = signer?.address;
    const signMessage = signer?.signMessage;
    const signAuthorization = signer?.signAuthorization;
    const wallet = typeof address === 'string' && typeof signMessage === 'function' ? address : undefined;
    // The signer as read now, so that the wallet verified is the wallet that signs.
    const fixed: BridgeSigner | undefined =
      wallet === undefined
        ? undefined
        : {
            address: wallet,
            signMessage: (args, context) => signMessage!.call(signer, args, context),
            ...(typeof signAuthorization === 'function'
              ? { signAuthorization: (args, context) => signAuthorization.call(signer, args, context) }
              : {}),
          };
    return { signer: fixed, verify, onProgress, request, wallet, requote, signing };
  });
  const args = parseArgs(constructArgs, request, 'bridge.execute');
  options = parseOptions(requestOptionsSchema, options, 'bridge.execute');
  const policy = executePolicy(requote, signing);
  if (wallet === undefined) {
    throw new ArgumentError({
      where: 'bridge.execute',
      issues: [{ path: 'signer', message: 'must have an address and signMessage' }],
    });
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new ArgumentError({
      where: 'bridge.execute',
      issues: [{ path: 'onProgress', message: 'must be a function' }],
    });
  }
  // An observer cannot change the outcome: a throw after the submit would lose the transfer id.
  const report = onProgress
    ? isolate('onProgress of bridge.execute', onProgress, steps.report ?? ignoreReport)
    : () => {};

  const route = await steps.route(args.routeId, options);
  if (!route) {
    throw new ArgumentError({
      where: 'bridge.execute',
      issues: [{ path: 'routeId', message: `no route ${args.routeId} in bridge.routes()` }],
    });
  }
  report({ step: 'route', route });
  return runBuilds({
    steps,
    userId: args.userId,
    request,
    amount: args.maxAmount === true ? undefined : (request.amount ?? undefined),
    route,
    wallet,
    signer: signer!,
    verify,
    policy,
    report,
    span: steps.span ?? untraced,
    options,
  });
}
