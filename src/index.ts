/**
 * `partner-s2s-sdk`: the client, the bridge flows, the batch verifier and signer, the callback
 * router, the transfer tracker, the errors and their guards. The simulator and batch builders are
 * in `partner-s2s-sdk/testing`; the stores for a fleet in `partner-s2s-sdk/redis` and
 * `partner-s2s-sdk/postgres`; what writing a store of your own takes in `partner-s2s-sdk/stores`.
 *
 * @module partner-s2s-sdk
 */

// biome-ignore-all assist/source/organizeImports: the exports are grouped by concept, not sorted by path.
import type { Bridge as BridgeResource, Transfers as TransfersResource } from './resources/bridge.js';

// The client: its options and their defaults, what each call takes and returns.
export { PartnerClient } from './client.js';
export type { FetchLike, PartnerClientOptions, PartnerClientOverrides } from './client.js';
export { API_PREFIX, DEFAULTS } from './core/defaults.js';
export type { RequestOptions } from './core/request-options.js';
export { ApiPromise, type WithResponse } from './core/api-promise.js';
export { Page, PagePromise } from './core/pagination.js';
export type { StandardSchemaV1 } from './core/standard-schema.js';
export type { ApiRequest, ApiRequestInit, QueryValue } from './resources/request.js';
export type { RetryOptions } from './http/retry.js';
export type { TracerProviderLike, TracingOption } from './http/tracing.js';

// Events and logs of a client.
export type { ClientEvents, RequestEvent, ResponseEvent, RetryEvent, TokenEvent } from './core/events.js';
export type { Logger, LogLevel } from './core/logger.js';

// Tokens and scopes: where tokens are kept, what they allow.
export { MemoryTokenStore } from './auth/token-store.js';
export type { TokenStore } from './auth/token-store.js';
export { KNOWN_SCOPES, type KnownScope, type Me, type Scope } from './schemas/auth.js';

// The bridge: `client.bridge` and its transfers, their parameters, answers and states.
// Type aliases, not `export type { Bridge }`: the declaration bundler drops `type` on a re-exported
// class, and the declarations then promised a value that the runtime module does not have.
/**
 * The type of `client.bridge`: routes, quotes, construct, send, execute and `transfers`. Reached
 * through a client, never constructed.
 *
 * @example
 * function routesOf(bridge: Bridge) { return bridge.routes(); }
 */
export type Bridge = BridgeResource;
/**
 * The type of `client.bridge.transfers`: list, get and wait.
 *
 * @example
 * const transfers: Transfers = client.bridge.transfers;
 */
export type Transfers = TransfersResource;
export type { BridgeQuoteParams, BridgeFeeEstimateParams, BridgeSendParams } from './resources/params.js';
export type { BridgeConstructParams, TransferGetParams, TransferListParams } from './resources/params.js';
export type { BridgeExecuteParams, BridgeExecuteResult, ExecuteProgress } from './flows/execute/execute.js';
// Quote-aware execute: the requote and signing options, the comparison to the baseline, its errors.
export type { AcceptContext, RequoteOptions, SigningOptions } from './flows/execute/options.js';
export {
  QuoteChangedError,
  RequoteExhaustedError,
  RequoteNonceError,
  SigningTooSlowError,
} from './flows/execute/requote-errors.js';
export type { BuiltIntent, OperationNonce, RequoteReason } from './flows/execute/requote-errors.js';
export { compareQuotes } from './onchain/quote-change.js';
export type { AmountChange, QuoteChange, TimeChange } from './onchain/quote-change.js';
export type { SignerCallContext } from './onchain/sign.js';
export type { TransferSource, WaitOptions, WaitParams, WaitPhase, WaitPhaseTimeouts } from './flows/wait.js';
// The chain as the witness: what became of a user operation, read from the EntryPoint.
export { confirmUserOperation } from './flows/confirm.js';
export type {
  ConfirmUserOperationParams,
  ConfirmOnChainParams,
  ConfirmOptions,
  Quantity,
} from './flows/confirm.js';
export type { ChainRpc, Eip1193Provider } from './flows/confirm.js';
export type { SubmitResult } from './flows/submit.js';
export type { UserOperationConfirmation, UserOperationIncluded } from './schemas/chain.js';
export type { UserOperationPending, UserOperationSuperseded, UserOperationUnknown } from './schemas/chain.js';
export { FINAL_STATES, TRANSFER_STATES } from './schemas/bridge.js';
export type {
  BridgeRoute,
  RouteLimits,
  RouteTargets,
  BridgeQuote,
  FeeFields,
  TokenSide,
} from './schemas/bridge.js';
export type { BridgeFeeEstimate, BridgeConstructResult, BridgeBundle, BundleCall } from './schemas/bridge.js';
export type { BundleAuthorization, UserOperationJson, AuthorizationSignature } from './schemas/bridge.js';
export type { BridgeSendResult, BridgeTransfer, TransferSide } from './schemas/bridge.js';
export type { TransferStatus, KnownTransferStatus } from './schemas/bridge.js';
export type { Address, DecimalString, Hex, RawAmountString } from './schemas/common.js';

