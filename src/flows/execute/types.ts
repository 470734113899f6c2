// The shapes of `bridge.execute` that its builds share: progress, result, and the steps it calls.

import type { Report } from '../../core/isolate.js';
import type { RequestOptions } from '../../core/request-options.js';
import type { SpanRunner } from '../../http/tracing.js';
import type { QuoteChange } from '../../onchain/quote-change.js';
import type { SignedBridgeBatch } from '../../onchain/sign.js';
import type { BridgeBatchSummary } from '../../onchain/verify/verify.js';
import type { ConstructArgs } from '../../resources/params.js';
import type {
  BridgeConstructResult,
  BridgeQuote,
  BridgeRoute,
  BridgeTransfer,
} from '../../schemas/bridge.js';
import type { UserOperationIncluded } from '../../schemas/chain.js';
import type { Hex } from '../../schemas/common.js';
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

/** What `bridge.execute` returns once the batch is submitted. */
export interface BridgeExecuteResult {
  transferId: string;
  userOpHash: Hex;
  /** The quote the batch was built on: the figures that count. */
  quote: BridgeQuote;
  route: BridgeRoute;
  /** What the verified batch does. */
  summary: BridgeBatchSummary;
  /**
   * When the submit's outcome was unclear and the chain settled it (the client's `chains`): the
   * operation's `UserOperationEvent`. `success` false: its calls reverted, the transfer ends `failed`.
   */
  onChain?: UserOperationIncluded;
}

/** What `executeBridge` calls: the client's endpoints, spans and reports. */
export interface ExecuteSteps {
  route(routeId: string, options: RequestOptions | undefined): Promise<BridgeRoute | undefined>;
  /** Constructs from the arguments `execute` checked: they are not checked again at each build. */
  construct(args: ConstructArgs, options: RequestOptions | undefined): Promise<BridgeConstructResult>;
  send(
    params: { userId: string; intentId: string } & SignedBridgeBatch,
    options: RequestOptions | undefined,
  ): Promise<{ transferId: string; userOpHash: Hex; onChain?: UserOperationIncluded }>;
  /** The client's spans: `partner.verify` and `partner.sign`, the steps that make no request. */
  span?: SpanRunner;
  /** Told what `onProgress` threw or rejected with. */
  report?: Report;
  /** Reads a transfer: tells an intent that ran out from one refused for another reason. */
  transfer?(userId: string, transferId: string, options: RequestOptions | undefined): Promise<BridgeTransfer>;
  /** The client's signing times, shared with every client `withOptions` made from it. */
  signingTimes?: SigningTimes;
}
