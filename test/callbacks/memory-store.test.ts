import { describe, expect, it } from 'vitest';
import { ArgumentError, MemoryCallbackStore } from '../../src/index.js';
import { callbackStoreConformance } from '../../src/testing/index.js';

callbackStoreConformance({ describe, it }, () => new MemoryCallbackStore());

it('callbackStoreConformance refuses a runner or a factory it cannot call, before registering a test', () => {
  const make = () => new MemoryCallbackStore();
  expect(() => callbackStoreConformance({} as never, make)).toThrow(ArgumentError);
  expect(() => callbackStoreConformance({ describe, it }, 'store' as never)).toThrow(ArgumentError);
  const throwing = Object.defineProperty({ describe }, 'it', {
    get() {
      throw new Error('no it here');
    },
  });
  expect(() => callbackStoreConformance(throwing as never, make)).toThrow(ArgumentError);
});
