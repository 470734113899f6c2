import { createRequire } from 'node:module';
import type { EventEmitter as Emitter } from 'eventemitter3';

/**
 * eventemitter3's ES module entry only re-exports its CommonJS file, and imported that way Node 22
 * spends about 15 ms at import translating CommonJS for ESM; required directly it costs under 3 ms
 * on every Node line.
 */
export const EventEmitter: typeof Emitter = createRequire(import.meta.url)('eventemitter3').EventEmitter;
