/**
 * A JSON number written into a body exactly as given. The wire takes amounts as JSON numbers, and
 * going through a binary float would change digits (`0.123456789012345678` is not a double).
 */
export class JsonNumber {
  constructor(readonly literal: string) {}
}

/** Serialises a flat request body; `JsonNumber` values are written digit for digit. */
export function stringifyBody(body: Record<string, unknown>): string {
  let out = '';
  for (const key in body) {
    const value = body[key];
    if (value === undefined) continue;
    out += `${out ? ',' : '{'}${JSON.stringify(key)}:${value instanceof JsonNumber ? value.literal : JSON.stringify(value)}`;
  }
  return out ? `${out}}` : '{}';
}
