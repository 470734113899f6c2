import * as z from 'zod';
import { byteCount, durationMs, loggerOption, logLevelOption, parseArgs, withMethods } from '../core/args.js';
import { DEFAULTS } from '../core/defaults.js';
import { type Logger, type LogLevel, logLevelFromEnv, logWriter } from '../core/logger.js';
import type { CallbackRequest } from './outcomes.js';
import type { CallbackStore } from './store.js';

/**
 * Options of `createCallbackRouter`. Only `authenticate` is required.
 *
 * @example
 * const router = createCallbackRouter({
 *   authenticate: (req) => req.headers.get('x-callback-token') === process.env.CALLBACK_TOKEN, // constant time in production
 *   store: createRedisCallbackStore({ client: redis }), // a fleet dispatches each state once
 *   listenerTimeoutMs: 5_000,
 * });
 */
export interface CallbackRouterOptions {
  /**
   * Remembers the last dispatched state per transfer, to drop duplicates and late states. Share
   * one between processes (`partner-s2s-sdk/redis`) and the fleet dispatches each state once.
   * @default a MemoryCallbackStore of DEFAULTS.callbacks.storeCapacity (50,000) transfers
   */
  store?: CallbackStore;
  /**
   * How long a delivery holds the store's claim on its transfer: past it, a process that died
   * mid-delivery no longer blocks the transfer. Keep it above `listenerTimeoutMs`.
   * @default listenerTimeoutMs * DEFAULTS.callbacks.claimTtlFactor (3)
   */
  claimTtlMs?: number;
  /**
   * Answer 2xx and record the state even when a listener threw (the behaviour before 0.2). By
   * default a throwing listener (of a callback kind, `transfer` or `unknown`) leaves the state
   * unrecorded and the delivery is answered 500, so the service delivers it again: at least once,
   * which needs listeners idempotent per `(transferId, status)`.
   * @default DEFAULTS.callbacks.acknowledgeListenerErrors (false)
   * @example
   * createCallbackRouter({ authenticate, acknowledgeListenerErrors: true }); // at most once
   */
  acknowledgeListenerErrors?: boolean;
  /**
   * Decides whether a delivery is genuine; required. The specification defines no delivery
   * authentication, so the SDK invents none: check a shared secret header (in constant time), an
   * HMAC of `body`, or mTLS details here. A rejected delivery never reaches a listener and is
   * answered 401; a check that does not settle within `listenerTimeoutMs` is answered 503.
   *
   * `'none'` accepts every delivery. Only for tests, or when something in front of the handler
   * already authenticated the request: anyone who can reach the endpoint can then forge callbacks.
   *
   * @example
   * const expected = Buffer.from(process.env.CALLBACK_TOKEN!);
   * authenticate: (req) => {
   *   const given = Buffer.from(req.headers.get('x-callback-token') ?? '');
   *   return given.length === expected.length && crypto.timingSafeEqual(given, expected);
   * }
   */
  authenticate: ((request: CallbackRequest) => boolean | Promise<boolean>) | 'none';
  /**
   * How long the listeners of one delivery, the `authenticate` check and each store call may take.
   * Past it the delivery is answered 503 and its state is not recorded (the service's redelivery
   * dispatches it again), the `error` event gets a `CallbackTimeoutError`, the transfer's later
   * deliveries go ahead, and whatever the late work does afterwards is ignored.
   *
   * @default DEFAULTS.callbacks.listenerTimeoutMs (10000)
   * @example
   * createCallbackRouter({ authenticate, listenerTimeoutMs: 30_000 }); // a slow ledger write
   */
  listenerTimeoutMs?: number;
  /**
   * How long reading one request body may take; a slower body is answered 408 and the connection
   * closed, whatever the server's own `requestTimeout` (even 0).
   *
   * @default DEFAULTS.callbacks.bodyTimeoutMs (10000)
   * @example
   * createCallbackRouter({ authenticate, bodyTimeoutMs: 5_000 });
   */
  bodyTimeoutMs?: number;
  /**
   * Largest body accepted, in bytes; larger deliveries are answered 413.
   * @default DEFAULTS.callbacks.maxBodyBytes (1048576, 1 MiB)
   * @example
   * createCallbackRouter({ authenticate, maxBodyBytes: 64 * 1024 });
   */
  maxBodyBytes?: number;
  /**
   * Reject bridge callbacks with fields or states the SDK does not know.
   * @default DEFAULTS.callbacks.strict (false)
   * @example
   * createCallbackRouter({ authenticate: 'none', strict: true }); // in tests
   */
  strict?: boolean;
  /**
   * Where the router writes a warning when something the partner handed it (a listener,
   * `authenticate`, the logger itself) throws or rejects: anything with `debug`, `info`, `warn`
   * and `error`. The warning names the listener's event (or `authenticate`) and passes on what it
   * threw; what the logger throws in turn is dropped.
   * @default console
   * @example
   * createCallbackRouter({ authenticate, logger: pino(), logLevel: 'warn' });
   */
  logger?: Logger;
  /**
   * How much the router logs: from `warn` on, a line for each listener or `authenticate` that
   * threw or rejected.
   * @default the `PARTNER_S2S_LOG` environment variable, else 'off'
   * @example
   * createCallbackRouter({ authenticate, logLevel: 'warn' }); // to console
   */
  logLevel?: LogLevel;
}

