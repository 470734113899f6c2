import { EventEmitter } from 'eventemitter3';
import { afterAll, describe, expect, it } from 'vitest';
import * as main from '../src/index.js';
import * as stores from '../src/stores/index.js';
import * as testing from '../src/testing/index.js';

/**
 * Every exported function, every exported class and every method of their instances, walked
 * programmatically, is fed values whose reads throw. Each must answer with a result or a
 * `PartnerError` subclass: never a TypeError, never the thrower's own error. A new export is walked
 * without anyone remembering to add it; a new class fails until it has a way to build an instance.
 */

const trap = (what: string) => () => {
  throw new Error(`hostile ${what}`);
};
/** Fresh each time: a Proxy whose every trap throws, a throwing getter, a throwing toString. */
function hostileValues(): unknown[] {
  const proxy = new Proxy(
    {},
    {
      get: trap('get'),
      has: trap('has'),
      ownKeys: trap('ownKeys'),
      getOwnPropertyDescriptor: trap('descriptor'),
      getPrototypeOf: trap('prototype'),
    },
  );
  const getter = Object.defineProperty({ userId: 'u', transferId: 't' }, 'userId', {
    enumerable: true,
    get: trap('getter'),
  });
  return [proxy, getter, { toString: trap('toString'), valueOf: trap('valueOf') }];
}

const sim = testing.createPartnerSimulator();
afterAll(() => sim.close());
const client = new main.PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });

/** How to get an instance of each exported class that is not an error. */
const INSTANCES: Record<string, () => unknown> = {
  PartnerClient: () => client,
  CallbackRouter: () => main.createCallbackRouter({ authenticate: 'none' }),
  MemoryCallbackStore: () => new main.MemoryCallbackStore(),
  MemoryTokenStore: () => new main.MemoryTokenStore(),
  PagePromise: () => client.bridge.transfers.list({ userId: sim.demo.userId }),
  ApiPromise: () => client.bridge.routes(),
  Page: () => client.bridge.transfers.list({ userId: sim.demo.userId }),
  PartnerSimulator: () => sim,
  TransferTracker: () => main.createTransferTracker({ client, discover: false }),
  MemoryTrackerStore: () => new main.MemoryTrackerStore(),
};

/**
 * Entry points that still let a raw error out, each with the part of the code that owns it. The
 * test asserts this list exactly: fixing one means removing it here, and nothing new may join.
 */
const KNOWN_GAPS = new Set<string>([]);

const isClass = (value: unknown): value is new (...args: unknown[]) => unknown =>
  typeof value === 'function' && /^class\b/.test(Function.prototype.toString.call(value));
const isErrorClass = (value: unknown) => isClass(value) && value.prototype instanceof Error;
/** Methods that belong to eventemitter3 itself, not to this SDK. */
const INHERITED = new Set(Object.getOwnPropertyNames(EventEmitter.prototype));

/** Every method reachable on an instance: its class chain, own function properties, and sub-objects. */
function methodsOf(
  instance: object,
  label: string,
  depth = 0,
): [string, () => (...args: unknown[]) => unknown][] {
  const found: [string, () => (...args: unknown[]) => unknown][] = [];
  const seen = new Set<string>();
  for (
    let proto = Object.getPrototypeOf(instance);
    proto && proto !== Object.prototype && proto !== EventEmitter.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
      if (name === 'constructor' || typeof descriptor.value !== 'function' || seen.has(name)) continue;
      if (INHERITED.has(name) && proto === EventEmitter.prototype) continue;
      seen.add(name);
      found.push([`${label}#${name}`, () => descriptor.value.bind(instance)]);
    }
  }
  for (const [name, value] of Object.entries(instance)) {
    if (typeof value === 'function' && !seen.has(name)) {
      found.push([`${label}#${name}`, () => value as (...args: unknown[]) => unknown]);
    } else if (depth < 2 && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      if (Object.getPrototypeOf(value) !== Object.prototype)
        found.push(...methodsOf(value, `${label}.${name}`, depth + 1));
    }
  }
  return found;
}

/** What a call ended in: undefined for a result, otherwise what it threw or rejected with. */
async function outcomeOf(call: () => unknown): Promise<unknown> {
  try {
    let result = call();
    if (result && typeof (result as PromiseLike<unknown>).then === 'function') result = await result;
    const iterator = result as AsyncIterator<unknown> | undefined;
    if (iterator && typeof iterator.next === 'function' && Symbol.asyncIterator in iterator)
      await iterator.next();
    return undefined;
  } catch (error) {
    return error ?? new Error('threw undefined');
  }
}

/** Every entry point: [name, a function taking the arguments]. */
function entryPoints(): [string, () => (...args: unknown[]) => unknown][] {
  const entries: [string, () => (...args: unknown[]) => unknown][] = [];
  for (const module of [main, testing, stores]) {
    for (const [name, value] of Object.entries(module)) {
      if (typeof value !== 'function' || isErrorClass(value)) continue;
      if (!isClass(value)) {
        entries.push([name, () => value as (...args: unknown[]) => unknown]);
        continue;
      }
      entries.push([
        `new ${name}`,
        () =>
          (...args: unknown[]) =>
            new value(...args),
      ]);
      const make = INSTANCES[name];
      if (!make) throw new Error(`no way to build a ${name}: add it to INSTANCES`);
      entries.push([`${name}`, () => () => make()]);
    }
  }
  return entries;
}

describe('every export and method, fed values whose reads throw', () => {
  it('answers with a result or a PartnerError', async () => {
    const raw: string[] = [];
    const walk = async (name: string, fn: (...args: unknown[]) => unknown) => {
      for (const hostile of hostileValues()) {
        for (const args of [[hostile], [hostile, hostile, hostile]]) {
          const outcome = await outcomeOf(() => fn(...args));
          if (outcome !== undefined && !main.isPartnerError(outcome)) raw.push(name);
        }
      }
    };
    const walked: string[] = [];
    for (const [name, get] of entryPoints()) {
      if (name.startsWith('new ') || !/^[A-Z]/.test(name)) {
        walked.push(name);
        await walk(name, get());
        continue;
      }
      let instance = get()();
      if (name === 'Page') instance = await instance;
      for (const [method, getMethod] of methodsOf(instance as object, name)) {
        walked.push(method);
        await walk(method, getMethod());
      }
    }
    // The walk reached the surface it should: callbacks, the client's resources, the simulator.
    for (const name of [
      'parseBridgeCallback',
      'CallbackRouter#dispatch',
      'CallbackRouter#fetchHandler',
      'CallbackRouter#nodeHandler',
      'PartnerClient.bridge#quote',
      'PartnerClient.bridge.transfers#wait',
      'Page#getNextPage',
      'PartnerSimulator#advance',
    ]) {
      expect(walked).toContain(name);
    }
    expect([...new Set(raw)].sort()).toEqual([...KNOWN_GAPS].sort());
  });
});
