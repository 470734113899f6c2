import { type ParseArgsConfig, parseArgs } from 'node:util';
import { isPartnerError } from '../index.js';

/*
 * What every command shares: exit codes, argument parsing on node:util (no CLI framework, so the
 * package gains no dependency), and one way to report a failure that never prints a secret.
 */

/** 0 ok; 1 a check failed or the service refused; 2 the command line was wrong. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A command line the command cannot run: printed with the usage, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Where a command writes; tests and `main` pass the process's streams. */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

/** `node:util` parseArgs, its errors as a `UsageError`. */
export function parseCommandLine<T extends ParseArgsConfig['options']>(
  args: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({
      args,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** A whole number in [min, max] from a flag, or a `UsageError` naming the flag. */
export function integerFlag(
  name: string,
  value: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return Number(value);
}

/**
 * Reports a failure and returns its exit code. The SDK's errors are written to carry no secret
 * (messages name the path and status, never a header or credential), so their message is shown;
 * anything else is shown by name and message only, without a stack.
 */
export function report(io: Io, error: unknown, usage?: string): number {
  if (error instanceof UsageError) {
    io.err(`error: ${error.message}`);
    if (usage) io.err(usage);
    return EXIT.usage;
  }
  if (isPartnerError(error)) {
    io.err(`${error.name}: ${error.message}`);
    return EXIT.failed;
  }
  io.err(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  return EXIT.failed;
}

/** JSON with bigints as decimal strings, as the admin API writes them. */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? item.toString() : item), indent);
}
