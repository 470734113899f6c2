import type { Address } from '../schemas/common.js';
import {
  ENTRY_POINT_V07,
  ENTRY_POINT_V08,
  MAV2_7702_DELEGATE_V100,
  MAV2_7702_DELEGATE_V110,
} from './contracts.js';

/**
 * The path prefix of version 1 of the interface: the client appends it to `baseUrl`, and the
 * simulator serves the partner API under it.
 *
 * @example
 * import { API_PREFIX } from 'partner-s2s-sdk';
 * const url = `${baseUrl}${API_PREFIX}/bridge/routes`; // https://partner.example.com/api/v1/s2s/bridge/routes
 */
export const API_PREFIX = '/api/v1/s2s';

/** A value and everything in it, read-only. */
export type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** Freezes `value` and everything in it; its type says so, so the type is the value's own. */
function deepFreeze<T extends object>(value: T): DeepReadonly<T> {
  for (const inner of Object.values(value))
    if (typeof inner === 'object' && inner !== null) deepFreeze(inner);
  return Object.freeze(value) as DeepReadonly<T>;
}

/**
 * `defaults` with each field `given` a value put over it (`{ submitted: undefined }` keeps the
 * default): the one way an option set is filled from `DEFAULTS`.
 *
 * @example
 * const phases = withDefaults(DEFAULTS.wait.phaseTimeoutsMs, options.phaseTimeoutsMs);
 */
export function withDefaults<D extends object, G extends { [K in keyof D]?: unknown }>(
  defaults: D,
  given: G | undefined,
): { [K in keyof D]: K extends keyof G ? Exclude<G[K], undefined> | D[K] : D[K] } & Omit<G, keyof D> {
  const out: Record<string, unknown> = { ...(defaults as Record<string, unknown>) };
  for (const [key, value] of Object.entries(given ?? {})) if (value !== undefined) out[key] = value;
  return out as never;
}

/**
 * The defaults of `new PartnerClient(options)`, and under `wait` those of
 * `client.bridge.transfers.wait`, one place for the code and its docs. Frozen: read them, spread
 * them into options, never assign to them. Under `callbacks` those of `createCallbackRouter`,
 * under `redis` and `postgres` those of the `partner-s2s-sdk/redis` and `partner-s2s-sdk/postgres`
 * stores, under `verifier` those of `verifyBridgeBatch`, under `requote` and `signing` those of
 * `bridge.execute`, under `tracker` those of `createTransferTracker`, under `describe` those of
 * `describeBridgeBatch` and `describeQuoteChange`, under `confirm` those of `confirmUserOperation`.
 *
 * @example
 * import { DEFAULTS, PartnerClient } from 'partner-s2s-sdk';
 * // Twice the default attempt time, the default backoff otherwise.
 * const client = new PartnerClient({
 *   baseUrl, clientId, clientSecret,
 *   timeoutMs: DEFAULTS.timeoutMs * 2,
 *   retry: { ...DEFAULTS.retry, maxRetryTimeMs: 120_000 },
 * });
 * // Follow a refund for a day instead of six hours, the other phases as they are.
 * await client.bridge.transfers.wait({ userId, transferId }, {
 *   phaseTimeoutsMs: { ...DEFAULTS.wait.phaseTimeoutsMs, refund: 24 * 3_600_000 },
 * });
 * // Listeners that write to a slow ledger get three times the default.
 * createCallbackRouter({ authenticate, listenerTimeoutMs: DEFAULTS.callbacks.listenerTimeoutMs * 3 });
 * // Accept a partner's own EntryPoint beside the default ones.
 * verifyBridgeBatch(params, { entryPoints: [...DEFAULTS.verifier.entryPoints, ownEntryPoint] });
 */
