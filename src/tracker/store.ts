// The contract between the transfer tracker and where it keeps its work. The tracker decides what
// a transfer's record says; a store only keeps records, hands out short fenced leases on the ones
// that are due, and merges what the router observed. Memory, Redis and Postgres stores implement
// it, and so may a partner's own (the conformance suite in `partner-s2s-sdk/testing` checks one).
import type { TrackedOperation } from '../core/tracking.js';
import type { BridgeTransfer } from '../schemas/bridge.js';

/** The operations every `TrackerStore` has (`list` is optional: stores written before it keep tracking). */
export const TRACKER_STORE_METHODS = [
  'track',
  'claimDue',
  'claim',
  'renew',
  'complete',
  'release',
  'observe',
  'get',
  'users',
  'prune',
] as const;

/**
 * What the tracker keeps per transfer. The tracker writes it whole through `complete`; a store
 * keeps it as given, except `observed`/`observedRank`, which it merges with what `observe` recorded
 * (the newer by rank wins), and the lease fields it owns.
 */
export interface TrackerRecord {
  transferId: string;
  userId: string;
  /** The newest state seen, by rank, from a read or a delivery, as the service sent it; null before any. */
  observed: BridgeTransfer | null;
  /** The rank of `observed`; -1 before any. */
  observedRank: number;
  /** The last status whose events all returned; null before the first. */
  dispatched: string | null;
  /** The rank of `dispatched`; -1 before any. */
  dispatchedRank: number;
  /** A final state was dispatched: the record is no longer due and may be pruned. */
  final: boolean;
  /** The phase the schedule is in (the observed status), and when it was first observed (epoch ms). */
  phase: string | null;
  phaseSince: number | null;
  /** Phases whose deadline was already reported as `overdue`. */
  overdue: string[];
  /** The delay used for the last schedule step, which the next step grows from (ms). */
  intervalMs: number;
  /** Consecutive failed reads (the back-off grows with it; it is never a reason to give up). */
  failures: number;
  /** Reads made of this transfer, for the figures a partner may want. */
  reads: number;
  /**
   * When the quote of a pending transfer expires (epoch ms), when the tracker knows it (a transfer
   * recorded by `execute`): it is read once shortly after, to learn that it expired. Optional, so
   * that a store written before it keeps working; a store that keeps the record whole keeps it.
   */
  expiresAt?: number | null;
  /**
   * The transfer's user operation (chain, EntryPoint, hash, sender, nonce), when the tracker knows
   * it (recorded by `execute`, or given to `track`): an `overdue` in `submitted` says what the chain
   * says of it. Optional like `expiresAt`; a store that keeps the record whole keeps it.
   */
  operation?: TrackedOperation | null;
  /** How the record came to be. */
  source: 'track' | 'execute' | 'discovered';
  /** Epoch ms, by the tracker's clock. */
  trackedAt: number;
  updatedAt: number;
}

/** A lease on one record, good until the store's clock passes `leaseMs` after the claim. */
export interface TrackerLease {
  record: TrackerRecord;
  /** Grows by one with every claim of this transfer: a `complete` with an older fence is refused. */
  fence: number;
  owner: string;
}

/** What `track` stores; `options.db`, when given, is the connection the insert runs on. */
export interface TrackOptions {
  /**
   * A store-specific connection to insert through, e.g. a Postgres transaction client, so that the
   * record commits or rolls back with the partner's own row. Stores that cannot honour it refuse it.
   */
  db?: unknown;
}

/** What `renew` takes. */
export interface RenewRequest {
  /** The lease lasts this long from now, on the store's clock. */
  leaseMs: number;
}

/** What `claimDue` (and, without `limit`, `claim`) takes. */
export interface ClaimDueRequest {
  /** A name for this process, unique in the fleet. */
  owner: string;
  leaseMs: number;
  /** At most this many leases. */
  limit: number;
}

/** What `claim` answers: a lease, or why there is none. */
export type ClaimOneResult =
  | { outcome: 'claimed'; lease: TrackerLease }
  /** Another owner holds an unexpired lease on it. */
  | { outcome: 'busy' }
  /** No record for this transfer. */
  | { outcome: 'unknown' };

/** What `complete` writes. */
export interface CompleteRequest {
  /** The record as the tracker leaves it. */
  record: TrackerRecord;
  /**
   * When the transfer is next due, from now by the store's clock. Ignored when `record.final`. A
   * store makes it due at once instead when `observe` recorded something newer during the lease.
   */
  nextReadInMs: number;
}

