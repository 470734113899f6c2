// What `withOptions` may change of a client's checked options, and how the overrides go over them.
import { readArgs } from '../core/args.js';
import { ArgumentError } from '../errors/client-errors.js';
import type { ClientConfig, PartnerClientOptions, PartnerClientOverrides } from './options.js';

/** What identifies the credential, its token cache and connection pool: a new client's, never an override's. */
const FIXED_BY_CREDENTIAL = [
  'baseUrl',
  'clientId',
  'clientSecret',
  'scope',
  'clientAuth',
  'tokenStore',
  'fetch',
  'allowInsecureHttp',
  'dangerouslyAllowBrowser',
] as const;

/**
 * The options of a client made by `withOptions`: the checked ones with the overrides over them.
 * An override of what belongs to the credential is an `ArgumentError`.
 */
export function mergeOverrides(
  config: ClientConfig,
  overrides: PartnerClientOverrides,
): PartnerClientOptions {
  const where = 'PartnerClient.withOptions';
  // Read once: a getter cannot pass the check below and then answer differently.
  const given = readOnce(where, overrides);
  const fixed = Object.keys(given).filter((key) => (FIXED_BY_CREDENTIAL as readonly string[]).includes(key));
  if (fixed.length > 0) {
    throw new ArgumentError({
      where,
      issues: fixed.map((key) => ({
        path: key,
        message: 'belongs to the credential and its token cache: construct a new PartnerClient instead',
      })),
    });
  }
  const merged = { ...config, ...given } as PartnerClientOptions;
  if (given.defaultHeaders && config.defaultHeaders) {
    // A `null` (the header left out) is checked again like any value.
    merged.defaultHeaders = readOnce(where, {
      ...config.defaultHeaders,
      ...given.defaultHeaders,
    }) as Record<string, string>;
  }
  return merged;
}

/** A plain copy of a caller's options object, read once; a throwing proxy is an `ArgumentError`. */
function readOnce<T extends object>(where: string, value: T): T {
  if (typeof value !== 'object' || value === null) {
    throw new ArgumentError({ where, issues: [{ path: '', message: 'must be an object of options' }] });
  }
  return readArgs(where, () => ({ ...value }));
}
