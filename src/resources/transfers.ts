import { parseArgs, parseOptions, requestOptionsSchema } from '../core/args.js';
import { Page, PagePromise } from '../core/pagination.js';
import type { RequestOptions } from '../core/request-options.js';
import { ResponseValidationError } from '../errors/client-errors.js';
import { pollTransfer, type WaitOptions, type WaitParams } from '../flows/wait.js';
import type { Parser, Transport } from '../http/transport.js';
import { type BridgeTransfer, bridgeSchemas } from '../schemas/bridge.js';
import {
  getArgs,
  listArgs,
  type TransferGetParams,
  type TransferListParams,
  waitArgs,
  waitOptionsSchema,
} from './params.js';

const BRIDGE_READ = ['bridge:read'] as const;
const LIST_PATH = '/bridge/transfers';

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

/**
 * A user's bridge transfers. Reached as `client.bridge.transfers`.
 *
 * @example
 * const transfer = await client.bridge.transfers.get({ userId, transferId });
 */
export class Transfers {
  readonly #transport: Transport;
  readonly #strict: boolean;

  constructor(transport: Transport, strict: boolean) {
    this.#transport = transport;
    this.#strict = strict;
  }

  /**
   * A user's transfers, newest first. `await` it for one page, or `for await` it for every
   * transfer of every page.
   *
   * @example
   * const page = await client.bridge.transfers.list({ userId, limit: 50 });
   * if (page.hasNextPage()) await page.getNextPage();
   * for await (const t of client.bridge.transfers.list({ userId, status: 'delivered' })) console.log(t.transferId);
   */
  list(params: TransferListParams, options?: RequestOptions): PagePromise<BridgeTransfer> {
    return new PagePromise(async () => {
      const args = parseArgs(listArgs, params, 'bridge.transfers.list');
      options = parseOptions(requestOptionsSchema, options, 'bridge.transfers.list');
      const seen = new Set<string>();
      const fetchPage = async (cursor: string | undefined): Promise<Page<BridgeTransfer>> => {
        const query = new URLSearchParams({ userId: args.userId });
        if (args.status) query.set('status', args.status);
        if (args.limit !== undefined) query.set('limit', String(args.limit));
        if (cursor !== undefined) query.set('cursor', cursor);
        const { items, nextCursor } = await this.#transport.request(
          {
            method: 'GET',
            path: LIST_PATH,
            searchParams: query,
            scopes: BRIDGE_READ,
            schema: this.#pageSchema(),
          },
          options,
        );
        // A cursor seen before would make `for await` loop forever.
        if (nextCursor !== null && seen.has(nextCursor)) {
          throw new ResponseValidationError('GET', LIST_PATH, 200, [
            { path: 'nextCursor', message: 'the service returned a cursor it had already returned' },
          ]);
        }
        if (nextCursor !== null) seen.add(nextCursor);
        return new Page(items, nextCursor, fetchPage);
      };
      return fetchPage(args.cursor);
    });
  }

  /**
   * One transfer of a user.
   *
   * @example
   * const transfer = await client.bridge.transfers.get({ userId, transferId });
   */
  async get(params: TransferGetParams, options?: RequestOptions): Promise<BridgeTransfer> {
    options = parseOptions(requestOptionsSchema, options, 'bridge.transfers.get');
    const args = parseArgs(getArgs, params, 'bridge.transfers.get');
    const { data } = await this.#transport.request(
      {
        method: 'GET',
        path: `${LIST_PATH}/${encodeURIComponent(args.transferId)}`,
        label: `${LIST_PATH}/{transferId}`,
        searchParams: new URLSearchParams({ userId: args.userId }),
        scopes: BRIDGE_READ,
        schema: bridgeSchemas(this.#strict).transferRead,
      },
      options,
    );
    return data;
  }

  /**
   * Waits until a transfer reaches a final state (`delivered`, `refunded`, `failed`, `expired`), or
   * the state named by `until` (or one after it), reading it with growing intervals.
   *
   * @example
   * const done = await client.bridge.transfers.wait({ userId, transferId }, { timeoutMs: 300_000 });
   * const viaCallbacks = await client.bridge.transfers.wait({ userId, transferId }, { router });
   * if (done.status !== 'delivered') console.warn(done.status, done.failureReason);
   */
  async wait(params: WaitParams, options?: WaitOptions): Promise<BridgeTransfer> {
    const args = parseArgs(waitArgs, params, 'bridge.transfers.wait');
    options = parseOptions(waitOptionsSchema, options, 'bridge.transfers.wait');
    return pollTransfer(
      (readOptions) => this.get({ userId: args.userId, transferId: args.transferId }, readOptions),
      args,
      options,
    );
  }

  #pageSchema(): Parser<{ items: BridgeTransfer[]; nextCursor: string | null }> {
    const transfer = bridgeSchemas(this.#strict).transfer;
    const strict = this.#strict;
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
}

function fail(issues: { path: PropertyKey[]; message: string }[]) {
  return { success: false as const, error: { issues } };
}
