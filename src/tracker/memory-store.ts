import { readArgs } from '../core/args.js';
import { ArgumentError } from '../errors/client-errors.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import type {
  ClaimDueRequest,
  ClaimOneResult,
  CompleteRequest,
  RenewRequest,
  TrackerLease,
  TrackerListRequest,
  TrackerRecord,
  TrackerStore,
  TrackOptions,
} from './store.js';

/** One record and what the store keeps beside it: when it is due, and its lease. */
interface Entry {
  record: TrackerRecord;
  dueAt: number;
  fence: number;
  owner: string | undefined;
  leaseUntil: number;
  /** `observe` recorded something while the lease was held: the holder's `complete` leaves it due. */
  observedDuringLease: boolean;
}

/**
 * The tracker's store in this process's memory: the default of `createTransferTracker`. It keeps
 * nothing across a restart and shares nothing with another process; for a fleet use the Redis or
 * Postgres store. Records are copied in and out, as a remote store's would be.
 *
 * @example
 * const tracker = createTransferTracker({ client, store: new MemoryTrackerStore() });
 */
export class MemoryTrackerStore implements TrackerStore {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;

  /** `now` is the store's clock, which leases are compared on (`Date.now` unless a test gives one). */
  constructor(options: { now?: () => number } = {}) {
    const now = readArgs('new MemoryTrackerStore', () => options?.now);
    if (now !== undefined && typeof now !== 'function') {
      throw new ArgumentError({
        where: 'new MemoryTrackerStore',
        issues: [{ path: 'now', message: 'must be a function returning epoch ms' }],
      });
    }
    this.#now = now ?? Date.now;
  }

