/**
 * The SDK's one event mechanism, eventemitter3: `PartnerListeners` (isolate.ts) holds the client's,
 * the router's and the tracker's listeners in it. Imported the way its `exports` say, so that every bundler and runtime follows it.
 */
export { EventEmitter } from 'eventemitter3';
