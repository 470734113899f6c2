import { validation } from './envelope.js';

/* Request bodies as the service reads them: a JSON object, with amounts read digit for digit. */

/** Reads a JSON number from the raw body, digit for digit: JSON.parse would round it. */
export function rawNumber(body: string, key: string): string | undefined {
  const match = new RegExp(`"${key}"\\s*:\\s*(-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)`).exec(body);
  return match?.[1];
}

/** A request body as an object, or the VALIDATION_FAILED the service answers to anything else. */
export function jsonObject(body: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw validation(['the body must be JSON']);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw validation(['the body must be an object']);
  return parsed as Record<string, unknown>;
}

/** The string fields (and positive `amount`, read exactly) a body must hold, every miss listed. */
export function requiredFields(
  body: string,
  required: string[],
): { userId: string; routeId: string; amountLiteral: string; parsed: Record<string, unknown> } {
  const parsed = jsonObject(body);
  const errors: string[] = [];
  for (const field of required) {
    if (field === 'amount') {
      if (typeof parsed.amount !== 'number' || !(parsed.amount > 0))
        errors.push('amount must be a positive number');
    } else if (typeof parsed[field] !== 'string' || parsed[field] === '')
      errors.push(`${field} must be a non-empty string`);
  }
  if (errors.length > 0) throw validation(errors);
  return {
    userId: parsed.userId as string,
    routeId: parsed.routeId as string,
    amountLiteral: required.includes('amount') ? (rawNumber(body, 'amount') ?? String(parsed.amount)) : '',
    parsed,
  };
}
