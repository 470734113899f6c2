import { type ParseArgsConfig, parseArgs } from 'node:util';
import { isPartnerError } from '../index.js';

/*
 * What every command shares: exit codes, argument parsing on node:util (no CLI framework, so the
 * package gains no dependency), how text reaches the terminal, and one way to report a failure
 * that never prints a secret.
 */

/** 0 ok; 1 a check failed or the service refused; 2 the command line was wrong. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A command line the command cannot run: printed with the usage, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Where a command writes (and reads `-` from); tests and `main` pass the process's streams. */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
  /** Standard input, for a file named `-`. */
  stdin?: AsyncIterable<string | Uint8Array>;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const CONTROLS_BUT_LINE_BREAKS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text as the terminal may show it: every C0 and C1 control character and DEL written as `\xNN`,
 * so that what the service or a file supplied cannot retitle the window, clear the screen, move
 * the cursor or rewrite a line already printed. `lineBreaks` keeps `\n` for text the CLI wrote
 * itself; a value from elsewhere has its line breaks escaped too, so it cannot forge a line.
 */
export function escapeControls(text: string, { lineBreaks = false } = {}): string {
  return text.replace(
    lineBreaks ? CONTROLS_BUT_LINE_BREAKS : CONTROLS,
    (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** A line of text output whose interpolated values are shown escaped (`escapeControls`). */
export function line(strings: TemplateStringsArray, ...values: unknown[]): string {
  return strings.reduce((text, part, i) => text + escapeControls(String(values[i - 1])) + part);
}

/** 32 hex digits or more in a row: in a message, enough of a key to matter. */
const HEX_RUN = /[0-9a-f]{32,}/gi;
/** More hex digits in a row than an address has (40): on the command line, what may be a key. */
const KEY_RUN = /[0-9a-f]{41,}/gi;
/** What stands for a hidden run of hex digits. */
const NOT_SHOWN = '[not shown: it may be a key]';

/**
 * Hides, in a message, every run of hex digits that is part of one on the command line: a private
 * key pasted where a variable's name, an option, a file or an id belongs. The CLI's messages and
 * the SDK's errors it relays name what they were given (an unknown option, a file that cannot be
 * read, an amount or a user id the SDK or the service refused), and none may put a key on the
 * terminal, whole or in part. Runs the command line does not hold (a userOpHash, a digest) stay.
 */
export function hideKeys(argv: readonly string[]): (text: string) => string {
  // An address (the wallet) is named in what `sign` and `verify` print: it is no key, and stays.
  const given = argv.flatMap((arg) => arg.match(KEY_RUN) ?? []).map((run) => run.toLowerCase());
  if (given.length === 0) return (text) => text;
  return (text) =>
    text.replace(HEX_RUN, (run) => (given.some((key) => key.includes(run.toLowerCase())) ? NOT_SHOWN : run));
}

/**
 * The text output boundary: what any command writes passes through `escapeControls` on its way
 * out, line breaks kept. JSON output is unchanged by it, as `toJson` leaves no control character.
 * What goes to stderr (errors, notes, what is being signed) has the command line's keys hidden
 * (`hideKeys`); stdout is the answer asked for, and an id given may be in it as the service holds it.
 */
export function terminalIo(io: Io, argv: readonly string[] = []): Io {
  const hide = hideKeys(argv);
  return {
    ...io,
    out: (text) => io.out(escapeControls(text, { lineBreaks: true })),
    err: (text) => io.err(hide(escapeControls(text, { lineBreaks: true }))),
  };
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

/** A 32-byte private key in hex, with or without its 0x. */
export const PRIVATE_KEY = /^(0x)?[0-9a-fA-F]{64}$/;
/** An environment variable's name, as POSIX shells take one. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The private key held by the environment variable that `--<flag>` names, 0x-prefixed. Neither the
 * key nor anything given where the name belongs is ever shown: a secret pasted into the wrong
 * place must not reach a log.
 */
export function keyFromEnv(flag: string, name: string, io: Io, whose: string): `0x${string}` {
  // `--key-env "$WALLET_KEY"` puts the key where its variable's name belongs: refused unseen.
  if (!VARIABLE_NAME.test(name) || PRIVATE_KEY.test(name))
    throw new UsageError(
      `--${flag} takes the name of the environment variable that holds the key (letters, digits and _, not starting with a digit), not the key: what was given is not shown`,
    );
  const key = io.env[name];
  if (!key) throw new UsageError(line`set ${name} to ${whose} private key`);
  if (!PRIVATE_KEY.test(key)) throw new UsageError(line`${name} does not hold a 32-byte hex private key`);
  return `0x${key.replace(/^0x/, '')}`;
}

/** Prints a command's usage for `--help`. */
export function help(io: Io, usage: string): number {
  io.out(usage);
  return EXIT.ok;
}

/** What a system error says to do, by its code. */
const CONNECTION_HINTS: Record<string, string> = {
  ECONNREFUSED: 'nothing listens there: is the service (or partner-s2s-sdk simulate) running on that port?',
  ENOTFOUND: 'the host name does not resolve: check PARTNER_BASE_URL',
  EAI_AGAIN: 'no DNS answer for the host name: check the network and PARTNER_BASE_URL',
};

/**
 * For a failure to reach the service: the system error code found in the error's cause chain
 * (a `ConnectionError` keeps what fetch threw), with the host and port of the base URL, and what
 * to do about it. The base URL's host and port only: never its user info, path or query.
 */
function connectionDetail(error: unknown, baseUrl: string | undefined): string[] {
  let code: string | undefined;
  let connection = false;
  let link: unknown = error;
  for (let depth = 0; depth < 8 && typeof link === 'object' && link !== null; depth++) {
    const { name, code: linkCode, cause } = link as { name?: unknown; code?: unknown; cause?: unknown };
    if (name === 'ConnectionError') connection = true;
    else if (connection && typeof linkCode === 'string' && /^E[A-Z0-9_]+$/.test(linkCode)) {
      code = linkCode;
      break;
    }
    link = cause;
  }
  if (!connection) return [];
  let where = '';
  try {
    const url = new URL(baseUrl ?? '');
    where = ` connecting to ${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    // No base URL to name: the code alone still says what went wrong.
  }
  if (code === undefined) return where ? [`  ${where.trim()}`] : [];
  const hint = CONNECTION_HINTS[code];
  return [`  ${code}${where}`, ...(hint ? [`  ${hint}`] : [])];
}

/**
 * Reports a failure and returns its exit code. The SDK's errors are written to carry no secret
 * (messages name the path and status, never a header or credential), so their message is shown,
 * escaped as one line; anything else is shown by name and message only, without a stack.
 */
export function report(io: Io, error: unknown, usage?: string): number {
  if (error instanceof UsageError) {
    io.err(line`error: ${error.message}`);
    if (usage) io.err(usage);
    return EXIT.usage;
  }
  if (isPartnerError(error)) {
    io.err(line`${error.name}: ${error.message}`);
    for (const detail of connectionDetail(error, io.env.PARTNER_BASE_URL)) io.err(detail);
    return EXIT.failed;
  }
  io.err(error instanceof Error ? line`${error.name}: ${error.message}` : line`${error}`);
  return EXIT.failed;
}

/**
 * JSON with bigints as decimal strings, as the admin API writes them. `JSON.stringify` escapes C0
 * controls but not DEL and C1 (U+0080–U+009F, where an 8-bit CSI is): those are escaped too, which
 * leaves the same JSON value and nothing a terminal acts on.
 */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(
    value,
    (_key, item) => (typeof item === 'bigint' ? item.toString() : item),
    indent,
  ).replace(/[\u007f-\u009f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
