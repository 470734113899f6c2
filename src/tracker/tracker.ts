import * as z from 'zod';
import { nonEmptyString, parseArgs } from '../core/args.js';
import { DEFAULTS } from '../core/defaults.js';
import type { Page } from '../core/pagination.js';
import { type ExecutedTransfer, TRACK_BEFORE_SIGNING } from '../core/tracking.js';
import { ArgumentError } from '../errors/client-errors.js';
import { TrackerError } from '../errors/tracker-errors.js';
import { operationOf } from '../flows/execute/tracking.js';
import type { BridgeBundle, BridgeTransfer } from '../schemas/bridge.js';
import { ADDRESS_PATTERN, HASH32_PATTERN } from '../schemas/common.js';
import { stateRank } from '../schemas/states.js';
import { sweep } from './discover.js';
import { TrackerEvents, type TransferTrackerEvents } from './events.js';
import { listRecords, type TrackerListOptions } from './list.js';
import { type TrackerSettings, type TransferTrackerOptions, trackerSettings } from './options.js';
import { ReadLimiter } from './rate.js';
import { newTrackerRecord } from './record.js';
import { type StepContext, step, storeError } from './step.js';
import type { TrackerRecord } from './store.js';

/** Final records are pruned at most this often by one tracker. */
const PRUNE_EVERY_MS = 3_600_000;

const trackArgs = z.lazy(() =>
  z.strictObject({
    userId: nonEmptyString,
    transferId: nonEmptyString,
    // The construct result's bundle: what the chain is asked about when the transfer is overdue.
    bundle: z
      .looseObject({
        chainId: z.int().positive(),
        entryPoint: z.string().regex(ADDRESS_PATTERN, 'must be a 20-byte hex address'),
        userOpHash: z.string().regex(HASH32_PATTERN, 'must be a 32-byte hex hash'),
        userOp: z.looseObject({ sender: z.string().regex(ADDRESS_PATTERN, 'must be a 20-byte hex address') }),
      })
      .optional(),
  }),
);
const runOnceOptions = z.lazy(() =>
  z.strictObject({
    limit: z.int({ error: 'must be a whole number' }).positive('must be positive').optional(),
  }),
);
const trackOptions = z.lazy(() => z.strictObject({ db: z.unknown().optional() }).optional());

/** What `runOnce` did. */
export interface TrackerRound {
  /** Reads made: transfers read, and list pages of the discovery sweep. */
  read: number;
  /** States dispatched (each `transition`, with its `final` when final). */
  dispatched: number;
}

/**
 * Follows transfers to a final state durably: records in a store, short fenced leases, reads on a
 * schedule, callbacks (through a router) as observations, and a sweep that adopts transfers
 * nobody tracked. Made by `createTransferTracker`.
 *
 * @example
 * const tracker = createTransferTracker({ client, store, router });
 * tracker.on('final', (transfer) => settle(transfer));
 * await tracker.track({ userId, transferId });
 * await tracker.start();
 */
export class TransferTracker {
  readonly #settings: TrackerSettings;
  readonly #events: TrackerEvents;
  readonly #limiter: ReadLimiter;
  readonly #owner = `tracker-${globalThis.crypto.randomUUID()}`;
  #abort = new AbortController();
  #running = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #ticking = false;
  #again = false;
  #lastSweep = Number.NEGATIVE_INFINITY;
  #lastPrune = Number.NEGATIVE_INFINITY;
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(options: TransferTrackerOptions) {
    this.#settings = trackerSettings(options);
    this.#events = new TrackerEvents(this.#settings.logger, this.#settings.listenerTimeoutMs);
    this.#limiter = new ReadLimiter(this.#settings.maxReadsPerSecond);
    this.#settings.router?.on('transfer', (transfer: BridgeTransfer) => this.#observe(transfer));
  }

