import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';

/**
 * Files share their worker's process and module graph (`isolate: false` in vitest.config.ts):
 * importing the sources, viem and zod once per worker rather than once per file is a third of the
 * suite's CPU. So what a test changes process-wide is put back after it (fake timers here; stubbed
 * env and globals by `unstubEnvs` and `unstubGlobals`), and a file that leaves a process handler
 * behind fails, so that no file runs under another's.
 */
const GUARDED = ['unhandledRejection', 'uncaughtException'] as const;
const handlers = () => GUARDED.map((event) => `${event}: ${process.listenerCount(event)}`);
let before: string[] = [];

beforeAll(() => {
  before = handlers();
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(() => {
  expect(handlers(), 'process handlers this file added and did not remove').toEqual(before);
});
