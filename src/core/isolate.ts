import type { Redact } from '../errors/redact.js';

/** Told what a partner's function threw or rejected with; never throws itself. */
export type Report = (what: string, error: unknown) => void;

/** A report that drops everything (the failure stays isolated, only unreported). */
export const ignoreReport: Report = () => {};

/** Longest part of a warning given to what a partner's function threw: a log line, not a dump. */
const MAX_DESCRIBED = 300;

/** Marks a promise a partner's function returned as handled, so that it cannot end the process. */
export function quiet(result: unknown, onRejected: (error: unknown) => void = () => {}): void {
  try {
    const then = (result as { then?: unknown } | null | undefined)?.then;
    if (typeof then === 'function') then.call(result, undefined, onRejected);
  } catch {
    // A hostile thenable: whatever it does, it cannot reach the call.
  }
}

/**
 * Calls a partner's function (a listener, `onProgress`) so that nothing it throws, nor a promise it
 * returns that rejects, reaches the caller or goes unhandled: both are told to `report` instead.
 */
export function isolate<A extends unknown[]>(
  what: string,
  fn: (...args: A) => unknown,
  report: Report,
): (...args: A) => void {
  return (...args) => {
    try {
      quiet(fn(...args), (error) => report(what, error));
    } catch (error) {
      report(what, error);
    }
  };
}

/** `Name: message` of what was thrown, bounded; never throws, whatever it is. */
function describe(error: unknown): string {
  try {
    const text =
      error instanceof Error ? `${error.name}: ${error.message}` : `${typeof error}: ${String(error)}`;
    return text.length > MAX_DESCRIBED ? `${text.slice(0, MAX_DESCRIBED)}…` : text;
  } catch {
    return 'an unreadable value';
  }
}

/**
 * A report through `warn` (the client's logger when its level lets warnings through). A logger that
 * throws or rejects is ignored, and is never told of its own failure: a report cannot loop.
 */
export function warnReport(warn: ((line: string) => unknown) | undefined, redact: Redact): Report {
  if (!warn) return ignoreReport;
  let reporting = false;
  return (what, error) => {
    if (reporting) return;
    reporting = true;
    try {
      quiet(warn(redact(`partner-s2s-sdk: ${what} failed; ignored, the call goes on: ${describe(error)}`)));
    } catch {
      // The logger itself failed: there is nowhere left to say so.
    } finally {
      reporting = false;
    }
  };
}

type Listener = (...args: never[]) => unknown;

/**
 * The isolated stand-ins of a client's listeners, one per listener and event, so that `off` with
 * the partner's own function removes what `on` or `once` registered.
 */
export class IsolatedListeners {
  readonly #standIns = new WeakMap<Listener, Map<string, Listener>>();
  readonly #report: Report;

  constructor(report: Report) {
    this.#report = report;
  }

  /** What to register for `listener` on `event`. */
  wrap<L extends Listener>(event: string, listener: L): L {
    let byEvent = this.#standIns.get(listener);
    if (!byEvent) {
      byEvent = new Map();
      this.#standIns.set(listener, byEvent);
    }
    let standIn = byEvent.get(event);
    if (!standIn) {
      standIn = isolate(`a '${event}' listener`, listener, this.#report);
      byEvent.set(event, standIn);
    }
    return standIn as L;
  }

  /** What was registered for `listener` on `event` (the listener itself if nothing was). */
  find<L extends Listener>(event: string, listener: L): L {
    return (this.#standIns.get(listener)?.get(event) ?? listener) as L;
  }
}