  /**
   * Adds a listener: `transition`, `final`, `overdue`, `discovered` or `error`.
   *
   * @throws ArgumentError for an unknown event name or a listener that is not a function.
   * @example
   * tracker.on('transition', (transfer, previous) => log.info(`${transfer.transferId}: ${previous} → ${transfer.status}`));
   */
  on<E extends keyof TransferTrackerEvents>(event: E, listener: TransferTrackerEvents[E]): this {
    this.#events.on('TransferTracker.on', event, listener);
    return this;
  }

  /**
   * Removes a listener added with `on`.
   *
   * @example
   * tracker.off('final', onFinal);
   */
  off<E extends keyof TransferTrackerEvents>(event: E, listener: TransferTrackerEvents[E]): this {
    this.#events.off('TransferTracker.off', event, listener);
    return this;
  }

  /**
   * Starts following a transfer; durable once it resolves (true when this call recorded it, false
   * when it was tracked already). `db` is a store-specific connection to insert through, e.g. a
   * Postgres transaction client, so the record commits with the partner's own row.
   *
   * With the construct result's `bundle`, an `overdue` of the transfer in `submitted` carries what
   * the chain says of its operation (`onChain`) when the client has an RPC for its chain (`chains`).
   *
   * @throws ArgumentError before anything is stored, for a missing or empty id.
   * @example
   * await tracker.track({ userId, transferId });
   * await tracker.track({ userId, transferId: built.transferId, bundle: built.bundle });
   * await tracker.track({ userId, transferId }, { db: trx }); // with the store of partner-s2s-sdk/postgres
   */
  async track(
    transfer: { userId: string; transferId: string; bundle?: BridgeBundle },
    options?: { db?: unknown },
  ): Promise<boolean> {
    const { bundle, ...ids } = parseArgs(trackArgs, transfer, 'TransferTracker.track');
    const checked = parseArgs(trackOptions, options, 'TransferTracker.track');
    const record: TrackerRecord = {
      ...newTrackerRecord({ ...ids, source: 'track', now: Date.now() }),
      ...(bundle ? operationOf(bundle) : {}),
    };
    return this.#insert(record, checked?.db);
  }

  /** `bridge.execute`'s way in: the record carries the quote's expiry. */
  async [TRACK_BEFORE_SIGNING](transfer: ExecutedTransfer): Promise<boolean> {
    const record: TrackerRecord = {
      ...newTrackerRecord({
        userId: transfer.userId,
        transferId: transfer.transferId,
        source: 'execute',
        now: Date.now(),
      }),
      expiresAt: transfer.expiresAt ?? null,
      ...(transfer.operation ? { operation: transfer.operation } : {}),
    };
    return this.#insert(record, undefined);
  }