// Built on the first createCallbackRouter, not at import.
export const routerOptionsSchema = z.lazy(() =>
  z.looseObject({
    store: withMethods<CallbackStore>(
      ['claim', 'commit', 'release'],
      'must have claim, commit and release methods (get/set stores: see the CHANGELOG for 0.2)',
    ).optional(),
    claimTtlMs: durationMs.optional(),
    acknowledgeListenerErrors: z.boolean({ error: 'must be true or false' }).optional(),
    authenticate: z.custom<CallbackRouterOptions['authenticate']>(
      (value) => typeof value === 'function' || value === 'none',
      "is required: a function that checks each delivery, or 'none' to accept every delivery (anyone who can reach the endpoint can then forge callbacks)",
    ),
    maxBodyBytes: byteCount.optional(),
    strict: z.boolean({ error: 'must be true or false' }).optional(),
    listenerTimeoutMs: durationMs.optional(),
    bodyTimeoutMs: durationMs.optional(),
    logger: loggerOption.optional(),
    logLevel: logLevelOption.optional(),
  }),
);

/** A router's options, checked, with every default filled in. */
export interface RouterSettings {
  /** The partner's store; `undefined` for the router's own, in memory. */
  store: CallbackStore | undefined;
  authenticate: Exclude<CallbackRouterOptions['authenticate'], 'none'> | undefined;
  listenerTimeoutMs: number;
  bodyTimeoutMs: number;
  maxBodyBytes: number;
  claimTtlMs: number;
  acknowledgeListenerErrors: boolean;
  strict: boolean;
  /** Where the warnings about the partner's failing code go; `undefined` when the level is off. */
  warn: ((line: string, ...rest: unknown[]) => void) | undefined;
}

/**
 * Checks the options of `createCallbackRouter` (an `ArgumentError` names each bad one) and fills
 * in `DEFAULTS.callbacks` for those left out.
 *
 * @example
 * const settings = routerSettings({ authenticate: 'none' }); // settings.listenerTimeoutMs === 10_000
 */
export function routerSettings(options: CallbackRouterOptions): RouterSettings {
  const checked = parseArgs(routerOptionsSchema, options ?? {}, 'createCallbackRouter');
  const defaults = DEFAULTS.callbacks;
  const listenerTimeoutMs = checked.listenerTimeoutMs ?? defaults.listenerTimeoutMs;
  const level = checked.logLevel ?? logLevelFromEnv() ?? 'off';
  return {
    store: checked.store,
    authenticate: checked.authenticate === 'none' ? undefined : checked.authenticate,
    listenerTimeoutMs,
    bodyTimeoutMs: checked.bodyTimeoutMs ?? defaults.bodyTimeoutMs,
    maxBodyBytes: checked.maxBodyBytes ?? defaults.maxBodyBytes,
    claimTtlMs: checked.claimTtlMs ?? listenerTimeoutMs * defaults.claimTtlFactor,
    acknowledgeListenerErrors: checked.acknowledgeListenerErrors ?? defaults.acknowledgeListenerErrors,
    strict: checked.strict ?? defaults.strict,
    warn: logWriter(checked.logger ?? console, level, 'warn'),
  };
}
