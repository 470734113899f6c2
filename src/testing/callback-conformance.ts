import { deepStrictEqual, equal, notEqual, ok } from 'node:assert/strict';
import type { CallbackStore, ClaimRequest, ClaimResult } from '../callbacks/store.js';
import { CALLBACK_STATES, FINAL_STATES, type KnownTransferStatus, stateRank } from '../schemas/states.js';
import { type ConformanceRunner, conformanceSuite, type StoreTest } from './conformance-runner.js';

/** How the suite treats the callback store under test. */
export interface CallbackStoreConformanceOptions {
  /**
   * The `ttlMs` of the claims the suite lets lapse. Long enough for one store call to come back
   * well within it; the suite sleeps a little more than one of them.
   * @default 150
   */
  claimTtlMs?: number;
  /** Called after each test with the store it made, e.g. to close a connection. */
  dispose?: (store: CallbackStore) => unknown;
}

type Claimed = Extract<ClaimResult, { outcome: 'claimed' }>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let counter = 0;
/** A transfer no other test names, so a store shared between tests still starts each one empty. */
function freshTransfer(): string {
  counter++;
  return `brt_cbconf_${Date.now().toString(36)}_${counter}_${Math.random().toString(36).slice(2, 6)}`;
}

/** The claim request the router makes for `status`: the state table's rank and finality. */
function at(transferId: string, status: KnownTransferStatus, ttlMs = 60_000): ClaimRequest {
  return { transferId, status, rank: stateRank(status) as number, final: FINAL_STATES.has(status), ttlMs };
}

/** Claims `request`, failing the test unless it is claimed; the claim's token. */
async function holds(store: CallbackStore, request: ClaimRequest): Promise<string> {
  const result = await store.claim(request);
  equal(result.outcome, 'claimed', `claim of ${request.status}: ${JSON.stringify(result)}`);
  const { token } = result as Claimed;
  ok(typeof token === 'string' && token.length > 0, 'a claim carries a non-empty token');
  return token;
}

/** Claims and commits `request`: the state recorded as a router records a dispatched one. */
async function record(store: CallbackStore, request: ClaimRequest): Promise<void> {
  await store.commit(request, await holds(store, request));
}

/**
 * Registers tests that check a `CallbackStore` keeps every promise of the contract the callback
 * router relies on to dispatch each `(transferId, status)` once and lose none: one holder at a
 * time, a commit final (the state is then a duplicate), states older than the recorded one or
 * after a final one stale (even while the transfer is held), release and a lapsed claim letting
 * the next caller claim, tokens fencing a commit or release that no longer holds, and exactly one
 * winner among claims made at once. `makeStore` must return an empty store (a fresh key prefix or
 * schema per call is enough); a store's own `claimTtlMs` option, if it has one, must be unset.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { MemoryCallbackStore } from 'partner-s2s-sdk';
 * import { callbackStoreConformance } from 'partner-s2s-sdk/testing';
 * callbackStoreConformance({ describe, it }, () => new MemoryCallbackStore());
 */
export function callbackStoreConformance(
  runner: ConformanceRunner,
  makeStore: () => CallbackStore | Promise<CallbackStore>,
  options: CallbackStoreConformanceOptions = {},
): void {
  const {
    describe,
    test,
    options: read,
  } = conformanceSuite('callbackStoreConformance', runner, makeStore, () => ({
    claimTtlMs: options?.claimTtlMs ?? 150,
    dispose: options?.dispose,
  }));
  describe('CallbackStore conformance', () => {
    registerClaims(test);
    registerRecorded(test);
    registerRelease(test, read.claimTtlMs);
    registerConcurrency(test);
  });
}

type Register = StoreTest<CallbackStore>;

function registerClaims(test: Register): void {
  test('a first claim of a transfer is claimed with a token and no previous state', async (store) => {
    const result = await store.claim(at(freshTransfer(), 'submitted'));
    equal(result.outcome, 'claimed');
    const { token, previous } = result as Claimed;
    ok(typeof token === 'string' && token.length > 0);
    equal(previous, undefined);
  });

  test('while a claim holds, another claim of the transfer is busy, for the same state or a newer one', async (store) => {
    const id = freshTransfer();
    await holds(store, at(id, 'submitted'));
    deepStrictEqual(await store.claim(at(id, 'submitted')), { outcome: 'busy' });
    deepStrictEqual(await store.claim(at(id, 'delivered')), { outcome: 'busy' });
    // Another transfer is not held by it.
    await holds(store, at(freshTransfer(), 'submitted'));
  });
}