  async #insert(record: TrackerRecord, db: unknown): Promise<boolean> {
    let inserted: boolean;
    try {
      inserted = await this.#settings.store.track(record, db === undefined ? undefined : { db });
    } catch (error) {
      if (error instanceof ArgumentError) throw error;
      throw new TrackerError({
        stage: 'track',
        transferId: record.transferId,
        message: `could not record ${record.transferId} in the tracker's store`,
        cause: error,
      });
    }
    this.#wake();
    return inserted;
  }

  /**
   * A page of the transfers this tracker's store follows, by transfer id (a stable order: a
   * record that changes state between pages keeps its place, so paging skips and repeats
   * nothing), each as its `TrackerRecord` (`observed` is the newest state seen, `final` whether
   * its final state was dispatched). `open: true` lists the ones not final yet, `open: false` the
   * final ones (kept for `retentionMs`); `userId` one user's. `nextCursor` is opaque: pass it back
   * with the same `userId` and `open` (or use `getNextPage()`, or `for await` over the page).
   *
   * @throws ArgumentError before the store is asked, for a limit outside 1 to
   * `DEFAULTS.tracker.list.maxLimit`, an empty `userId`, or a cursor that was changed or belongs
   * to other filters. TrackerError (stage `store`) when the store fails, or has no `list` (a
   * store written before it: tracking works, listing does not).
   * @example
   * const page = await tracker.list({ userId, open: true, limit: 50 });
   * for (const record of page.data) console.log(record.transferId, record.observed?.status ?? 'not read yet');
   * if (page.nextCursor) await tracker.list({ userId, open: true, cursor: page.nextCursor });
   * for await (const record of await tracker.list({ open: false })) archive(record);
   */
  list(options?: TrackerListOptions): Promise<Page<TrackerRecord>> {
    return listRecords(this.#settings.store, options);
  }

  /**
   * One round: the discovery sweep when it is due, then up to `limit` due transfers claimed, read,
   * dispatched and committed. For cron, a queue job or a Lambda; a started tracker runs rounds itself.
   *
   * @example
   * const { read, dispatched } = await tracker.runOnce({ limit: 50 });
   */
  async runOnce(options: { limit?: number } = {}): Promise<TrackerRound> {
    const { limit } = parseArgs(runOnceOptions, options ?? {}, 'TransferTracker.runOnce');
    const { read, dispatched } = await this.#hold(this.#round(limit ?? this.#settings.batchSize));
    return { read, dispatched };
  }

  /**
   * Reads one tracked transfer now, dispatches what is new, and returns it (e.g. from a workflow
   * step). When another process holds it this very moment, it is read and returned only.
   *
   * @throws ArgumentError for a transfer that is not tracked; the read's error when it fails.
   * @example
   * const transfer = await tracker.pollOnce(transferId);
   */
  async pollOnce(transferId: string): Promise<BridgeTransfer> {
    const id = parseArgs(nonEmptyString, transferId, 'TransferTracker.pollOnce');
    const store = this.#settings.store;
    const claim = await store.claim(id, { owner: this.#owner, leaseMs: this.#settings.leaseMs });
    if (claim.outcome === 'unknown') {
      throw new ArgumentError({
        where: 'TransferTracker.pollOnce',
        issues: [{ path: 'transferId', message: `${id} is not tracked: track it first` }],
      });
    }
    if (claim.outcome === 'busy') {
      const record = await store.get(id);
      await this.#limiter.take(this.#abort.signal);
      return this.#settings.client.bridge.transfers.get(
        { userId: record!.userId, transferId: id },
        this.#readOptions(),
      );
    }
    const done = await this.#hold(step(this.#context(), claim.lease, true));
    if (done.transfer) return done.transfer;
    throw done.failure ?? new TrackerError({ stage: 'read', transferId: id, message: `${id} was not read` });
  }

  /**
   * Runs rounds every `tickMs` (at once again while rounds come back full, and on `track` or a
   * delivery) until `stop()`.
   *
   * @example
   * await tracker.start();
   * process.on('SIGTERM', () => tracker.stop());
   */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#abort = new AbortController();
    this.#schedule(0);
  }

  /**
   * Stops starting rounds. Reads under way are abandoned and their leases given back; dispatches
   * under way finish, for at most `leaseMs` (a lease not committed by then expires, and another
   * process does the work again).
   *
   * @example
   * await tracker.stop();
   */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // Steps still waiting for room to read, or reading, give their leases back.
    const stopping = this.#abort;
    stopping.abort();
    if (this.#inFlight.size > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise((resolve) => {
        timer = setTimeout(resolve, this.#settings.leaseMs);
      });
      await Promise.race([Promise.allSettled([...this.#inFlight]), bound]);
      clearTimeout(timer);
    }
    // A `runOnce` or `pollOnce` after `stop()` works as before `start()`.
    if (this.#abort === stopping) this.#abort = new AbortController();
  }

  /** Every read's options: its share of the lease whatever the client's settings, and `stop()`. */
  #readOptions(): StepContext['read'] {
    const { timeoutMs, maxRetries, maxRetryTimeMs } = this.#settings.read;
    return { timeoutMs, maxRetries, maxRetryTimeMs, signal: this.#abort.signal };
  }

  #context(): StepContext {
    const { client, store, schedule, deadlines, afterExpiryMs, leaseMs, listenerTimeoutMs } = this.#settings;
    return {
      client,
      store,
      events: this.#events,
      limiter: this.#limiter,
      schedule: {
        schedule,
        deadlines,
        afterExpiryMs,
        stretch: this.#settings.router ? DEFAULTS.tracker.withRouterFactor : 1,
      },
      signal: this.#abort.signal,
      leaseMs,
      listenerTimeoutMs,
      read: this.#readOptions(),
    };
  }

  /** Keeps `work` in the set `stop()` waits for. */
  #hold<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    const forget = () => this.#inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  async #round(limit: number): Promise<TrackerRound & { claimed: number }> {
    const ctx = this.#context();
    const round = { read: 0, dispatched: 0, claimed: 0 };
    const now = Date.now();
    const discover = this.#settings.discover;
    if (discover && now - this.#lastSweep >= discover.everyMs) {
      this.#lastSweep = now;
      round.read += (await sweep(ctx, discover)).read;
    }
    if (now - this.#lastPrune >= Math.min(PRUNE_EVERY_MS, this.#settings.retentionMs)) {
      this.#lastPrune = now;
      await this.#settings.store.prune(now - this.#settings.retentionMs).catch((error: unknown) => {
        this.#events.fail(storeError(error), 'pruning final records failed; pruned again later');
      });
    }
    let leases: Awaited<ReturnType<TrackerSettings['store']['claimDue']>>;
    try {
      const room = Math.max(1, Math.min(limit, this.#limiter.available()));
      leases = await this.#settings.store.claimDue({
        owner: this.#owner,
        leaseMs: this.#settings.leaseMs,
        limit: room,
      });
    } catch (error) {
      this.#events.fail(storeError(error), 'claiming due transfers failed; claimed again later');
      return round;
    }
    round.claimed = leases.length;
    const steps = await Promise.all(leases.map((lease) => step(ctx, lease)));
    for (const done of steps) {
      round.read += done.read;
      round.dispatched += done.dispatched;
    }
    return round;
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#tick(), ms);
  }

  async #tick(): Promise<void> {
    if (!this.#running) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#ticking = true;
    this.#again = false;
    let full = false;
    try {
      const round = await this.#hold(this.#round(this.#settings.batchSize));
      full = round.claimed >= this.#settings.batchSize;
    } catch (error) {
      this.#events.fail(error, 'a round failed; the next one goes on');
    } finally {
      this.#ticking = false;
    }
    if (this.#running) this.#schedule(full || this.#again ? 0 : this.#settings.tickMs);
  }

  /** Something became due now (a track, a delivery): a started tracker looks at once. */
  #wake(): void {
    if (!this.#running) return;
    if (this.#ticking) this.#again = true;
    else this.#schedule(0);
  }

  /**
   * A state the router dispatched: an observation, as a read would be, once it is held against the
   * record (a delivery naming another user than the tracked transfer's is not taken). Never rejects.
   */
  #observe(transfer: BridgeTransfer): Promise<void> | undefined {
    const rank = stateRank(transfer?.status);
    if (rank === undefined) return undefined;
    return this.#record(transfer, rank).then(
      () => this.#wake(),
      (error: unknown) =>
        this.#events.fail(
          error instanceof TrackerError ? error : storeError(error, transfer.transferId),
          'recording a delivery failed; read later instead',
        ),
    );
  }

  async #record(transfer: BridgeTransfer, rank: number): Promise<void> {
    const store = this.#settings.store;
    const id = transfer.transferId;
    const record = await store.get(id);
    if (!record) return;
    if (record.userId !== transfer.userId) {
      throw new TrackerError({
        stage: 'mismatch',
        transferId: id,
        message: `a delivery for ${id} names another user than the tracked transfer's: not taken`,
      });
    }
    await store.observe(id, transfer, rank);
  }
}

/**
 * Creates a transfer tracker. Only `client` is required.
 *
 * @example
 * import { createTransferTracker, MemoryTrackerStore } from 'partner-s2s-sdk';
 * const tracker = createTransferTracker({ client, store: new MemoryTrackerStore(), router });
 * tracker.on('final', (transfer) => settle(transfer));
 * await tracker.start();
 */
export function createTransferTracker(options: TransferTrackerOptions): TransferTracker {
  return new TransferTracker(options);
}
