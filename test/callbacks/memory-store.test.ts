import { describe, it } from 'vitest';
import { MemoryCallbackStore } from '../../src/index.js';
import { callbackStoreConformance } from '../../src/testing/index.js';

callbackStoreConformance({ describe, it }, () => new MemoryCallbackStore());
