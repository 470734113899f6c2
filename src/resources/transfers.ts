import type { ApiPromise, ResponseSink } from '../core/api-promise.js';
import { apiCall, parseArgs, parseOptions, requestOptionsSchema } from '../core/args.js';
import { PREFIX } from '../core/logger.js';
import { Page, PagePromise } from '../core/pagination.js';
import type { RequestOptions } from '../core/request-options.js';
import { ResponseValidationError } from '../errors/client-errors.js';
import { pollTransfer, type WaitOptions, type WaitParams } from '../flows/wait.js';
import type { BridgeTransfer } from '../schemas/bridge.js';
import { ENDPOINTS, send } from './endpoints.js';
import { type TransferGetParams, type TransferListParams, waitArgs, waitOptionsSchema } from './params.js';
import { call, checkArgs, Resource } from './resource.js';

type ListArgs = Parameters<typeof ENDPOINTS.transfers.parts>[0];

/**
 * A user's bridge transfers: list, read, and wait for a state. Reached as `client.bridge.transfers`.
 *
 * @example
 * const transfer = await client.bridge.transfers.get({ userId, transferId });
 */
export class Transfers extends Resource {
  /** Set once this client said that `timeoutMs` of `wait` is deprecated: once is enough. */
  #warnedTimeoutMs = false;

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
    const where = ENDPOINTS.transfers.name;
    // Read now, as every other method does: a change to the caller's objects before the first
    // `await` is not sent. A problem still rejects the first use, not the call.
    let read: { args: ListArgs; checked: RequestOptions | undefined } | undefined;
    let problem: unknown;
    try {
      read = {
        args: checkArgs(ENDPOINTS.transfers, params),
        checked: parseOptions(requestOptionsSchema, options, where),
      };
    } catch (error) {
      problem = error;
    }
    return new PagePromise(async (sink) => {
      if (!read) throw problem;
      const { args, checked } = read;
      // Only the first page's answer is the list call's own (`withResponse`).
      let pageSink: ResponseSink | undefined = sink;
      const seen = new Set<string>();
      const fetchPage = async (cursor: string | undefined): Promise<Page<BridgeTransfer>> => {
        const { items, nextCursor } = await send(
          this.api,
          ENDPOINTS.transfers,
          cursor === undefined ? args : { ...args, cursor },
          { options: checked, sink: pageSink },
        );
        pageSink = undefined;
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
    return call(this.api, ENDPOINTS.transfer, params, options);
  }

  /**
   * Waits until a transfer reaches a final state (`delivered`, `refunded`, `failed`, `expired`), or
   * the state named by `until` (or one after it), reading it with growing intervals. Its deadline
   * follows the phase the transfer is in (`phaseTimeoutsMs`: minutes to source confirmation and to
   * delivery, hours in a refund); past one it throws a `TimeoutError` naming the `phase`.
   *
   * @example
   * const done = await client.bridge.transfers.wait({ userId, transferId });
   * const capped = await client.bridge.transfers.wait({ userId, transferId }, { totalTimeoutMs: 300_000 });
   * const viaCallbacks = await client.bridge.transfers.wait({ userId, transferId }, { router });
   * if (done.status !== 'delivered') console.warn(done.status, done.failureReason);
   */
  wait(params: WaitParams, options?: WaitOptions): ApiPromise<BridgeTransfer> {
    return apiCall(
      options,
      'bridge.transfers.wait',
      (given, sink) => {
        const checked = given ?? {};
        const args = parseArgs(waitArgs, params, 'bridge.transfers.wait');
        const warn = this.api.warn;
        if (checked.timeoutMs !== undefined && !this.#warnedTimeoutMs && warn) {
          this.#warnedTimeoutMs = true;
          warn(
            `${PREFIX} bridge.transfers.wait: timeoutMs is deprecated, give totalTimeoutMs instead (in the next release timeoutMs will bound each read, not the whole wait)`,
          );
        }
        // Each read carries the wait's headers and fetch options, and reports its answer to the wait.
        const { headers, fetchOptions } = checked;
        const passOn: RequestOptions = {
          ...(headers ? { headers } : {}),
          ...(fetchOptions ? { fetchOptions } : {}),
        };
        // Checked by the wait's own arguments: each read hands them on as they are.
        const ids = { userId: args.userId, transferId: args.transferId };
        return pollTransfer(
          (readOptions) =>
            send(this.api, ENDPOINTS.transfer, ids, { options: { ...passOn, ...readOptions }, sink }),
          args,
          checked,
        );
      },
      waitOptionsSchema,
    );
  }
}
