import type { Redact } from '../errors/redact.js';
import type { ClientEvents } from './events.js';
import { type PartnerListeners, quiet, type Report, warnReport } from './isolate.js';

/** Anything with console's four methods: `console`, pino, winston, a test double. */
export interface Logger {
  debug(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}

/** How much the client logs; each level includes those before it. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

export const LOG_LEVELS: readonly LogLevel[] = ['off', 'error', 'warn', 'info', 'debug'];

/** The environment variable read when the `logLevel` option is not given. */
export const LOG_LEVEL_ENV = 'PARTNER_S2S_LOG';

function rank(level: LogLevel): number {
  return LOG_LEVELS.indexOf(level);
}

/**
 * The level from `PARTNER_S2S_LOG`, when it names one. Read through `globalThis.process` so that a
 * runtime without it (or without access to the environment, Deno without `--allow-env`) logs nothing.
 */
export function logLevelFromEnv(): LogLevel | undefined {
  let raw: unknown;
  try {
    raw = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[
      LOG_LEVEL_ENV
    ];
  } catch {
    return undefined;
  }
  if (typeof raw !== 'string') return undefined;
  const value = raw.trim().toLowerCase();
  // A value that names no level is ignored, as an unset variable is: logging stays off.
  return (LOG_LEVELS as readonly string[]).includes(value) ? (value as LogLevel) : undefined;
}

export const PREFIX = 'partner-s2s-sdk:';

type LogMethod = Exclude<LogLevel, 'off'>;

/**
 * Writes one line. What the logger throws, or rejects when it is async, is dropped: a logger is
 * the last place to report anything, and logging never changes an outcome.
 */
function writeLine(logger: Logger, method: LogMethod, line: string, ...rest: unknown[]): void {
  try {
    // An async logger's rejection is handled too: it must not end the process.
    quiet(logger[method](line, ...rest));
  } catch {}
}

/**
 * The writer of one level's lines, or `undefined` when `level` holds that level back.
 *
 * @example
 * const warn = logWriter(logger, 'warn', 'warn');
 * warn?.(`${PREFIX} something a partner should fix`, error);
 */
export function logWriter(
  logger: Logger,
  level: LogLevel,
  method: LogMethod,
): ((line: string, ...rest: unknown[]) => void) | undefined {
  if (level === 'off' || rank(level) < rank(method)) return undefined;
  return (line, ...rest) => writeLine(logger, method, line, ...rest);
}

/**
 * Where what a partner's function threw or rejected with is reported: `logger.warn`, when `level`
 * lets warnings through. Lines pass through `redact`, as every error does.
 */
export function listenerReport(logger: Logger, level: LogLevel, redact: Redact): Report {
  return warnReport(logWriter(logger, level, 'warn'), redact);
}

/**
 * Logs the client's own events, so that a log line carries exactly what an event does: method,
 * path template, status, time, attempt and request id, never a header, body, token or secret. A
 * logger that throws or rejects is ignored: logging never fails a call.
 */
export function attachLogger(events: PartnerListeners<ClientEvents>, logger: Logger, level: LogLevel): void {
  const at = rank(level);
  if (at === 0) return;
  const write = (method: LogMethod, line: string) => writeLine(logger, method, line);
  if (at >= rank('debug')) {
    events.on('response', (e) => {
      const outcome = e.status === undefined ? (e.error ?? 'no answer') : String(e.status);
      write(
        'debug',
        `${PREFIX} ${e.method} ${e.path} ${outcome} ${e.elapsedMs}ms attempt ${e.attempt}` +
          (e.requestId === undefined ? '' : ` request-id ${e.requestId}`) +
          (e.status !== undefined && e.error ? ` (${e.error})` : ''),
      );
    });
  }
  if (at >= rank('info')) {
    events.on('retry', (e) => {
      write(
        'info',
        `${PREFIX} retrying ${e.method} ${e.path} in ${e.delayMs}ms after attempt ${e.attempt} (${e.reason}${
          e.status === undefined ? '' : `, status ${e.status}`
        })`,
      );
    });
  }
  events.on('token', (e) => {
    if (e.action !== 'failed') {
      if (at >= rank('debug'))
        write('debug', `${PREFIX} token ${e.action} in ${e.elapsedMs}ms, expires in ${e.expiresInSec}s`);
      return;
    }
    // A stopped or refused credential fails every call until it is fixed: that is an error.
    if (e.retryAfterMs !== undefined) {
      if (at >= rank('error'))
        write(
          'error',
          `${PREFIX} token request refused (${e.error}); calls fail at once for ${e.retryAfterMs}ms`,
        );
    } else if (at >= rank('warn')) {
      write('warn', `${PREFIX} token request failed (${e.error}) after ${e.elapsedMs}ms`);
    }
  });
}
