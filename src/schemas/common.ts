import * as z from 'zod';

/** A decimal amount in a token's own units, exactly as on the wire, e.g. `"25.5"`. */
export type DecimalString = string;
/** A base-unit integer amount as a string, e.g. `"25500000"`. Convert with `BigInt()`. */
export type RawAmountString = string;
/** A `0x`-prefixed 20-byte address. */
export type Address = `0x${string}`;
/** A `0x`-prefixed hex string. */
export type Hex = `0x${string}`;

/** A `0x`-prefixed 20-byte address, any case. */
export const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;
/** A `0x`-prefixed 32-byte word, any case. */
export const HASH32_PATTERN = /^0x[0-9a-fA-F]{64}$/;

/**
 * A string that matches `pattern`, typed `T` (e.g. a `0x${string}` template type) by that very
 * test, so the schema's output type needs no cast. The pattern is its JSON Schema `pattern` too
 * (`z.toJSONSchema` cannot read it out of a refinement), as the OpenAPI document shows it.
 */
export function matching<T extends string>(base: z.ZodString, pattern: RegExp, message: string) {
  return base.refine((value): value is T => pattern.test(value), message).meta({ pattern: pattern.source });
}

function buildAtoms() {
  return {
    decimalString: z.string().regex(/^\d+(\.\d+)?$/, 'expected a non-negative decimal string'),
    rawAmountString: z.string().regex(/^\d+$/, 'expected a base-unit integer string'),
    address: matching<Address>(z.string(), ADDRESS_PATTERN, 'expected a 20-byte hex address'),
    hex: matching<Hex>(z.string(), /^0x[0-9a-fA-F]*$/, 'expected a 0x-prefixed hex string'),
    hash32: matching<Hex>(z.string(), HASH32_PATTERN, 'expected a 32-byte hex string'),
    timestamp: z.iso.datetime({ offset: true }),
    nonNegativeInt: z.int().nonnegative(),
  };
}
let built: ReturnType<typeof buildAtoms> | undefined;

/**
 * The leaf schemas of the wire format, built on first use: importing the SDK builds no schema,
 * and the schemas that use these are built on first use too.
 */
export function atoms(): ReturnType<typeof buildAtoms> {
  built ??= buildAtoms();
  return built;
}

const compiledSchemas = new WeakMap<z.ZodType, z.ZodType>();

/**
 * `schema` compiled by zod (`z.compile`), once per schema, on first use: one generated function
 * per parse instead of zod's walk from node to node, two to four times faster, with the same
 * results. A value the generated code refuses is parsed again by the schema itself, so the issues
 * are the schema's own; where code cannot be generated (no `new Function`), the schema is used as
 * it is. For the SDK's own schemas, each built once: a schema made per call would compile per call.
 */
export function compiled<S extends z.ZodType>(schema: S): S {
  let done = compiledSchemas.get(schema) as S | undefined;
  if (!done) compiledSchemas.set(schema, (done = z.compile(schema)));
  return done;
}

/**
 * An object schema: forward compatible (unknown fields kept) by default, closed under `strict`.
 * The strict variant is typed as the loose one so both modes share one inferred type.
 */
export function record<S extends z.ZodRawShape>(strict: boolean, shape: S): z.ZodObject<S, z.core.$loose> {
  return (strict ? z.strictObject(shape) : z.looseObject(shape)) as unknown as z.ZodObject<S, z.core.$loose>;
}

/** A string enum that, outside strict mode, lets values the SDK does not know yet through. */
export function openEnum<const T extends readonly [string, ...string[]]>(
  strict: boolean,
  values: T,
): z.ZodType<T[number] | (string & {})> {
  return strict ? z.enum(values) : z.string();
}
