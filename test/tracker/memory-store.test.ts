import { describe, it } from 'vitest';
import { MemoryTrackerStore } from '../../src/index.js';
import { trackerStoreConformance } from '../../src/testing/index.js';

trackerStoreConformance({ describe, it }, () => new MemoryTrackerStore());
