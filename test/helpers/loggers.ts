import type { Logger } from '../../src/index.js';

/** A logger that keeps the lines written at `warn` (each with what was passed beside it). */
export function warningsLogger(): { logger: Logger; warnings: unknown[][]; lines: () => string[] } {
  const warnings: unknown[][] = [];
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (...args: unknown[]) => void warnings.push(args),
    error: () => {},
  };
  return { logger, warnings, lines: () => warnings.map((args) => String(args[0])) };
}

/** A logger whose `warn` throws: logging must never change an outcome. */
export const throwingLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {
    throw new Error('logger down');
  },
  error: () => {},
};
