import * as z from 'zod';
import { durationMs, nonEmptyString, parseArgs } from '../core/args.js';
import { DEFAULTS } from '../core/defaults.js';

/**
 * Where a state stands in a transfer's life, as the router hands it to the store: the store needs
 * it to refuse a state older than the one recorded, atomically with the claim.
 */
export interface ClaimRequest {
  transferId: string;
  status: string;
  /** The state's place in the transfer's life; a lower rank than the recorded one is stale. */
  rank: number;
  /** Whether this state ends the transfer: once one is recorded every other state is stale. */
  final: boolean;
  /** How long the claim holds before it expires on its own (a process that crashed mid-claim). */
  ttlMs: number;
}

/** What a claim led to. Only `claimed` lets the router dispatch; it must then commit or release. */
export type ClaimResult =
  /** This caller holds the transfer until it commits, releases, or the claim expires. */
  | { outcome: 'claimed'; token: string; previous: string | undefined }
  /** This very state is already recorded. */
  | { outcome: 'duplicate'; previous: string }
  /** A later (or a final) state is already recorded. */
  | { outcome: 'stale'; previous: string }
  /** Another caller holds a claim on this transfer: try again later (the handlers answer 503). */
  | { outcome: 'busy' };

/** The record a store keeps per transfer (what `claim` compares against). */
export interface RecordedState {
  status: string;
  rank: number;
  final: boolean;
}

/**
 * Where the router records the last state it dispatched for each transfer. Every operation must
 * be atomic across the processes sharing the store: that is what makes a fleet dispatch each
 * `(transferId, status)` once. `partner-s2s-sdk/redis` has one built on Redis.
 *
 * The router calls `claim`; on `claimed` it runs the listeners, then `commit`s (all succeeded) or
 * `release`s (one failed: the service's retry dispatches it again). A claim that is neither
 * committed nor released (the process died) expires after `ttlMs`, so nothing is lost.
 *
 * @example
 * const store: CallbackStore = {
 *   claim: (request) => myDb.claimTransferState(request), // one transaction: compare, then lock
 *   commit: (request, token) => myDb.recordTransferState(request, token),
 *   release: (request, token) => myDb.unlockTransfer(request.transferId, token),
 * };
 */
export interface CallbackStore {
  /**
   * Claims `(transferId, status)` if it is newer than what is recorded and nobody holds it. The
   * recorded state is compared first: a state already recorded, or an older one, is answered
   * `duplicate` or `stale` even while another caller holds the transfer.
   */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /**
   * Records `request.status` as the transfer's state and drops the claim, if `token` still holds
   * it. A token no longer holds once it committed or released, or once its claim lapsed and another
   * caller claimed the transfer; a lapsed claim nobody took may still be committed, or not.
   */
  commit(request: ClaimRequest, token: string): Promise<void>;
  /** Drops the claim without recording anything, if `token` still holds it. */
  release(request: ClaimRequest, token: string): Promise<void>;
}

// Built on first use, not at import.
const claimRequestSchema = z.lazy(() =>
  z.looseObject({
    transferId: nonEmptyString,
    status: nonEmptyString,
    rank: z.number({ error: 'must be a number' }),
    final: z.boolean({ error: 'must be true or false' }),
    ttlMs: durationMs,
  }),
);
/** Built once: `pick` builds a new schema, which zod compiles again on its first parse. */
const comparedSchema = z.lazy(() => claimRequestSchema.unwrap().pick({ status: true, rank: true }));
const tokenSchema = nonEmptyString;
const recordedSchema = z.lazy(() =>
  z.looseObject({ status: z.string(), rank: z.number(), final: z.boolean() }).optional(),
);

/**
 * Checks a claim request as a store receives it, so a store written on top of it fails with an
 * ArgumentError, not somewhere inside its database client.
 *
 * @example
 * const request = checkClaimRequest(input, 'MyStore.claim');
 */
export function checkClaimRequest(request: unknown, where: string): ClaimRequest {
  return parseArgs(claimRequestSchema, request, where);
}

/** @internal the token check the stores share. */
export function checkClaimToken(token: unknown, where: string): string {
  return parseArgs(tokenSchema, token, where);
}

/**
 * Decides a claim against what is recorded: the one comparison every store makes, so the memory
 * and Redis stores cannot order states differently. Exported for stores written by partners.
 *
 * @example
 * const verdict = compareClaim(recorded, request); // 'new' | 'duplicate' | 'stale'
 */
export function compareClaim(
  recorded: RecordedState | undefined,
  request: Pick<ClaimRequest, 'status' | 'rank'>,
): 'new' | 'duplicate' | 'stale' {
  parseArgs(recordedSchema, recorded, 'compareClaim');
  parseArgs(comparedSchema, request, 'compareClaim');
  return decide(recorded, request);
}

