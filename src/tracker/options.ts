import * as z from 'zod';
import { durationMs, loggerOption, parseArgs, withMethods } from '../core/args.js';
import { DEFAULTS } from '../core/defaults.js';
import type { Logger } from '../core/logger.js';
import { ArgumentError } from '../errors/client-errors.js';
import type { TransferSource } from '../flows/wait.js';
import type { Bridge } from '../resources/bridge.js';
import type { Transfers } from '../resources/transfers.js';
import { MemoryTrackerStore } from './memory-store.js';
import { TRACKER_STORE_METHODS, type TrackerStore } from './store.js';

/**
 * What the tracker needs of a client: `client.bridge.transfers.get` and `.list`, and, to say what
 * the chain says of an overdue operation, `bridge.confirmOnChain`. A `PartnerClient` is one.
 */
export interface TrackerClient {
  bridge: { transfers: Pick<Transfers, 'get' | 'list'>; confirmOnChain?: Bridge['confirmOnChain'] };
}

/** The first delay before the next read of a transfer in each state that is not final (ms). */
export interface TrackerSchedule {
  pending: number;
  submitted: number;
  source_confirmed: number;
  refund_pending: number;
}

/** How long each phase may last before `overdue` fires (ms), counted from its first observation. */
export interface TrackerDeadlines {
  /** `pending` or `submitted`, until the deposit lands on the source chain. */
  sourceConfirmation: number;
  /** `source_confirmed`, until delivered (or a refund starts). */
  delivery: number;
  /** `refund_pending`, until refunded. */
  refund: number;
}

/** The sweep that adopts transfers nobody passed to `track`. */
export interface TrackerDiscovery {
  /** How often a tracker sweeps. @default DEFAULTS.tracker.discover.everyMs (600000) */
  everyMs?: number;
  /** Users with a record tracked or changed within this long are swept, back to transfers this old. @default DEFAULTS.tracker.discover.horizonMs (86400000) */
  horizonMs?: number;
  /** Transfers per list page, 1 to 100. @default DEFAULTS.tracker.discover.pageSize (100) */
  pageSize?: number;
}

/**
 * Options of `createTransferTracker`. Only `client` is required; every duration is in ms and any
 * positive one is accepted.
 *
 * @example
 * const tracker = createTransferTracker({
 *   client,
 *   store: createPostgresTrackerStore({ pool }), // a fleet shares one store
 *   router,                                       // deliveries count as reads
 *   maxReadsPerSecond: 20,
 * });
 */
