import * as z from 'zod';

/*
 * Error answers are read leniently: an error must always become an error, so a field that does
 * not fit reads as absent (and the error is typed by status) instead of failing the read.
 *
 * Each schema is `z.lazy`: built on its first parse, so importing the SDK, or a call that never
 * meets an error, builds none of them.
 */

/** A field read as undefined when absent or not of its type. */
const lenient = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

/** The fields of the error envelope; the extra fields a `code` adds live beside them. */
export const ENVELOPE_FIELDS = ['statusCode', 'error', 'code', 'message'] as const;

/** The envelope every endpoint but the token endpoint answers an error with. */
export const errorEnvelopeSchema = z.lazy(() =>
  z.looseObject({
    /** The HTTP status. */
    statusCode: lenient(z.number()),
    /** The HTTP status text. */
    error: lenient(z.string()),
    /** Stable upper-snake-case identifier: clients branch on it, not on `message`. */
    code: lenient(z.string()),
    /** Always a string; wording may change. */
    message: lenient(z.string()),
  }),
);

/** The extra field of `VALIDATION_FAILED`: one failure per entry (entries that are not strings are dropped). */
export const validationFailedSchema = z.lazy(() =>
  z.looseObject({
    errors: z.array(z.unknown()).transform((entries) => entries.filter((entry) => typeof entry === 'string')),
  }),
);

const baseUnits = () =>
  z
    .string()
    .regex(/^-?\d+$/)
    .transform((value) => BigInt(value));

/** The extra fields of `INSUFFICIENT_BALANCE`: the token that is short, and its figures in base units. */
export const insufficientBalanceSchema = z.lazy(() =>
  z.object({
    token: z.object({
      address: z.string(),
      symbol: z.string(),
      decimals: z.number().refine(Number.isInteger),
    }),
    required: baseUnits(),
    available: baseUnits(),
    shortfall: baseUnits(),
  }),
);

/** The token endpoint's error body (OAuth 2.0, RFC 6749 5.2). */
export const oauthErrorBodySchema = z.lazy(() =>
  z.looseObject({
    error: z.string(),
    error_description: lenient(z.string()),
  }),
);

/**
 * The error bodies as the specification states them, which the OpenAPI document shows: the readers
 * above take the same fields leniently, since an error must always become an error. Each is open:
 * the complete list of codes, and the fields a code may add, are not shown.
 */
export function errorBodySchemas() {
  const envelope = z.looseObject({
    statusCode: z.int(),
    error: z.string(),
    code: z.string(),
    message: z.string(),
  } satisfies Record<(typeof ENVELOPE_FIELDS)[number], z.ZodType>);
  const units = z.string().regex(/^\d+$/, 'expected a base-unit integer string');
  return {
    envelope,
    validationFailed: envelope.extend({ code: z.literal('VALIDATION_FAILED'), errors: z.array(z.string()) }),
    insufficientBalance: envelope.extend({
      code: z.literal('INSUFFICIENT_BALANCE'),
      token: z.looseObject({ address: z.string(), symbol: z.string(), decimals: z.int().nonnegative() }),
      required: units,
      available: units,
      shortfall: units,
    }),
    oauth: z.looseObject({ error: z.string(), error_description: z.string() }),
  };
}
