/**
 * `partner-s2s-sdk/stores`: what writing a store of your own takes beyond its interface. The
 * interfaces a client, a router and a tracker are given (`TokenStore`, `CallbackStore`,
 * `TrackerStore`) and the memory stores are in `partner-s2s-sdk`; the stores on Redis and Postgres
 * in `partner-s2s-sdk/redis` and `partner-s2s-sdk/postgres`; the conformance suites that check a
 * store in `partner-s2s-sdk/testing`. Here: the records, leases and claims those interfaces speak
 * of, the comparison every callback store makes, and a tracker record before its first read.
 *
 * @module partner-s2s-sdk/stores
 */

// A token store: the token it keeps, and its optional lock.
export type { StoredToken, TokenLock } from '../auth/token-store.js';

// A callback store: the claim the router makes, what it answers, and the one comparison to make.
export type { ClaimRequest, ClaimResult, RecordedState } from '../callbacks/store.js';
export { compareClaim } from '../callbacks/store.js';

// A tracker store: the record it keeps, its leases, what each operation takes and answers.
export { newTrackerRecord } from '../tracker/record.js';
export type {
  ClaimDueRequest,
  ClaimOneResult,
  CompleteRequest,
  RenewRequest,
  TrackerLease,
  TrackerListRequest,
  TrackerRecord,
  TrackOptions,
} from '../tracker/store.js';
