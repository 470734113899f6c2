import { z } from 'zod';
import { ArgumentError } from '../errors/client-errors.js';

/** Checks a method's arguments; every problem is named at once, before any request. */
export function parseArgs<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ArgumentError(
    where,
    result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
  );
}

export const nonEmptyString = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty');
