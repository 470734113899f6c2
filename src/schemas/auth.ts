import * as z from 'zod';
import { openEnum, record } from './common.js';

/** Every scope the specification names. New ones may appear; they arrive as plain strings. */
export const KNOWN_SCOPES = [
  'pools:read',
  'stocks:read',
  'bridge:read',
  'users:read',
  'users:write',
  'portfolio:read',
  'transactions:read',
  'transactions:write',
  'rates:read',
  'all:read',
  'all:write',
] as const;
/** A scope the specification names. */
export type KnownScope = (typeof KNOWN_SCOPES)[number];
/** A permission. Tokens and `me()` list individual permissions only, never wildcards. */
export type Scope = KnownScope | (string & {});

/** What `me()` answers: the token's permissions, and whatever else the service adds. */
export interface Me {
  scopes: Scope[];
  [field: string]: unknown;
}

/** What an access token may be: printable ASCII, no spaces (it goes into a header as it is). */
export const ACCESS_TOKEN_PATTERN = /^[\x21-\x7e]+$/;

/**
 * The longest access token the SDK sends as a header. Large JWTs stay within a few KB; a longer
 * token is a broken or hostile answer, and sent as a header it would be refused by most servers
 * (Node's default header limit is 16 KiB) after crossing the network on every call.
 */
export const MAX_ACCESS_TOKEN_LENGTH = 8192;

/** Built on the first token answer, not when the SDK is imported. */
export const tokenResponseSchema = z.lazy(() =>
  z.looseObject({
    access_token: z
      .string()
      .min(1)
      .max(MAX_ACCESS_TOKEN_LENGTH, `must be at most ${MAX_ACCESS_TOKEN_LENGTH} characters`)
      .regex(ACCESS_TOKEN_PATTERN, 'must be printable ASCII without spaces'),
    token_type: z.string().refine((value) => value.toLowerCase() === 'bearer', 'must be Bearer'),
    expires_in: z.number().positive().finite().optional(),
    scope: z.string().optional(),
  }),
);

/**
 * The token endpoint's parameters, JSON or form-encoded, as the specification lists them (the
 * OpenAPI document shows them): `client_id` and `client_secret` unless HTTP Basic carries them.
 */
export const tokenRequestSchema = z.lazy(() =>
  z.strictObject({
    grant_type: z.literal('client_credentials'),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    /** Space-delimited scopes, wildcards allowed; omitted, everything the credential holds. */
    scope: z.string().optional(),
  }),
);

function buildMe(strict: boolean) {
  return record(strict, {
    data: record(strict, { scopes: z.array(openEnum(strict, KNOWN_SCOPES)) }),
  });
}
const meCache = new Map<boolean, ReturnType<typeof buildMe>>();

/**
 * The `me` answer's schema for one mode, built once on first use: the one the endpoint reads with,
 * so the OpenAPI document can name its parts.
 */
export function meSchemas(strict: boolean): ReturnType<typeof buildMe> {
  let schema = meCache.get(strict);
  if (!schema) meCache.set(strict, (schema = buildMe(strict)));
  return schema;
}