export interface TransferTrackerOptions {
  /** Reads transfers: a `PartnerClient` (or anything with `bridge.transfers.get` and `.list`). */
  client: TrackerClient;
  /**
   * Where records, leases and observations are kept. Share one between processes (Redis,
   * Postgres) and the fleet follows every transfer once.
   * @default new MemoryTrackerStore()
   * @example
   * createTransferTracker({ client, store: new MemoryTrackerStore() });
   */
  store?: TrackerStore;
  /**
   * A callback router whose deliveries count as observations: each state it dispatches is recorded
   * (`store.observe`) and reaches the tracker's events once, like a read, and wakes a read of that
   * transfer (the delivery is the trigger, the read the truth).
   * The router's listeners see what they saw without it.
   * @example
   * createTransferTracker({ client, router: createCallbackRouter({ authenticate }) });
   */
  router?: TransferSource;
  /**
   * First delay before the next read in each state; each later delay in that state is
   * `DEFAULTS.tracker.growthFactor` (1.5) times the one before, up to `DEFAULTS.tracker.capFactor`
   * (12) times the first. A pending transfer whose quote expiry is known (recorded by `execute`) is
   * read once `DEFAULTS.tracker.afterExpiryMs` (5000) after it instead. A read that fails is tried
   * again after twice the delay, then four times, up to the cap: never given up.
   * @default DEFAULTS.tracker.schedule ({ pending: 30000, submitted: 5000, source_confirmed: 10000, refund_pending: 300000 })
   * @example
   * createTransferTracker({ client, schedule: { ...DEFAULTS.tracker.schedule, submitted: 2_000 } });
   */
  schedule?: Partial<TrackerSchedule>;
  /**
   * How long after its quote's expiry a pending transfer recorded by `execute` is read, to learn
   * that it expired unsigned (no callback says so).
   * @default DEFAULTS.tracker.afterExpiryMs (5000)
   * @example
   * createTransferTracker({ client, afterExpiryMs: 2_000 });
   */
  afterExpiryMs?: number;
  /**
   * Past a phase's deadline `overdue` fires once for that phase, and the transfer is read at its
   * state's cap from then on.
   * @default DEFAULTS.tracker.deadlines ({ sourceConfirmation: 600000, delivery: 600000, refund: 21600000 })
   * @example
   * createTransferTracker({ client, deadlines: { refund: 24 * 3_600_000 } });
   */
  deadlines?: Partial<TrackerDeadlines>;
  /**
   * How long one lease (one read and dispatch of one transfer) lasts: what a killed process holds
   * up at most, and the bound of `stop()`. A step dispatches only while it holds the lease: right
   * before each listener call it renews the lease through the store (fenced) for `leaseMs` more,
   * and calls nothing once another process took the transfer. Its read takes at most
   * `DEFAULTS.tracker.readShare` (half) of it, whatever the client's settings; with
   * `listenerTimeoutMs` they must fit in it.
   * @default DEFAULTS.tracker.leaseMs (30000)
   * @example
   * createTransferTracker({ client, leaseMs: 10_000 });
   */
  leaseMs?: number;
  /**
   * How long each awaited listener (`transition`, `final`, `overdue`) may take; past it, it counts
   * as failed: reported on `error`, and the state is dispatched again later. A read's share of
   * `leaseMs` plus this must fit in `leaseMs`, or `createTransferTracker` throws.
   * @default a third of `leaseMs` (`DEFAULTS.tracker.listenerShare`): 10000 for the default lease
   * @example
   * createTransferTracker({ client, leaseMs: 60_000, listenerTimeoutMs: 25_000 });
   */
  listenerTimeoutMs?: number;
  /**
   * Transfers claimed per round.
   * @default DEFAULTS.tracker.batchSize (50)
   * @example
   * createTransferTracker({ client, batchSize: 200 });
   */
  batchSize?: number;
  /**
   * Reads this tracker makes at most in any second, list pages included (per process: a fleet of
   * N makes up to N times as many). Below 1, one read per `1 / maxReadsPerSecond` seconds.
   * @default DEFAULTS.tracker.maxReadsPerSecond (10)
   * @example
   * createTransferTracker({ client, maxReadsPerSecond: 5 });
   */
  maxReadsPerSecond?: number;
  /**
   * The sweep for transfers nobody tracked, or `false` for none.
   * @default DEFAULTS.tracker.discover ({ everyMs: 600000, horizonMs: 86400000, pageSize: 100 })
   * @example
   * createTransferTracker({ client, discover: { everyMs: 60_000 } });
   * createTransferTracker({ client, discover: false });
   */
  discover?: TrackerDiscovery | false;
  /**
   * How often a started tracker looks for due work (it also wakes on `track` and on a delivery).
   * @default DEFAULTS.tracker.tickMs (1000)
   * @example
   * createTransferTracker({ client, tickMs: 250 });
   */
  tickMs?: number;
  /**
   * Final records are pruned from the store this long after their last change. Keep it above the
   * discovery horizon, or a pruned transfer is adopted again.
   * @default DEFAULTS.tracker.retentionMs (604800000, 7 days)
   * @example
   * createTransferTracker({ client, retentionMs: 30 * 86_400_000 });
   */
  retentionMs?: number;
  /**
   * Where a warning goes when a listener throws or rejects, or the store or a read fails (each is
   * also an `error` event). Without one, nothing is written.
   * @example
   * createTransferTracker({ client, logger: pino() });
   */
  logger?: Logger;
}

const count = z.int({ error: 'must be a whole number' }).positive('must be positive');

/** A `TrackerStore`; one that lacks methods (one written before `renew`, say) is told which. */
const storeSchema = z.custom<TrackerStore>().superRefine((value, ctx) => {
  const missing =
    typeof value === 'object' && value !== null
      ? TRACKER_STORE_METHODS.filter(
          (name) => typeof (value as unknown as Record<string, unknown>)[name] !== 'function',
        )
      : TRACKER_STORE_METHODS;
  if (missing.length === 0) return;
  const renew = missing.includes('renew')
    ? ' (renew keeps the lease before each dispatch, so that a step that outlived its lease dispatches nothing: see TrackerStore.renew)'
    : '';
  ctx.addIssue({
    code: 'custom',
    message: `must be a TrackerStore (${TRACKER_STORE_METHODS.join(', ')}): it has no ${missing.join(', ')}${renew}`,
  });
});
const partial = <K extends string>(keys: readonly K[]) =>
  z.strictObject(
    Object.fromEntries(keys.map((key) => [key, durationMs.optional()])) as Record<
      K,
      z.ZodOptional<typeof durationMs>
    >,
  );

// Built on the first createTransferTracker, not at import.
const trackerOptionsSchema = z.lazy(() =>
  z.strictObject({
    client: z.custom<TrackerClient>((value) => {
      const transfers = (value as TrackerClient | undefined)?.bridge?.transfers;
      return typeof transfers?.get === 'function' && typeof transfers?.list === 'function';
    }, 'is required: a PartnerClient (anything with bridge.transfers.get and .list)'),
    store: storeSchema.optional(),
    router: withMethods<TransferSource>(['on', 'off'], 'must have on and off (a CallbackRouter)').optional(),
    schedule: partial(['pending', 'submitted', 'source_confirmed', 'refund_pending'] as const).optional(),
    deadlines: partial(['sourceConfirmation', 'delivery', 'refund'] as const).optional(),
    afterExpiryMs: durationMs.optional(),
    leaseMs: durationMs.optional(),
    listenerTimeoutMs: durationMs.optional(),
    batchSize: count.max(1_000, 'must be at most 1000').optional(),
    maxReadsPerSecond: z
      .number({ error: 'must be a number' })
      .positive('must be positive')
      .refine(Number.isFinite, 'must be finite')
      .optional(),
    discover: z
      .union(
        [
          z.literal(false),
          z.strictObject({
            everyMs: durationMs.optional(),
            horizonMs: z
              .int({ error: 'must be a whole number of milliseconds' })
              .positive('must be positive')
              .optional(),
            pageSize: count.max(100, 'must be at most 100').optional(),
          }),
        ],
        { error: 'must be false or { everyMs, horizonMs, pageSize }' },
      )
      .optional(),
    tickMs: durationMs.optional(),
    retentionMs: z
      .int({ error: 'must be a whole number of milliseconds' })
      .positive('must be positive')
      .optional(),
    logger: loggerOption.optional(),
  }),
);

