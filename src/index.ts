/**
 * `partner-s2s-sdk`: the client, the bridge flows, the batch verifier and signer, the callback
 * router, the errors and their guards.
 *
 * @module partner-s2s-sdk
 */

export type { StoredToken, TokenLock, TokenStore } from './auth/token-store.js';
export { MemoryTokenStore } from './auth/token-store.js';
export {
  type BridgeCallbackKind,
  CALLBACK_KINDS,
  type ParsedCallback,
  parseBridgeCallback,
} from './callbacks/parse.js';
export {
  type CallbackRequest,
  CallbackRouter,
  type CallbackRouterEvents,
  type CallbackRouterOptions,
  createCallbackRouter,
  type DispatchOutcome,
  type IgnoredCallback,
  type IgnoredReason,
  type RejectedDelivery,
} from './callbacks/router.js';
export {
  type CallbackStore,
  type ClaimRequest,
  type ClaimResult,
  compareClaim,
  MemoryCallbackStore,
  type RecordedState,
} from './callbacks/store.js';
export {
  API_PREFIX,
  type FetchLike,
  PartnerClient,
  type PartnerClientOptions,
  type PartnerClientOverrides,
} from './client.js';
export { type AmountInput, fromRawAmount, toRawAmount } from './core/amounts.js';
export { ApiPromise, type WithResponse } from './core/api-promise.js';
export { DEFAULTS } from './core/defaults.js';
export type {
  ClientEvents,
  RequestEvent,
  ResponseEvent,
  RetryEvent,
  TokenEvent,
} from './core/events.js';
export type { Logger, LogLevel } from './core/logger.js';
export { Page, PagePromise } from './core/pagination.js';
export type { RequestOptions } from './core/request-options.js';
export type { StandardSchemaV1 } from './core/standard-schema.js';
export {
  CallbackBusyError,
  CallbackListenerError,
  CallbackTimeoutError,
  type CallbackTimeoutStage,
} from './errors/callback-errors.js';
export * from './errors/index.js';
export type { ApiRequest, ApiRequestInit, QueryValue } from './resources/request.js';

import type { Bridge as BridgeResource, Transfers as TransfersResource } from './flows/bridge.js';

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
export type {
  BridgeExecuteParams,
  BridgeExecuteResult,
  ExecuteProgress,
} from './flows/execute.js';
export type { TransferSource, WaitOptions, WaitParams, WaitPhase, WaitPhaseTimeouts } from './flows/wait.js';
export type { RetryOptions } from './http/retry.js';
export type { TracerProviderLike, TracingOption } from './http/tracing.js';
export {
  DEFAULT_DELEGATES,
  DEFAULT_ENTRY_POINTS,
  ENTRY_POINT_V07,
  ENTRY_POINT_V08,
  MAV2_7702_DELEGATE_V100,
  MAV2_7702_DELEGATE_V110,
} from './onchain/constants.js';
export {
  type BridgeSigner,
  type SignBridgeBatchParams,
  type SignedBridgeBatch,
  signBridgeBatch,
} from './onchain/sign.js';
export { ACROSS_SPOKE_POOLS, type KnownToken, WELL_KNOWN_TOKENS } from './onchain/tables.js';
export {
  type BridgeBatchSummary,
  type SummarySide,
  type VerifiedBridgeBatch,
  type VerifyBridgeBatchOptions,
  type VerifyBridgeBatchParams,
  verifyBridgeBatch,
} from './onchain/verify.js';
export type {
  BridgeConstructParams,
  BridgeFeeEstimateParams,
  BridgeQuoteParams,
  BridgeSendParams,
  TransferGetParams,
  TransferListParams,
} from './resources/params.js';
export { KNOWN_SCOPES, type KnownScope, type Me, type Scope } from './schemas/auth.js';
export {
  type AuthorizationSignature,
  type BridgeBundle,
  type BridgeConstructResult,
  type BridgeFeeEstimate,
  type BridgeQuote,
  type BridgeRoute,
  type BridgeSendResult,
  type BridgeTransfer,
  type BundleAuthorization,
  type BundleCall,
  FINAL_STATES,
  type KnownTransferStatus,
  type RouteLimits,
  type RouteTargets,
  type TokenSide,
  TRANSFER_STATES,
  type TransferSide,
  type TransferStatus,
  type UserOperationJson,
} from './schemas/bridge.js';
export type { Address, DecimalString, Hex, RawAmountString } from './schemas/common.js';