/** `compareClaim` on values already checked (the memory store's own records and requests). */
function decide(
  recorded: RecordedState | undefined,
  request: Pick<ClaimRequest, 'status' | 'rank'>,
): 'new' | 'duplicate' | 'stale' {
  if (recorded === undefined) return 'new';
  if (recorded.status === request.status) return 'duplicate';
  if (recorded.final || request.rank < recorded.rank) return 'stale';
  return 'new';
}

interface Held {
  token: string;
  expiresAt: number;
}

/**
 * The memory store's workings, synchronous and on requests already checked. The router's default
 * store is one of these: its claim requests come from a validated transfer and its own checked
 * options, and it settles at once, so the router calls it without a promise, a timer or a check.
 *
 * @internal
 * @example
 * const store = new MemoryClaims(50_000);
 * const claim = store.claim(request); // { outcome: 'claimed', token, previous }
 */
export class MemoryClaims {
  readonly #states = new Map<string, RecordedState>();
  readonly #claims = new Map<string, Held>();
  readonly #capacity: number;
  /**
   * One iterator over the records, kept from one eviction to the next: an update moves its record
   * to the end, so the iterator meets the least recently updated first. A fresh `keys()` per
   * eviction would walk every hole deleted from the front of the Map (V8 keeps them until it
   * rehashes), which cost tens of µs per callback once the store was full.
   */
  #oldest: Iterator<string>;
  #claimsMade = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
    this.#oldest = this.#states.keys();
  }

  claim(request: ClaimRequest): ClaimResult {
    const recorded = this.#states.get(request.transferId);
    const verdict = decide(recorded, request);
    if (verdict !== 'new') return { outcome: verdict, previous: (recorded as RecordedState).status };
    const held = this.#claims.get(request.transferId);
    const now = Date.now();
    if (held && held.expiresAt > now) return { outcome: 'busy' };
    // Unique within this store is all a token needs here: it never leaves the process.
    const token = `${++this.#claimsMade}`;
    this.#claims.set(request.transferId, { token, expiresAt: now + request.ttlMs });
    return { outcome: 'claimed', token, previous: recorded?.status };
  }

  commit(request: ClaimRequest, token: string): void {
    // A claim that expired and was taken by another caller is theirs now: record nothing over it.
    if (this.#claims.get(request.transferId)?.token !== token) return;
    this.#claims.delete(request.transferId);
    this.#states.delete(request.transferId);
    this.#states.set(request.transferId, {
      status: request.status,
      rank: request.rank,
      final: request.final,
    });
    if (this.#states.size > this.#capacity) {
      let oldest = this.#oldest.next();
      if (oldest.done) {
        this.#oldest = this.#states.keys();
        oldest = this.#oldest.next();
      }
      this.#states.delete(oldest.value as string);
    }
  }

  release(request: ClaimRequest, token: string): void {
    if (this.#claims.get(request.transferId)?.token === token) this.#claims.delete(request.transferId);
  }

  get(transferId: string): string | undefined {
    return this.#states.get(transferId)?.status;
  }

  get size(): number {
    return this.#states.size;
  }
}

/**
 * The default store: this process's memory, holding the most recently seen transfers only. It
 * keeps the same claim contract as a shared store, so a router behaves the same on either.
 *
 * @example
 * const router = createCallbackRouter({ authenticate, store: new MemoryCallbackStore(200_000) });
 */
export class MemoryCallbackStore implements CallbackStore {
  readonly #claims: MemoryClaims;

  /**
   * @param capacity transfers remembered; the least recently updated is forgotten first.
   * @default DEFAULTS.callbacks.storeCapacity (50,000)
   */
  constructor(capacity = DEFAULTS.callbacks.storeCapacity) {
    this.#claims = new MemoryClaims(capacity);
  }

  async claim(input: ClaimRequest): Promise<ClaimResult> {
    return this.#claims.claim(checkClaimRequest(input, 'MemoryCallbackStore.claim'));
  }

  async commit(input: ClaimRequest, token: string): Promise<void> {
    const request = checkClaimRequest(input, 'MemoryCallbackStore.commit');
    checkClaimToken(token, 'MemoryCallbackStore.commit');
    return this.#claims.commit(request, token);
  }

  async release(input: ClaimRequest, token: string): Promise<void> {
    const request = checkClaimRequest(input, 'MemoryCallbackStore.release');
    checkClaimToken(token, 'MemoryCallbackStore.release');
    return this.#claims.release(request, token);
  }

  /** The state recorded for a transfer, if any. */
  async get(transferId: string): Promise<string | undefined> {
    return this.#claims.get(transferId);
  }

  get size(): number {
    return this.#claims.size;
  }
}