/** The options, checked, with every default filled in. */
export interface TrackerSettings {
  client: TrackerClient;
  store: TrackerStore;
  router: TransferSource | undefined;
  schedule: TrackerSchedule;
  deadlines: TrackerDeadlines;
  afterExpiryMs: number;
  leaseMs: number;
  listenerTimeoutMs: number;
  /** The per-call options of every read of a step: its share of the lease. */
  read: TrackerReadBudget;
  batchSize: number;
  maxReadsPerSecond: number;
  discover: Required<TrackerDiscovery> | false;
  tickMs: number;
  retentionMs: number;
  logger: Logger | undefined;
}

/** What one read of a step may take (`readShare` of the lease), as the per-call options of the read. */
export interface TrackerReadBudget {
  /** The whole read: its attempts, its retries and their waits. */
  budgetMs: number;
  /** One attempt. */
  timeoutMs: number;
  maxRetries: number;
  /** The retries after the first attempt failed: the budget less the first and the last attempt. */
  maxRetryTimeMs: number;
}

function readBudget(leaseMs: number): TrackerReadBudget {
  const { readShare, readRetries } = DEFAULTS.tracker;
  const budgetMs = Math.floor(leaseMs * readShare);
  const timeoutMs = Math.max(1, Math.floor(budgetMs / (readRetries + 1)));
  return {
    budgetMs,
    timeoutMs,
    maxRetries: readRetries,
    maxRetryTimeMs: Math.max(1, budgetMs - 2 * timeoutMs),
  };
}

/** A lease must hold a read and then a listener: else a step would outlive it by design. */
function checkLease(leaseMs: number, listenerTimeoutMs: number, read: TrackerReadBudget): void {
  if (read.budgetMs + listenerTimeoutMs <= leaseMs) return;
  throw new ArgumentError({
    where: 'createTransferTracker',
    issues: [
      {
        path: 'listenerTimeoutMs',
        message:
          `${listenerTimeoutMs} ms for a listener after a read of up to ${read.budgetMs} ms ` +
          `(DEFAULTS.tracker.readShare of leaseMs) does not fit in leaseMs (${leaseMs}): ` +
          `give leaseMs at least ${Math.ceil(listenerTimeoutMs / (1 - DEFAULTS.tracker.readShare))}, ` +
          `or listenerTimeoutMs at most ${leaseMs - read.budgetMs}`,
      },
    ],
  });
}

/** Checks the options of `createTransferTracker` (an `ArgumentError` names each bad one) and fills in `DEFAULTS.tracker`. */
export function trackerSettings(options: TransferTrackerOptions): TrackerSettings {
  const checked = parseArgs(trackerOptionsSchema, options, 'createTransferTracker');
  const defaults = DEFAULTS.tracker;
  const leaseMs = checked.leaseMs ?? defaults.leaseMs;
  const listenerTimeoutMs =
    checked.listenerTimeoutMs ?? Math.max(1, Math.floor(leaseMs * defaults.listenerShare));
  const read = readBudget(leaseMs);
  checkLease(leaseMs, listenerTimeoutMs, read);
  return {
    client: checked.client,
    store: checked.store ?? new MemoryTrackerStore(),
    router: checked.router,
    schedule: { ...defaults.schedule, ...defined(checked.schedule) },
    deadlines: { ...defaults.deadlines, ...defined(checked.deadlines) },
    afterExpiryMs: checked.afterExpiryMs ?? defaults.afterExpiryMs,
    leaseMs,
    listenerTimeoutMs,
    read,
    batchSize: checked.batchSize ?? defaults.batchSize,
    maxReadsPerSecond: checked.maxReadsPerSecond ?? defaults.maxReadsPerSecond,
    discover: checked.discover === false ? false : { ...defaults.discover, ...defined(checked.discover) },
    tickMs: checked.tickMs ?? defaults.tickMs,
    retentionMs: checked.retentionMs ?? defaults.retentionMs,
    logger: checked.logger,
  };
}

/** The fields given a value: `{ submitted: undefined }` keeps the default. */
function defined<T extends object>(value: T | undefined): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value ?? {}).filter(([, inner]) => inner !== undefined)) as never;
}
