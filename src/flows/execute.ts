import { parseArgs, parseOptions, readArgs, requestOptionsSchema } from '../core/args.js';
import { ignoreReport, isolate, type Report } from '../core/isolate.js';
import type { RequestOptions } from '../core/request-options.js';
import type { ExecuteTracker } from '../core/tracking.js';
import { AbortError, ArgumentError, TimeoutError } from '../errors/client-errors.js';
import { within } from '../http/abort.js';
import { type SpanRunner, untraced } from '../http/tracing.js';
import type { BridgeSigner, SignedBridgeBatch } from '../onchain/sign.js';
import type { BridgeBatchSummary, VerifiedBridgeBatch, VerifyBridgeBatchOptions } from '../onchain/verify.js';
import { type BridgeConstructParams, constructArgs } from '../resources/params.js';
import type { BridgeConstructResult, BridgeQuote, BridgeRoute } from '../schemas/bridge.js';
import type { Hex } from '../schemas/common.js';
import { checkExecuteTracker, trackBeforeSigning } from './execute-tracking.js';
import { withSubmitIds } from './submit.js';

/** One step of `bridge.execute`, reported as it completes. */
export type ExecuteProgress =
  | { step: 'route'; route: BridgeRoute }
  | { step: 'constructed'; construct: BridgeConstructResult }
  | { step: 'verified'; summary: BridgeBatchSummary }
  | { step: 'signed'; signed: SignedBridgeBatch }
  | { step: 'submitted'; transferId: string; userOpHash: Hex };

/** What `bridge.execute` takes: the construct arguments, the signer, and optional verify options and progress callback. */
export type BridgeExecuteParams = BridgeConstructParams & {
  /** Signs for the user's wallet; its address must be the wallet the batch is built for. */
  signer: BridgeSigner;
  /** Allow-lists and margins of the verification. */
  verify?: VerifyBridgeBatchOptions;
  /**
   * Called after each step, and not awaited (an async function is fine). What it throws, or a
   * promise it returns that rejects, is logged at `warn` through the client's `logger` and never
   * changes the outcome.
   */
  onProgress?: (progress: ExecuteProgress) => void;
  /**
   * A transfer tracker (`createTransferTracker`) that records the transfer right after construct,
   * before anything is signed; when it cannot, execute stops with a `TrackerError` and signs nothing.
   */
  tracker?: ExecuteTracker;
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
}

/**
 * Signs within the call's `signal` and its own `timeoutMs` (when it gives one): a signer that never
 * answers (a KMS that hangs) cannot hold the call, and what it answers later reaches nothing.
 */
async function signWithin(
  verified: VerifiedBridgeBatch,
  signer: BridgeSigner,
  options: RequestOptions | undefined,
): Promise<SignedBridgeBatch> {
  const signal = options?.signal;
  const aborted = () => new AbortError({ cause: signal?.reason });
  if (signal?.aborted) throw aborted();
  const { signBridgeBatch } = await import('../onchain/sign.js');
  if (signal?.aborted) throw aborted();
  const signing = signBridgeBatch({ verified, signer });
  const timeoutMs = options?.timeoutMs ?? Number.POSITIVE_INFINITY;
  return within(signing, timeoutMs, signal, {
    timedOut: () => new TimeoutError({ method: 'bridge.execute', path: 'sign', timeoutMs }),
    aborted,
  });
}

/** The whole bridge flow, verified before signing: route → construct → verify → sign → send. */
export async function executeBridge(
  steps: ExecuteSteps,
  params: BridgeExecuteParams,
  options: RequestOptions | undefined,
): Promise<BridgeExecuteResult> {
  const { signer, verify, onProgress, request, wallet, tracker } = readArgs('bridge.execute', () => {
    const { signer, verify, onProgress, tracker, ...request } = params ?? ({} as BridgeExecuteParams);
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
            signMessage: (args) => signMessage!.call(signer, args),
            ...(typeof signAuthorization === 'function'
              ? { signAuthorization: (args) => signAuthorization.call(signer, args) }
              : {}),
          };
    return { signer: fixed, verify, onProgress, request, wallet, tracker };
  });
  const args = parseArgs(constructArgs, request, 'bridge.execute');
  options = parseOptions(requestOptionsSchema, options, 'bridge.execute');
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
  const checkedTracker = checkExecuteTracker(tracker);
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
  const construct = await steps.construct(request, options);
  await trackBeforeSigning(checkedTracker, args.userId, construct);
  report({ step: 'constructed', construct });
  const span = steps.span ?? untraced;
  const summary = await span('partner.verify', async () => {
    const { verifyBridgeBatch } = await import('../onchain/verify.js');
    return verifyBridgeBatch(
      {
        route,
        construct,
        wallet,
        amount: args.maxAmount === true ? undefined : (request.amount ?? undefined),
      },
      verify,
    );
  });
  report({ step: 'verified', summary });
  const signed = await span('partner.sign', () => signWithin(summary, signer!, options));
  report({ step: 'signed', signed });
  const ids = {
    intentId: construct.intentId,
    transferId: construct.transferId,
    userOpHash: construct.bundle.userOpHash,
  };
  // From here on the intent may be spent: whatever fails must say which transfer to look up.
  const sent = await steps
    .send({ userId: args.userId, intentId: construct.intentId, ...signed }, options)
    .catch((error: unknown) => {
      throw withSubmitIds(error, ids);
    });
  report({ step: 'submitted', transferId: sent.transferId, userOpHash: sent.userOpHash });
  return { transferId: sent.transferId, userOpHash: sent.userOpHash, quote: construct.quote, route, summary };
}