export const DEFAULTS = deepFreeze({
  /** Time for one attempt: the wait for a token plus the request to the last byte of its answer. */
  timeoutMs: 30_000,
  /** Retries after a connection error, a timeout, 429 or any 5xx. */
  maxRetries: 2,
  /** Backoff and time bounds of retries (`RetryOptions`). */
  retry: {
    minDelayMs: 500,
    maxDelayMs: 8_000,
    maxRetryTimeMs: 60_000,
    maxRetryAfterMs: 60_000,
  },
  /** 16 MiB: far above any answer of the specification (a page of 100 transfers is about 150 KB). */
  maxResponseBytes: 16 * 1024 * 1024,
  /** The credential goes to the token endpoint in the form body. */
  clientAuth: 'body' as 'body' | 'basic',
  /** Plain `http://` only to a loopback host: elsewhere the secret and tokens would cross in clear text. */
  allowInsecureHttp: false,
  /** Unknown fields, states and scopes are kept and let through, so a newer service breaks nothing. */
  strict: false,
  /** A client refuses to be made where a page's scripts run: the page would hand out the secret. */
  dangerouslyAllowBrowser: false,
  /** The level when neither `logLevel` nor the `PARTNER_S2S_LOG` environment variable says one. */
  logLevel: 'off' as const,
  /** Spans when `@opentelemetry/api` is installed and a provider is registered; nothing loaded otherwise. */
  tracing: true,
  /** `transfers.wait`: the deadline of each phase (`WaitPhaseTimeouts`) when none is given. */
  wait: {
    phaseTimeoutsMs: {
      /**
       * `pending` or `submitted` until the deposit lands on the source chain: the intent lives a
       * few minutes at most (it expires unsigned) and the bundler's inclusion takes far less.
       */
      sourceConfirmation: 10 * 60_000,
      /** `source_confirmed` until `delivered`, which the specification says is usually seconds. */
      delivery: 10 * 60_000,
      /** `refund_pending` until `refunded`: "a later settlement taking hours"; six allow for a late one. */
      refund: 6 * 3_600_000,
    },
    /** First delay between reads of a wait without callbacks; it grows by half up to the next. */
    pollIntervalMs: 2_000,
    maxPollIntervalMs: 15_000,
    /** With a `router` that takes deliveries, callbacks wake the wait and reads are the fallback. */
    withRouter: {
      pollIntervalMs: 15_000,
      maxPollIntervalMs: 60_000,
    },
  },
  /** `createCallbackRouter` (`CallbackRouterOptions`) and `MemoryCallbackStore`. */
  callbacks: {
    /** The listeners of one delivery, the `authenticate` check and each store call. */
    listenerTimeoutMs: 10_000,
    /** Reading one request body. */
    bodyTimeoutMs: 10_000,
    /** 1 MiB: a bridge callback is a transfer of a few KB. */
    maxBodyBytes: 1024 * 1024,
    /** A claim holds this many `listenerTimeoutMs`: a live delivery keeps it, a dead process's expires. */
    claimTtlFactor: 3,
    /** Transfers the router's own (memory) store remembers; the least recently updated goes first. */
    storeCapacity: 50_000,
    /** At least once: a failed listener leaves the state unrecorded, to be delivered again. */
    acknowledgeListenerErrors: false,
    strict: false,
    /**
     * `standardWebhooks`: how far a delivery's signed `webhook-timestamp` may be from the
     * receiver's clock, either way (the Standard Webhooks reference's five minutes).
     */
    webhookToleranceSec: 300,
    /**
     * `standardWebhooks`: the `webhook-id`s it remembers while their timestamp is within the
     * tolerance; the oldest is forgotten first.
     */
    webhookIdCapacity: 50_000,
  },
  /** The stores of `partner-s2s-sdk/redis`. */
  redis: {
    /** Put before the keys of `createRedisTokenStore`. */
    tokenPrefix: 'partner-s2s:token:',
    /** Put before the keys of `createRedisCallbackStore`. */
    callbackPrefix: 'partner-s2s:callback:',
    /** How long `createRedisCallbackStore` keeps a transfer's state after its last change: 7 days. */
    callbackTtlSeconds: 7 * 86_400,
    /** Put before the keys of `createRedisTrackerStore`, which makes it their hash tag unless it has one. */
    trackerPrefix: 'partner-s2s:tracker:',
    /** How long an operation of `createRedisTrackerStore` waits for Redis before it fails: 5 s. */
    trackerTimeoutMs: 5_000,
  },
  /** The stores of `partner-s2s-sdk/postgres` and `migratePostgres`. */
  postgres: {
    /** The schema their tables are created in. */
    schema: 'partner_s2s',
    /** Each statement (a migration: its lock wait and its run) answers within this, or fails. */
    timeoutMs: 10_000,
  },
  /** `createTransferTracker` (`TransferTrackerOptions`). */
  tracker: {
    /** First delay (ms) before the next read of a transfer in each state; each later one grows by `growthFactor`. */
    schedule: {
      /** Only when the quote's expiry is unknown: else one read `afterExpiryMs` after it. */
      pending: 30_000,
      /** The bundler includes the operation in seconds. */
      submitted: 5_000,
      /** "Usually seconds" to delivery; a refund decision takes longer. */
      source_confirmed: 10_000,
      /** "A later settlement taking hours". */
      refund_pending: 5 * 60_000,
    },
    /** Each delay between reads of a transfer in one state is this many times the one before. */
    growthFactor: 1.5,
    /** The delay stops growing at this many times the state's first delay (its cap): 1 min after `submitted`. */
    capFactor: 12,
    /** A pending transfer whose quote expiry is known is read once, this long after it. */
    afterExpiryMs: 5_000,
    /**
     * With a `router`, every scheduled delay is this many times longer: callbacks are the trigger
     * (each delivery wakes a read at once) and the reads only bound what a lost delivery costs.
     */
    withRouterFactor: 4,
    /** How long each phase may last before `overdue` fires once for it: those of `transfers.wait`. */
    deadlines: {
      sourceConfirmation: 10 * 60_000,
      delivery: 10 * 60_000,
      refund: 6 * 3_600_000,
    },
    /** One lease covers one read and dispatch of one transfer; a killed process holds it this long at most. */
    leaseMs: 30_000,
    /**
     * Without `listenerTimeoutMs`, each awaited listener may take this share of `leaseMs` (10 s of
     * the default 30 s): a listener starts only under a lease just renewed, and ends within it.
     */
    listenerShare: 1 / 3,
    /**
     * A read of one transfer, its retries and their waits (`Retry-After` included) take at most
     * this share of `leaseMs` (15 s of the default 30 s), whatever the client's own settings: each
     * of its `readRetries + 1` attempts gets an equal part, and its retries the time left after
     * the first and the last.
     */
    readShare: 0.5,
    /** Retries of one read after its first attempt failed, within `readShare` of the lease. */
    readRetries: 2,
    /** Transfers claimed per round. */
    batchSize: 50,
    /** Reads per second one tracker makes at most, list pages included. */
    maxReadsPerSecond: 10,
    /** The sweep for transfers nobody tracked: every 10 minutes, over users seen within a day, 100 a page. */
    discover: { everyMs: 10 * 60_000, horizonMs: 24 * 3_600_000, pageSize: 100 },
    /** How often a started tracker looks for due work. */
    tickMs: 1_000,
    /** Final records are pruned this long after their last change: 7 days. */
    retentionMs: 7 * 86_400_000,
    /** `tracker.list`: records a page when no `limit` is given, and the largest `limit` taken. */
    list: { limit: 100, maxLimit: 1_000 },
  },
  /** `verifyBridgeBatch`: the options (`VerifyBridgeBatchOptions`) it applies when none is given. */
  verifier: {
    /** 15 s between the check and the quote's expiry: time to sign and submit. */
    expiryMarginMs: 15_000,
    /** ERC-4337 EntryPoint v0.7 and v0.8. */
    entryPoints: [ENTRY_POINT_V07, ENTRY_POINT_V08] as Address[],
    /** Both published Alchemy Modular Account v2 EIP-7702 delegates. */
    delegates: [MAV2_7702_DELEGATE_V100, MAV2_7702_DELEGATE_V110] as Address[],
    /** A sponsored batch: without a paymaster the wallet pays gas at whatever fee the operation names. */
    requirePaymaster: true,
    /** Across deposits carry an integrator tag the SpokePool ignores. */
    allowIntegratorSuffix: true,
  },
  /** `bridge.execute`'s `requote` (`RequoteOptions`): what a rebuild may change before a person is asked. */
  requote: {
    /** Rebuilds after the first construct: three batches at most. */
    maxAttempts: 2,
    /** 0.5 % less received than the baseline, at most, without asking. */
    maxOutputDropBps: 50,
    /** Provider plus gas fee 0.2 % of the amount above the baseline's, at most, without asking. */
    maxFeeIncreaseBps: 20,
    /** The time `accept` has to answer; it counts against the new quote's life too. */
    consentTimeoutMs: 60_000,
    /** The wait before rebuilding after a construct answered 503 without `Retry-After`. */
    backoffMs: 1_000,
  },
  /** `bridge.execute`'s `signing` (`SigningOptions`): the time a signer is given. */
  signing: {
    /** Kept free before the quote's expiry to submit: the signer's signal fires there. */
    submitMarginMs: 5_000,
    /** Without `budgetMs`, the budget is this percentile of the signer's past signing times… */
    learnedPercentile: 95,
    /** …once at least this many are known. */
    learnedMinSamples: 3,
  },
  /**
   * `confirmUserOperation` and `bridge.confirmOnChain`, and the chain read of an unclear submit
   * (with `chains`). Each read is bounded by `timeoutMs` and retried `maxRetries` times, like any
   * call of the SDK.
   */
  confirm: {
    /**
     * Blocks per `eth_getLogs` page, searched back from the latest block: RPC providers cap the range
     * of one request (commonly at 1,000 to 10,000 blocks), and the event is most likely recent.
     */
    pageBlocks: 1_000,
    /**
     * Without `fromBlock`, how far back the search goes: 10,000 blocks (about 5.5 hours on Base,
     * 33 on Ethereum), ten pages at most. A used nonce without an event there is `unknown`.
     */
    lookBackBlocks: 10_000,
    /**
     * The latest block read before each submit (the later search's `fromBlock`): one attempt this
     * long at most, so that a slow node delays no submit by more; when it fails the submit goes anyway.
     */
    blockReadTimeoutMs: 2_000,
  },
  /** `describeBridgeBatch` and `describeQuoteChange` (`DescribeOptions`). */
  describe: {
    /** Numbers, dates and times in US English unless told otherwise; never the machine's own locale. */
    locale: 'en-US',
    /** Times in UTC: the same text on every server. */
    timeZone: 'UTC',
    /** Every digit of every token in the SDK's table (18 decimals at most); more are cut safely. */
    maxFractionDigits: 18,
    /** Fees above 1 % of the amount are a `HIGH_FEE` warning. */
    highFeeBps: 100,
  },
});
