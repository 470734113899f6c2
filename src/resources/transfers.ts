import { type ApiPromise, withSink } from '../core/api-promise.js';
import { apiCall, parseArgs, parseOptions, requestOptionsSchema } from '../core/args.js';
import { Page, PagePromise } from '../core/pagination.js';
import type { RequestOptions } from '../core/request-options.js';
import { ResponseValidationError } from '../errors/client-errors.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import { type Api, callEndpoint, ENDPOINTS } from './endpoints.js';
import { getArgs, listArgs, type TransferGetParams, type TransferListParams } from './params.js';

/**
 * The transfer endpoints: list and read. `client.bridge.transfers` adds the wait on top (flows/).
 *
 * @example
 * const transfer = await client.bridge.transfers.get({ userId, transferId });
 */
export class TransfersResource {
  readonly #api: Api;

  constructor(api: Api) {
    this.#api = api;
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
    // Read now, as every other method does: a change to the caller's objects before the first
    // `await` is not sent. A problem still rejects the first use, not the call.
    let read: { args: ReturnType<typeof listArgs.parse>; checked: RequestOptions | undefined } | undefined;
    let problem: unknown;
    try {
      read = {
        args: parseArgs(listArgs, params, 'bridge.transfers.list'),
        checked: parseOptions(requestOptionsSchema, options, 'bridge.transfers.list'),
      };
    } catch (error) {
      problem = error;
    }
    return new PagePromise(async (sink) => {
      if (!read) throw problem;
      const { args, checked } = read;
      // Only the first page's answer is the list call's own (`withResponse`).
      let pageOptions: RequestOptions | undefined = withSink(checked, sink);
      const seen = new Set<string>();
      const fetchPage = async (cursor: string | undefined): Promise<Page<BridgeTransfer>> => {
        const query = new URLSearchParams({ userId: args.userId });
        if (args.status) query.set('status', args.status);
        if (args.limit !== undefined) query.set('limit', String(args.limit));
        if (cursor !== undefined) query.set('cursor', cursor);
        const { items, nextCursor } = await callEndpoint(
          this.#api,
          ENDPOINTS.transfers,
          { query, ids: { userId: args.userId } },
          pageOptions,
        );
        pageOptions = checked;
        // A cursor seen before would make `for await` loop forever.
        if (nextCursor !== null && seen.has(nextCursor)) {
          throw new ResponseValidationError({
            method: 'GET',
            path: ENDPOINTS.transfers.path,
            status: 200,
            issues: [
              { path: 'nextCursor', message: 'the service returned a cursor it had already returned' },
            ],
          });
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
  get(params: TransferGetParams, options?: RequestOptions): ApiPromise<BridgeTransfer> {
    return apiCall(options, 'bridge.transfers.get', async (checked) => {
      const args = parseArgs(getArgs, params, 'bridge.transfers.get');
      const { data } = await callEndpoint(
        this.#api,
        ENDPOINTS.transfer,
        {
          params: { transferId: args.transferId },
          query: new URLSearchParams({ userId: args.userId }),
          ids: { userId: args.userId, transferId: args.transferId },
        },
        checked,
      );
      return data;
    });
  }
}
