/**
 * The SDK's version, written in at build time from package.json (tsup's `define`); tests run the
 * sources, where vitest's `define` does the same.
 */
declare const __SDK_VERSION__: string | undefined;

/**
 * The version of partner-s2s-sdk that is running (its User-Agent names it too).
 *
 * @example
 * import { VERSION } from 'partner-s2s-sdk';
 * log.info(`partner-s2s-sdk ${VERSION}`);
 */
export const VERSION: string = typeof __SDK_VERSION__ === 'string' ? __SDK_VERSION__ : '0.0.0-dev';

/** The runtime and its version, as `name/version`: Bun and Deno also set `process.versions.node`. */
function runtime(): string {
  const scope = globalThis as {
    Bun?: { version?: string };
    Deno?: { version?: { deno?: string } };
    process?: { versions?: { node?: string } };
  };
  try {
    if (scope.Bun?.version) return `bun/${scope.Bun.version}`;
    if (scope.Deno?.version?.deno) return `deno/${scope.Deno.version.deno}`;
    if (scope.process?.versions?.node) return `node/${scope.process.versions.node}`;
  } catch {}
  return 'unknown-runtime';
}

/** `partner-s2s-sdk/<version> <runtime>/<version>`, as the service's logs can tell SDK releases apart. */
export function userAgent(): string {
  return `partner-s2s-sdk/${VERSION} ${runtime()}`;
}
