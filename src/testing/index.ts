export {
  type BuildBridgeBundleParams,
  buildBridgeBundle,
  encodeBatchCallData,
  rehashBundle,
} from './batch.js';
export {
  createPartnerSimulator,
  PartnerSimulator,
  type SimUser,
  type SimulatorOptions,
} from './simulator.js';