/** What `list` takes: the tracker has checked every field before it asks. */
export interface TrackerListRequest {
  /** Only this user's records. */
  userId?: string;
  /** `true`: only records not `final`; `false`: only `final` ones; absent: both. */
  open?: boolean;
  /** Only records whose `transferId` comes after this one in the store's order (the previous page's last). */
  after?: string;
  /** At most this many records (1 to `DEFAULTS.tracker.list.maxLimit` + 1). */
  limit: number;
}

/**
 * Where a transfer tracker keeps its records. Every operation must be atomic across the
 * processes sharing the store, and bounded in time by the store itself (it rejects, never hangs):
 * the tracker reports the rejection on `error` and tries again later.
 *
 * Leases are compared on the store's own clock (the database's `now()`, Redis's `TIME`), so the
 * fleet needs no clock agreement; `TrackerRecord` times are the tracker's and only informational
 * for a store.
 *
 * @example
 * const tracker = createTransferTracker({ client, store: new MemoryTrackerStore() });
 */
export interface TrackerStore {
  /** Inserts `record` due at once unless the transfer is already tracked. Resolves true when inserted. */
  track(record: TrackerRecord, options?: TrackOptions): Promise<boolean>;
  /**
   * Leases up to `limit` records that are not final, are due, and hold no unexpired lease, the
   * earliest due first; each lease's fence is one more than the transfer's previous one.
   */
  claimDue(request: ClaimDueRequest): Promise<TrackerLease[]>;
  /** Leases one record now, due or not (a `pollOnce`, a delivery's wake-up). */
  claim(transferId: string, request: Omit<ClaimDueRequest, 'limit'>): Promise<ClaimOneResult>;
  /**
   * Keeps a lease: when `lease.fence` is still the transfer's latest and the lease was neither
   * completed nor released, it now ends `leaseMs` from now on the store's clock (whether or not it
   * had run out meanwhile: nobody claimed the transfer since) and `renew` resolves true; else it
   * resolves false and writes nothing. Atomic with `claim` and `claimDue`: a lease renewed is not
   * claimable by anyone until its new end. The tracker renews right before each listener call of
   * a dispatch and dispatches nothing when it resolves false, so that a step that outlived its
   * lease never dispatches what the transfer's new holder dispatches too.
   *
   * @example
   * // A store on a SQL table with fence and lease_until columns:
   * async renew(lease, { leaseMs }) {
   *   const { rows } = await db.query(
   *     `update tracker set lease_until = now() + $3 * interval '1 millisecond'
   *       where transfer_id = $1 and fence = $2 and lease_until is not null returning 1`,
   *     [lease.record.transferId, lease.fence, leaseMs]);
   *   return rows.length > 0;
   * }
   */
  renew(lease: TrackerLease, request: RenewRequest): Promise<boolean>;
  /**
   * Writes `record` and drops the lease, only if `lease.fence` is still the transfer's latest.
   * Resolves false, writing nothing, when it is not (the lease expired and another owner claimed it).
   */
  complete(lease: TrackerLease, request: CompleteRequest): Promise<boolean>;
  /** Drops the lease without writing the record, due again after `retryInMs`, if the fence holds. */
  release(lease: TrackerLease, retryInMs: number): Promise<void>;
  /**
   * Records a state the router saw: when `rank` is above the record's `observedRank`, it becomes
   * `observed`; either way a non-final record becomes due at once (also while leased: the holder's
   * `complete` keeps the newer observation and leaves the record due). Unknown transfers are ignored.
   */
  observe(transferId: string, observed: BridgeTransfer, rank: number): Promise<void>;
  get(transferId: string): Promise<TrackerRecord | undefined>;
  /** Users with a record tracked or updated at or after `since` (epoch ms), for the discovery sweep. */
  users(since: number): Promise<string[]>;
  /** Deletes final records last updated before `before` (epoch ms); resolves how many. */
  prune(before: number): Promise<number>;
  /**
   * The records that match `request`, ordered by `transferId` in the store's own order (the same
   * on every call, e.g. a text index's), starting after `request.after`, at most `request.limit`.
   * The order is by id only, never by state: a record that changes state between two pages keeps
   * its place, so paging by the last id seen skips and repeats nothing. Read through an index
   * (keyset), never by scanning every record. `tracker.list` builds its pages and opaque cursors on it.
   *
   * Optional in the type so that a store written before it keeps compiling and tracking; only
   * `tracker.list` needs it, and rejects with a `TrackerError` (stage `store`) without it.
   *
   * @example
   * // With both filters, on a SQL table with an index on (user_id, final, transfer_id):
   * const { rows } = await db.query(
   *   `select record from tracker where user_id = $1 and final = $2 and transfer_id > $3
   *     order by transfer_id limit $4`,
   *   [request.userId, !request.open, request.after ?? '', request.limit]);
   * return rows.map((row) => row.record);
   */
  list?(request: TrackerListRequest): Promise<TrackerRecord[]>;
}
