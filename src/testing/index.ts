export {
  type BuildBridgeBundleParams,
  buildBridgeBundle,
  encodeBatchCallData,
  rehashBundle,
} from './batch.js';
export type { CallbackDelivery } from './simulator/callbacks.js';
export {
  createPartnerSimulator,
  PartnerSimulator,
  type SimDemo,
  type SimUser,
  type SimulatorOptions,
} from './simulator.js';
