/**
 * The Standard Schema interface (https://standardschema.dev, v1), copied as its authors ask
 * libraries to, so that the public types name no validation library: zod 4, valibot, arktype and
 * others implement it. ky types its own `schema` arguments the same way.
 */

import type { IssueList } from '../schemas/issues.js';

/** One problem a Standard Schema reports. */
export interface StandardSchemaV1Issue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** What a Standard Schema's `validate` returns. */
export type StandardSchemaV1Result<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardSchemaV1Issue[]; readonly value?: undefined };

/**
 * A schema any Standard Schema library makes (a zod 4 schema is one): it checks and types a value.
 *
 * @example
 * const Pool = z.object({ poolId: z.string() }); // a StandardSchemaV1<unknown, { poolId: string }>
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
      options?: { readonly libraryOptions?: Readonly<Record<string, unknown>> | undefined },
    ) => StandardSchemaV1Result<Output> | Promise<StandardSchemaV1Result<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** True for a value with the Standard Schema shape. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const standard = (value as { '~standard'?: unknown })['~standard'];
  return (
    typeof standard === 'object' &&
    standard !== null &&
    typeof (standard as { validate?: unknown }).validate === 'function'
  );
}

/** A parse result in the SDK's shape (zod's `safeParse`). */
export type ParseResult<T> = { success: true; data: T } | { success: false; error: IssueList };

function fromResult<T>(result: StandardSchemaV1Result<T>): ParseResult<T> {
  if (!result.issues) return { success: true, data: result.value as T };
  return {
    success: false,
    error: {
      issues: result.issues.map((issue) => ({
        message: issue.message,
        path: (issue.path ?? []).map((part) => (typeof part === 'object' ? part.key : part)),
      })),
    },
  };
}

/** Validates `value` with a Standard Schema; a promise only when the schema's check is async. */
export function standardParse<T>(
  schema: StandardSchemaV1<unknown, T>,
  value: unknown,
): ParseResult<T> | Promise<ParseResult<T>> {
  const result = schema['~standard'].validate(value);
  return result instanceof Promise ? result.then(fromResult) : fromResult(result);
}
