import type { Parser } from '../http/types.js';
import { type BridgeTransfer, bridgeSchemas } from '../schemas/bridge.js';
import { compiled } from '../schemas/common.js';

/** One page of a transfer list, as the SDK reads it from wherever the answer put it. */
export interface TransferPage {
  items: BridgeTransfer[];
  nextCursor: string | null;
}

interface RawPage {
  items: unknown[];
  nextCursor: unknown;
  where: string;
}

/**
 * Finds the items and the cursor of a list answer. The specification fixes `nextCursor` but not
 * where it sits, so both `{ data: [...], nextCursor }` and `{ data: { items|transfers: [...],
 * nextCursor } }` (and a `meta`/`pagination` holder) are read.
 */
function locatePage(body: unknown): RawPage | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const root = body as Record<string, unknown>;
  const holders = [root, root.meta, root.pagination].filter(
    (holder): holder is Record<string, unknown> => typeof holder === 'object' && holder !== null,
  );
  const cursorIn = (...candidates: Record<string, unknown>[]) =>
    candidates.find((candidate) => 'nextCursor' in candidate)?.nextCursor;
  if (Array.isArray(root.data)) return { items: root.data, nextCursor: cursorIn(...holders), where: 'data' };
  if (typeof root.data === 'object' && root.data !== null) {
    const data = root.data as Record<string, unknown>;
    for (const key of ['items', 'transfers', 'data', 'results']) {
      const items = data[key];
      if (Array.isArray(items))
        return { items, nextCursor: cursorIn(data, ...holders), where: `data.${key}` };
    }
  }
  return undefined;
}

/** Reads a list answer into a page, each transfer through the transfer schema. */
export function transferPageSchema(strict: boolean): Parser<TransferPage> {
  const transfer = compiled(bridgeSchemas(strict).transfer);
  return {
    safeParse(body: unknown) {
      const page = locatePage(body);
      const issues: { path: PropertyKey[]; message: string }[] = [];
      if (!page) return fail([{ path: ['data'], message: 'expected an array of transfers' }]);
      const items: BridgeTransfer[] = [];
      page.items.forEach((item, index) => {
        const result = transfer.safeParse(item);
        if (result.success) items.push(result.data);
        else
          for (const issue of result.error.issues)
            issues.push({ path: [page.where, index, ...issue.path], message: issue.message });
      });
      let nextCursor: string | null = null;
      if (typeof page.nextCursor === 'string' && page.nextCursor !== '') nextCursor = page.nextCursor;
      else if (page.nextCursor !== null && (page.nextCursor !== undefined || strict)) {
        issues.push({ path: ['nextCursor'], message: 'expected a string or null' });
      }
      if (issues.length > 0) return fail(issues);
      return { success: true, data: { items, nextCursor } };
    },
  };
}

function fail(issues: { path: PropertyKey[]; message: string }[]) {
  return { success: false as const, error: { issues } };
}

/**
 * The list answer in JSON Schema, for the OpenAPI document: what `locatePage` reads, as far as the
 * specification shows it. The transfers are in `data`; where `nextCursor` sits is not shown, so it
 * is described where it may be (a string, or null on the last page) and the body stays open.
 */
export function transferPageJsonSchema(transfer: { $ref: string }) {
  const nextCursor = {
    type: ['string', 'null'],
    description: 'The cursor of the next page, null on the last page. Where it sits is not specified.',
  };
  return {
    type: 'object',
    required: ['data'],
    properties: {
      data: {
        description: "The user's transfers, newest first: an array, or an object that holds it.",
        anyOf: [
          { type: 'array', items: transfer },
          { type: 'object', properties: { nextCursor }, additionalProperties: {} },
        ],
      },
      nextCursor,
    },
    additionalProperties: {},
  };
}
