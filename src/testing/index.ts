/**
 * `partner-s2s-sdk/testing`: the simulator of the Partner Service Interface (in process or over
 * HTTP) and the batch builders, for a partner's own tests.
 *
 * @module partner-s2s-sdk/testing
 */

export {
  type BuildBridgeBundleParams,
  buildBridgeBundle,
  encodeBatchCallData,
  rehashBundle,
} from './batch.js';
export {
  type CallbackStoreConformanceOptions,
  callbackStoreConformance,
} from './callback-conformance.js';
export type { CallbackDelivery, CallbackSigning } from './simulator/callbacks.js';
export type { ReceivedRequest } from './simulator/endpoints.js';
export {
  createPartnerSimulator,
  PartnerSimulator,
  type SimDemo,
  type SimUser,
  type SimulatorOptions,
} from './simulator/simulator.js';
export {
  type ConformanceRunner,
  conformanceTransfer,
  type TrackerStoreConformanceOptions,
  trackerStoreConformance,
} from './tracker-conformance.js';