// Verify a constructed batch against what was asked, then sign it: the known contracts they trust.
export { verifyBridgeBatch } from './onchain/verify/verify.js';
export type { VerifyBridgeBatchParams, VerifyBridgeBatchOptions } from './onchain/verify/verify.js';
export type { VerifiedBridgeBatch, BridgeBatchSummary, SummarySide } from './onchain/verify/verify.js';
export { signBridgeBatch } from './onchain/sign.js';
export type { BridgeSigner, SignBridgeBatchParams, SignedBridgeBatch } from './onchain/sign.js';
export { DEFAULT_ENTRY_POINTS, ENTRY_POINT_V07, ENTRY_POINT_V08 } from './onchain/constants.js';
export { DEFAULT_DELEGATES, MAV2_7702_DELEGATE_V100, MAV2_7702_DELEGATE_V110 } from './onchain/constants.js';
export { ACROSS_SPOKE_POOLS, type KnownToken, WELL_KNOWN_TOKENS } from './onchain/tables.js';

// Describe a verified batch for an approver and a signer's policy; word a change of quote.
export { BRIDGE_SUMMARY_SCHEMA, describeBridgeBatch } from './onchain/describe/describe.js';
export type { BridgeBatchView, BridgeBatchBinding, MachineField } from './onchain/describe/describe.js';
export type { BridgeSummaryMachine } from './onchain/describe/describe.js';
export type {
  DescribeOptions,
  DescriptionWarning,
  DescriptionWarningCode,
} from './onchain/describe/describe.js';
export { describeQuoteChange } from './onchain/describe/change.js';
export type { DescribeQuoteChangeOptions, QuoteChangeView } from './onchain/describe/change.js';
export { CHAIN_NAMES } from './onchain/describe/names.js';

// Callbacks: parse a delivery, route it to listeners once and in order, remember what was seen.
export { CALLBACK_KINDS, parseBridgeCallback } from './callbacks/parse.js';
export type { BridgeCallbackKind, ParsedCallback } from './callbacks/parse.js';
export { CallbackRouter, createCallbackRouter } from './callbacks/router.js';
export type { CallbackRouterOptions, CallbackRouterEvents, CallbackRequest } from './callbacks/router.js';
export type { DispatchOutcome, RejectedDelivery } from './callbacks/router.js';
export type { IgnoredCallback, IgnoredReason } from './callbacks/router.js';
export { standardWebhooks, type StandardWebhooksOptions } from './callbacks/standard-webhooks.js';
export { MemoryCallbackStore } from './callbacks/store.js';
export type { CallbackStore } from './callbacks/store.js';

// The transfer tracker: follows every transfer to a final state, durably, across a fleet.
export { createTransferTracker, TransferTracker, type TrackerRound } from './tracker/tracker.js';
export type { TransferTrackerEvents, TransferOverdue } from './tracker/events.js';
export type { TransferTrackerOptions, TrackerClient, TrackerSchedule } from './tracker/options.js';
export type { TrackerDeadlines, TrackerDiscovery } from './tracker/options.js';
export { MemoryTrackerStore } from './tracker/memory-store.js';
export type { TrackerStore, TrackerRecord } from './tracker/store.js';
export type { TrackerListOptions } from './tracker/list.js';

// Errors: one class per failure, and the guards that tell them apart.
export * from './errors/index.js';

// Amounts: decimal strings and bigint base units, never floats.
export { type AmountInput, fromRawAmount, toRawAmount } from './core/amounts.js';

// The interface for other languages: its OpenAPI 3.1 document (also `partner-s2s-sdk/openapi.json`).
export { openApiDocument } from './resources/openapi.js';
export type { OpenApiDocument, OpenApiDocumentOptions } from './resources/openapi.js';

// The release this build is: package.json's version, written in at build time.
export { VERSION } from './core/version.js';

// Testing: the simulator and batch builders are in `partner-s2s-sdk/testing`; the stores on Redis
// and Postgres in `partner-s2s-sdk/redis` and `/postgres`; the parts of a store of your own (its
// records, leases and claims, `compareClaim`, `newTrackerRecord`) in `partner-s2s-sdk/stores`.
