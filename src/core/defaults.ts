import type { Address } from '../schemas/common.js';
import {
  ENTRY_POINT_V07,
  ENTRY_POINT_V08,
  MAV2_7702_DELEGATE_V100,
  MAV2_7702_DELEGATE_V110,
} from './contracts.js';

/**
 * The defaults of `new PartnerClient(options)`, under `wait` those of
 * `client.bridge.transfers.wait` and under `verifier` those of `verifyBridgeBatch`, one place for
 * the code and its docs. Frozen: read them, spread
 * them into options, never assign to them.
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
 * // Accept a partner's own EntryPoint beside the default ones.
 * verifyBridgeBatch(params, { entryPoints: [...DEFAULTS.verifier.entryPoints, ownEntryPoint] });
 */
export const DEFAULTS: {
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly retry: {
    readonly minDelayMs: number;
    readonly maxDelayMs: number;
    readonly maxRetryTimeMs: number;
    readonly maxRetryAfterMs: number;
  };
  readonly maxResponseBytes: number;
  readonly clientAuth: 'body' | 'basic';
  readonly allowInsecureHttp: boolean;
  readonly strict: boolean;
  readonly wait: {
    readonly phaseTimeoutsMs: {
      readonly sourceConfirmation: number;
      readonly delivery: number;
      readonly refund: number;
    };
  };
  readonly verifier: {
    readonly expiryMarginMs: number;
    readonly entryPoints: readonly Address[];
    readonly delegates: readonly Address[];
    readonly requirePaymaster: boolean;
    readonly allowIntegratorSuffix: boolean;
  };
} = Object.freeze({
  /** Time for one attempt: the wait for a token plus the request to the last byte of its answer. */
  timeoutMs: 30_000,
  /** Retries after a connection error, a timeout, 429 or any 5xx. */
  maxRetries: 2,
  /** Backoff and time bounds of retries (`RetryOptions`). */
  retry: Object.freeze({
    minDelayMs: 500,
    maxDelayMs: 8_000,
    maxRetryTimeMs: 60_000,
    maxRetryAfterMs: 60_000,
  }),
  /** 16 MiB: far above any answer of the specification (a page of 100 transfers is about 150 KB). */
  maxResponseBytes: 16 * 1024 * 1024,
  /** The credential goes to the token endpoint in the form body. */
  clientAuth: 'body',
  allowInsecureHttp: false,
  strict: false,
  /** `transfers.wait`: the deadline of each phase (`WaitPhaseTimeouts`) when none is given. */
  wait: Object.freeze({
    phaseTimeoutsMs: Object.freeze({
      /**
       * `pending` or `submitted` until the deposit lands on the source chain: the intent lives a
       * few minutes at most (it expires unsigned) and the bundler's inclusion takes far less.
       */
      sourceConfirmation: 10 * 60_000,
      /** `source_confirmed` until `delivered`, which the specification says is usually seconds. */
      delivery: 10 * 60_000,
      /** `refund_pending` until `refunded`: "a later settlement taking hours"; six allow for a late one. */
      refund: 6 * 3_600_000,
    }),
  }),
  /** `verifyBridgeBatch`: the options (`VerifyBridgeBatchOptions`) it applies when none is given. */
  verifier: Object.freeze({
    /** 15 s between the check and the quote's expiry: time to sign and submit. */
    expiryMarginMs: 15_000,
    /** ERC-4337 EntryPoint v0.7 and v0.8. */
    entryPoints: Object.freeze([ENTRY_POINT_V07, ENTRY_POINT_V08]),
    /** Both published Alchemy Modular Account v2 EIP-7702 delegates. */
    delegates: Object.freeze([MAV2_7702_DELEGATE_V100, MAV2_7702_DELEGATE_V110]),
    /** A sponsored batch: without a paymaster the wallet pays gas at whatever fee the operation names. */
    requirePaymaster: true,
    /** Across deposits carry an integrator tag the SpokePool ignores. */
    allowIntegratorSuffix: true,
  }),
});