function registerRecorded(test: Register): void {
  test('commit records the state and drops the claim: the state is then a duplicate, a newer one claimed with it as previous', async (store) => {
    const id = freshTransfer();
    await record(store, at(id, 'submitted'));
    deepStrictEqual(await store.claim(at(id, 'submitted')), { outcome: 'duplicate', previous: 'submitted' });
    const newer = await store.claim(at(id, 'source_confirmed'));
    equal(newer.outcome, 'claimed');
    equal((newer as Claimed).previous, 'submitted');
  });

  test('a state ranked below the recorded one is stale; after a final state every other state is stale', async (store) => {
    const id = freshTransfer();
    await record(store, at(id, 'source_confirmed'));
    deepStrictEqual(await store.claim(at(id, 'submitted')), {
      outcome: 'stale',
      previous: 'source_confirmed',
    });
    await record(store, at(id, 'delivered'));
    // Every other state that sends a callback, from the state table.
    for (const status of CALLBACK_STATES) {
      if (status === 'delivered') continue;
      deepStrictEqual(
        await store.claim(at(id, status as KnownTransferStatus)),
        { outcome: 'stale', previous: 'delivered' },
        status,
      );
    }
    deepStrictEqual(await store.claim(at(id, 'delivered')), { outcome: 'duplicate', previous: 'delivered' });
  });

  test('the recorded state and older ones are answered duplicate and stale even while the transfer is held', async (store) => {
    const id = freshTransfer();
    await record(store, at(id, 'source_confirmed'));
    await holds(store, at(id, 'delivered'));
    deepStrictEqual(await store.claim(at(id, 'source_confirmed')), {
      outcome: 'duplicate',
      previous: 'source_confirmed',
    });
    deepStrictEqual(await store.claim(at(id, 'submitted')), {
      outcome: 'stale',
      previous: 'source_confirmed',
    });
    deepStrictEqual(await store.claim(at(id, 'delivered')), { outcome: 'busy' });
  });
}

function registerRelease(test: Register, claimTtlMs: number): void {
  test('release drops the claim and records nothing: the state is claimed again, with the same previous', async (store) => {
    const id = freshTransfer();
    await record(store, at(id, 'submitted'));
    const first = await holds(store, at(id, 'source_confirmed'));
    await store.release(at(id, 'source_confirmed'), first);
    const again = await store.claim(at(id, 'source_confirmed'));
    equal(again.outcome, 'claimed');
    equal((again as Claimed).previous, 'submitted');
  });

  test('a claim neither committed nor released lapses after its ttlMs, and the next claim takes it', async (store) => {
    const id = freshTransfer();
    const lapsed = await holds(store, at(id, 'submitted', claimTtlMs));
    deepStrictEqual(await store.claim(at(id, 'submitted')), { outcome: 'busy' });
    await sleep(claimTtlMs + 100);
    notEqual(await holds(store, at(id, 'submitted')), lapsed);
  });

  test("once a lapsed claim is taken, its token's commit and release change nothing; the new holder's commit records", async (store) => {
    const id = freshTransfer();
    const short = at(id, 'submitted', claimTtlMs);
    const lapsed = await holds(store, short);
    await sleep(claimTtlMs + 100);
    const current = await holds(store, at(id, 'submitted'));
    await store.commit(short, lapsed);
    // Busy: the old commit recorded nothing (not a duplicate) and left the new claim in place.
    deepStrictEqual(await store.claim(at(id, 'submitted')), { outcome: 'busy' });
    await store.release(short, lapsed);
    deepStrictEqual(await store.claim(at(id, 'submitted')), { outcome: 'busy' });
    await store.commit(at(id, 'submitted'), current);
    deepStrictEqual(await store.claim(at(id, 'submitted')), { outcome: 'duplicate', previous: 'submitted' });
  });

  test('a token is spent by its commit or release: used again on a later claim it changes nothing', async (store) => {
    const id = freshTransfer();
    const committed = await holds(store, at(id, 'submitted'));
    await store.commit(at(id, 'submitted'), committed);
    const released = await holds(store, at(id, 'source_confirmed'));
    await store.release(at(id, 'source_confirmed'), released);
    const current = await holds(store, at(id, 'source_confirmed'));
    for (const spent of [committed, released]) {
      await store.commit(at(id, 'source_confirmed'), spent);
      await store.release(at(id, 'source_confirmed'), spent);
      deepStrictEqual(await store.claim(at(id, 'source_confirmed')), { outcome: 'busy' });
    }
    await store.release(at(id, 'source_confirmed'), current);
    const free = await store.claim(at(id, 'source_confirmed'));
    equal(free.outcome, 'claimed');
    equal((free as Claimed).previous, 'submitted');
  });
}

function registerConcurrency(test: Register): void {
  test('many claims of one transfer at once, on many transfers at once: exactly one claimed each, the others busy', async (store) => {
    const ids = Array.from({ length: 10 }, freshTransfer);
    const results = await Promise.all(
      ids.map((id) => Promise.all(Array.from({ length: 12 }, () => store.claim(at(id, 'submitted'))))),
    );
    for (const claims of results) {
      equal(claims.filter((claim) => claim.outcome === 'claimed').length, 1);
      equal(claims.filter((claim) => claim.outcome === 'busy').length, claims.length - 1);
    }
  });

  test('claims of different states of one transfer at once: exactly one claimed, the others busy', async (store) => {
    const id = freshTransfer();
    // Every state that sends a callback, twice over, from the state table.
    const states = [...CALLBACK_STATES] as KnownTransferStatus[];
    const claims = await Promise.all([...states, ...states].map((status) => store.claim(at(id, status))));
    equal(claims.filter((claim) => claim.outcome === 'claimed').length, 1);
    equal(claims.filter((claim) => claim.outcome === 'busy').length, claims.length - 1);
  });

  test('claims at once after a commit: each a duplicate or stale, none claimed', async (store) => {
    const id = freshTransfer();
    await record(store, at(id, 'delivered'));
    const claims = await Promise.all(
      ['delivered', 'submitted', 'delivered', 'refunded', 'delivered'].map((status) =>
        store.claim(at(id, status as KnownTransferStatus)),
      ),
    );
    deepStrictEqual(
      claims.map((claim) => claim.outcome),
      ['duplicate', 'stale', 'duplicate', 'stale', 'duplicate'],
    );
  });
}
