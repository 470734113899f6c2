declare module 'vitest' {
  export interface ProvidedContext {
    /** Where a file asks for the run's shared servers and bundles (test/global-setup.ts). */
    testBroker: string | undefined;
  }
}

/**
 * What the run's broker (test/global-setup.ts) answers for `what` (`redis`, `postgres`, …), started
 * once for every file that asks; undefined when the file runs without it (then it starts its own).
 */
export async function fromBroker<T>(what: string): Promise<T | undefined> {
  let broker: string | undefined;
  try {
    // Imported here, not at the top: test/global-setup.ts loads these helpers outside any worker.
    const { inject } = await import('vitest');
    broker = inject('testBroker');
  } catch {
    // Not inside a vitest worker (a script importing the helpers): no broker.
    return undefined;
  }
  if (!broker) return undefined;
  const response = await fetch(`${broker}/${what}`);
  const body = await response.text();
  if (!response.ok) throw new Error(`the run's ${what} could not be had: ${body}`);
  return JSON.parse(body) as T;
}

/** A name no other file of the run uses: a key prefix, a database, a schema (letters, digits, `_`). */
export const uniqueName = (label: string) => `${label}_${Math.random().toString(36).slice(2, 10)}`;

/**
 * The rule of every suite that needs a server or a tool: without it, skip with `missing` (what was
 * looked for and where) outside CI, and fail under CI=true, where a skip would hide a missing
 * install step.
 */
export function skipOrFail(available: boolean, missing: string): void {
  if (available) return;
  if (process.env.CI === 'true') throw new Error(`${missing}; CI=true does not allow this skip`);
  console.warn(missing);
}