  async track(given: TrackerRecord, options?: TrackOptions): Promise<boolean> {
    const record = copyRecord('MemoryTrackerStore.track', given);
    if (readArgs('MemoryTrackerStore.track', () => options?.db) !== undefined) {
      throw new ArgumentError({
        where: 'MemoryTrackerStore.track',
        issues: [{ path: 'db', message: 'a memory store has no connection to insert through' }],
      });
    }
    if (this.#entries.has(record.transferId)) return false;
    this.#entries.set(record.transferId, {
      record,
      dueAt: this.#now(),
      fence: 0,
      owner: undefined,
      leaseUntil: 0,
      observedDuringLease: false,
    });
    return true;
  }

  async claimDue(given: ClaimDueRequest): Promise<TrackerLease[]> {
    const request = readRequest('MemoryTrackerStore.claimDue', given);
    const now = this.#now();
    const due = [...this.#entries.values()]
      .filter((entry) => !entry.record.final && entry.dueAt <= now && entry.leaseUntil <= now)
      .sort((a, b) => a.dueAt - b.dueAt)
      .slice(0, Math.max(0, request.limit ?? 0));
    return due.map((entry) => this.#lease(entry, request, now));
  }

  async claim(transferId: string, given: Omit<ClaimDueRequest, 'limit'>): Promise<ClaimOneResult> {
    const request = readRequest('MemoryTrackerStore.claim', given);
    const entry = this.#entries.get(transferId);
    if (!entry) return { outcome: 'unknown' };
    const now = this.#now();
    if (entry.leaseUntil > now) return { outcome: 'busy' };
    return { outcome: 'claimed', lease: this.#lease(entry, request, now) };
  }

  #lease(entry: Entry, request: Omit<ClaimDueRequest, 'limit'>, now: number): TrackerLease {
    entry.fence += 1;
    entry.owner = request.owner;
    entry.leaseUntil = now + request.leaseMs;
    entry.observedDuringLease = false;
    return { record: structuredClone(entry.record), fence: entry.fence, owner: request.owner };
  }

  /** The entry `lease` still holds: the transfer's latest fence. */
  #held(where: string, lease: TrackerLease): Entry | undefined {
    const { transferId, fence, owner } = readArgs(where, () => ({
      transferId: lease.record.transferId,
      fence: lease.fence,
      owner: lease.owner,
    }));
    const entry = this.#entries.get(transferId);
    return entry && entry.fence === fence && entry.owner === owner ? entry : undefined;
  }

  async renew(lease: TrackerLease, request: RenewRequest): Promise<boolean> {
    const where = 'MemoryTrackerStore.renew';
    const entry = this.#held(where, lease);
    if (!entry) return false;
    entry.leaseUntil = this.#now() + readArgs(where, () => Number(request.leaseMs) || 0);
    return true;
  }

  async complete(lease: TrackerLease, request: CompleteRequest): Promise<boolean> {
    const where = 'MemoryTrackerStore.complete';
    const entry = this.#held(where, lease);
    if (!entry) return false;
    const stored = entry.record;
    const record = copyRecord(
      where,
      readArgs(where, () => request.record),
    );
    const nextReadInMs = readArgs(where, () => Number(request.nextReadInMs) || 0);
    // What the router observed meanwhile is newer than what the holder read: it is kept.
    if (stored.observedRank > record.observedRank) {
      record.observed = stored.observed;
      record.observedRank = stored.observedRank;
    }
    entry.record = record;
    entry.dueAt = entry.observedDuringLease ? this.#now() : this.#now() + nextReadInMs;
    this.#unlease(entry);
    return true;
  }

  async release(lease: TrackerLease, retryInMs: number): Promise<void> {
    const entry = this.#held('MemoryTrackerStore.release', lease);
    if (!entry) return;
    entry.dueAt = entry.observedDuringLease ? this.#now() : this.#now() + retryInMs;
    this.#unlease(entry);
  }

  #unlease(entry: Entry): void {
    entry.owner = undefined;
    entry.leaseUntil = 0;
    entry.observedDuringLease = false;
  }

  async observe(transferId: string, observed: BridgeTransfer, rank: number): Promise<void> {
    const entry = this.#entries.get(transferId);
    if (!entry) return;
    if (rank > entry.record.observedRank) {
      entry.record.observed = readArgs('MemoryTrackerStore.observe', () => structuredClone(observed));
      entry.record.observedRank = rank;
    }
    if (entry.record.final) return;
    const now = this.#now();
    entry.dueAt = Math.min(entry.dueAt, now);
    if (entry.leaseUntil > now) entry.observedDuringLease = true;
  }

  async get(transferId: string): Promise<TrackerRecord | undefined> {
    const entry = this.#entries.get(transferId);
    return entry ? structuredClone(entry.record) : undefined;
  }

  async users(since: number): Promise<string[]> {
    const users = new Set<string>();
    for (const { record } of this.#entries.values()) {
      if (Math.max(record.trackedAt, record.updatedAt) >= since) users.add(record.userId);
    }
    return [...users];
  }

  /** Sorts the matching ids on each call: memory holds few enough records that this is the index. */
  async list(request: TrackerListRequest): Promise<TrackerRecord[]> {
    const { userId, open, after, limit } = readArgs('MemoryTrackerStore.list', () => ({ ...request }));
    const matching: TrackerRecord[] = [];
    for (const { record } of this.#entries.values()) {
      if (userId !== undefined && record.userId !== userId) continue;
      if (open !== undefined && record.final === open) continue;
      if (after !== undefined && record.transferId <= after) continue;
      matching.push(record);
    }
    matching.sort((a, b) => (a.transferId < b.transferId ? -1 : 1));
    return matching.slice(0, Math.max(0, Number(limit) || 0)).map((record) => structuredClone(record));
  }

  async prune(before: number): Promise<number> {
    let pruned = 0;
    for (const [transferId, { record }] of this.#entries) {
      if (record.final && record.updatedAt < before) {
        this.#entries.delete(transferId);
        pruned++;
      }
    }
    return pruned;
  }
}

/** A copy of a record handed in: what the store keeps is its own, and a record that cannot be read is an `ArgumentError`. */
function copyRecord(where: string, record: TrackerRecord): TrackerRecord {
  const copy = readArgs(where, () => structuredClone(record));
  if (typeof copy?.transferId !== 'string' || typeof copy.userId !== 'string') {
    throw new ArgumentError({ where, issues: [{ path: 'record', message: 'must be a TrackerRecord' }] });
  }
  return copy;
}

/** The fields of a claim request, read once. */
function readRequest(
  where: string,
  request: ClaimDueRequest | Omit<ClaimDueRequest, 'limit'>,
): ClaimDueRequest {
  return readArgs(where, () => ({
    owner: String(request.owner),
    leaseMs: Number(request.leaseMs) || 0,
    limit: Number((request as ClaimDueRequest).limit) || 0,
  }));
}
