import { readArgs } from '../core/args.js';
import { ArgumentError } from '../errors/client-errors.js';

/**
 * The functions of a test runner the suite registers its tests with: vitest, jest, mocha and
 * `node:test` all have them. Assertions are `node:assert`'s, so any runner reports them.
 */
export interface ConformanceRunner {
  describe: (name: string, body: () => void) => unknown;
  it: (name: string, body: () => Promise<void>) => unknown;
}

/** Registers one test, run on a store of its own that the suite disposes of after it. */
export type StoreTest<S> = (name: string, body: (store: S) => Promise<void>) => unknown;

/**
 * What every conformance suite does before its first test: read the runner and the options once
 * (a getter that throws is an ArgumentError naming the suite), refuse a runner or a factory that
 * cannot be called, and wrap `it` so that each test gets a fresh store and disposes of it.
 *
 * @internal
 * @example
 * const { describe, test, options } = conformanceSuite('myConformance', runner, makeStore, () => ({
 *   dispose: input?.dispose,
 * }));
 */
export function conformanceSuite<S, T extends { dispose?: ((store: S) => unknown) | undefined }>(
  where: string,
  runner: ConformanceRunner,
  makeStore: () => S | Promise<S>,
  readOptions: () => T,
): { describe: ConformanceRunner['describe']; test: StoreTest<S>; options: T } {
  const { describe, it, options } = readArgs(where, () => ({
    describe: runner.describe,
    it: runner.it,
    options: readOptions(),
  }));
  if (typeof describe !== 'function' || typeof it !== 'function' || typeof makeStore !== 'function') {
    throw new ArgumentError({
      where,
      issues: [
        { path: '', message: "takes the runner's describe and it, and a function making an empty store" },
      ],
    });
  }
  const test: StoreTest<S> = (name, body) =>
    it(name, async () => {
      const store = await makeStore();
      try {
        await body(store);
      } finally {
        await options.dispose?.(store);
      }
    });
  return { describe, test, options };
}
