import { parseArgs, parseOptions, readArgs, requestOptionsSchema } from '../../core/args.js';
import { ignoreReport, isolate } from '../../core/isolate.js';
import type { RequestOptions } from '../../core/request-options.js';
import type { ExecuteTracker } from '../../core/tracking.js';
import { ArgumentError } from '../../errors/client-errors.js';
import { untraced } from '../../http/tracing.js';
import type { BridgeSigner } from '../../onchain/sign.js';
import type { VerifyBridgeBatchOptions } from '../../onchain/verify/verify.js';
import { type BridgeConstructParams, constructArgs } from '../../resources/params.js';
import { executePolicy, type RequoteOptions, type SigningOptions } from './options.js';
import { runBuilds } from './requote.js';
import { checkExecuteTracker } from './tracking.js';
import type { BridgeExecuteResult, ExecuteProgress, ExecuteSteps } from './types.js';

export type { BridgeExecuteResult, ExecuteProgress, ExecuteSteps } from './types.js';

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
  /**
   * A transfer tracker (`createTransferTracker`) that records each constructed transfer right
   * after construct, before anything is signed; when it cannot, execute stops with a
   * `TrackerError` and signs nothing.
   *
   * @example
   * await client.bridge.execute({ userId, routeId, amount, signer, tracker });
   */
  tracker?: ExecuteTracker;
};

/** The whole bridge flow, verified before signing: route → construct → verify → sign → send. */
export async function executeBridge(
  steps: ExecuteSteps,
  params: BridgeExecuteParams,
  given: RequestOptions | undefined,
): Promise<BridgeExecuteResult> {
  const { signer, verify, onProgress, request, wallet, requote, signing, tracker } = readArgs(
    'bridge.execute',
    () => {
      const { signer, verify, onProgress, requote, signing, tracker, ...request } =
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
      return { signer: fixed, verify, onProgress, request, wallet, requote, signing, tracker };
    },
  );
  const args = parseArgs(constructArgs, request, 'bridge.execute');
  const options = parseOptions(requestOptionsSchema, given, 'bridge.execute');
  const policy = executePolicy(requote, signing);
  const checkedTracker = checkExecuteTracker(tracker);
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
    args,
    // The amount as checked, the exact literal that is sent: the verifier holds the quote to it.
    amount: args.amount?.literal,
    route,
    wallet,
    signer: signer!,
    verify,
    policy,
    tracker: checkedTracker,
    report,
    span: steps.span ?? untraced,
    options,
  });
}
