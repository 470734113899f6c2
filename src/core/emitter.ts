/**
 * The SDK's one event mechanism, eventemitter3: the client's events and the router's listeners are
 * held by it. Imported the way its `exports` say, so that every bundler and runtime follows it.
 */
export { EventEmitter } from 'eventemitter3';
