/**
 * The answer schemas are run compiled by zod (`z.compile`): a generated function first, zod's own
 * walk only for what it refuses. A call must read every answer exactly as the schema written in
 * src/schemas/ says, so each compiled schema is held to the plain one on valid answers and on
 * answers broken one field at a time: the same verdict, the same data, the same issues.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import { constructResult, quote, route, transfer } from '../../fixtures/wire.js';
import { meSchemas } from '../../src/schemas/auth.js';
import { bridgeSchemas } from '../../src/schemas/bridge.js';
import { compiled } from '../../src/schemas/common.js';

type Name = 'me' | 'routes' | 'quote' | 'feeEstimate' | 'construct' | 'send' | 'transferRead' | 'transfer';

/** Each schema as written, in one mode. */
const schemaOf = (name: Name, strict: boolean): z.ZodType =>
  name === 'me' ? meSchemas(strict) : bridgeSchemas(strict)[name];

/** A valid answer of each schema, as the service sends it. */
const VALID: Record<Name, () => unknown> = {
  me: () => ({ data: { scopes: ['bridge:read', 'transactions:write'] } }),
  routes: () => ({ data: [route(), route({ routeId: 'r2', limits: null })] }),
  quote: () => ({ data: quote() }),
  feeEstimate: () => ({ data: { finalAmount: '24.5', feePercent: 0.3, systemFeeUsd: '0.10' } }),
  construct: () => ({ data: constructResult() }),
  send: () => ({ data: { userOpHash: `0x${'cd'.repeat(32)}`, transferId: 'tr_1' } }),
  transferRead: () => ({ data: transfer() }),
  transfer: () => transfer(),
};

/** Every path to a value inside `value`, the root excluded. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [];
  const keys = Array.isArray(value) ? value.map((_, index) => index) : Object.keys(value);
  return keys.flatMap((key) => {
    const path = [...at, key];
    return [path, ...paths((value as Record<string | number, unknown>)[key], path)];
  });
}

type Change = { kind: 'set'; value: unknown } | { kind: 'delete' } | { kind: 'extra'; value: unknown };

/**
 * `body` with one change at `path`: a value replaced, a key taken out, or an unknown key added (to
 * the object at `path`, or to the answer itself when `path` is empty).
 */
function changed(body: unknown, path: (string | number)[], change: Change): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  if (path.length === 0) {
    // The answer itself: only an unknown key can be added to it.
    if (change.kind !== 'delete') copy.surprise = change.value;
    return copy;
  }
  let holder = copy;
  for (const key of path.slice(0, -1)) holder = holder[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (change.kind === 'set') holder[last] = change.value;
  else if (change.kind === 'delete') delete holder[last];
  else {
    const target = holder[last];
    if (typeof target === 'object' && target !== null && !Array.isArray(target))
      (target as Record<string, unknown>).surprise = change.value;
    else holder[last] = change.value;
  }
  return copy;
}

/** What a parse answers, in a form two parses can be compared by. */
function verdict(schema: z.ZodType, body: unknown) {
  const result = schema.safeParse(body);
  return result.success
    ? { success: true, data: result.data }
    : {
        success: false,
        issues: result.error.issues.map(({ code, path, message }) => ({ code, path, message })),
      };
}

const wrongValue = fc.oneof(
  fc.constantFrom(null, undefined, true, 0, -1, 1.5, '', '0x', '25.5', 'not a thing', [], {}),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.jsonValue(),
);
const change: fc.Arbitrary<Change> = fc.oneof(
  wrongValue.map((value) => ({ kind: 'set' as const, value })),
  fc.constant({ kind: 'delete' as const }),
  wrongValue.map((value) => ({ kind: 'extra' as const, value })),
);

describe('the answer schemas, compiled', () => {
  for (const strict of [false, true]) {
    for (const name of Object.keys(VALID) as Name[]) {
      const plain = schemaOf(name, strict);
      const fast = compiled(plain);

      it(`${name}${strict ? ', strict' : ''}: reads a valid answer as the schema does, into a fresh value`, () => {
        const body = VALID[name]();
        const read = verdict(fast, body);
        expect(read).toEqual(verdict(plain, body));
        expect(read.success).toBe(true);
        expect(read.data).not.toBe(body);
      });

      it(`${name}${strict ? ', strict' : ''}: gives the schema's verdict, data and issues on an answer changed in one place`, () => {
        const body = VALID[name]();
        const all = [[], ...paths(body)];
        fc.assert(
          fc.property(fc.nat({ max: all.length - 1 }), change, (index, how) => {
            const broken = changed(body, all[index]!, how);
            expect(verdict(fast, broken)).toEqual(verdict(plain, broken));
          }),
          { numRuns: 300 },
        );
      });
    }
  }

  it('compiles each schema once: the same schema gives the same compiled one', () => {
    const { routes } = bridgeSchemas(false);
    expect(compiled(routes)).toBe(compiled(routes));
    expect(compiled(routes)).not.toBe(routes);
  });
});
