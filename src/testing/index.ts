export {
  type BuildBridgeBundleParams,
  buildBridgeBundle,
  encodeBatchCallData,
  rehashBundle,
} from './batch.js';
