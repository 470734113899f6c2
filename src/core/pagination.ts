import { ArgumentError } from '../errors/client-errors.js';
import type { ResponseSink, WithResponse } from './api-promise.js';

/**
 * One page of a list. Iterate it with `for await` to walk every item of this page and the pages
 * after it.
 *
 * @example
 * let page = await client.bridge.transfers.list({ userId, limit: 100 });
 * while (page.hasNextPage()) page = await page.getNextPage();
 */
export class Page<T> implements AsyncIterable<T> {
  readonly data: T[];
  /** The cursor of the next page; `null` on the last page. */
  readonly nextCursor: string | null;
  readonly #fetchPage: (cursor: string) => Promise<Page<T>>;

  constructor(data: T[], nextCursor: string | null, fetchPage: (cursor: string) => Promise<Page<T>>) {
    this.data = data;
    this.nextCursor = nextCursor;
    this.#fetchPage = fetchPage;
  }

  hasNextPage(): boolean {
    return this.nextCursor !== null;
  }

  /** Fetches the next page; throws when there is none (check `hasNextPage()` first). */
  getNextPage(): Promise<Page<T>> {
    if (this.nextCursor === null) {
      return Promise.reject(
        new ArgumentError({
          where: 'Page.getNextPage',
          issues: [{ path: '', message: 'this is the last page: check hasNextPage() first' }],
        }),
      );
    }
    return this.#fetchPage(this.nextCursor);
  }

  /** Every page from this one on. */
  async *iterPages(): AsyncGenerator<Page<T>, void, undefined> {
    let page: Page<T> = this;
    yield page;
    while (page.nextCursor !== null) {
      page = await page.getNextPage();
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

/**
 * The result of a list call: `await` it for the first page, or `for await` it for every item of
 * every page. The request is sent on first use.
 *
 * @example
 * const first = await client.bridge.transfers.list({ userId });
 * for await (const transfer of client.bridge.transfers.list({ userId, status: 'delivered' })) { … }
 */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  readonly #load: (sink: ResponseSink) => Promise<Page<T>>;
  #promise: Promise<Page<T>> | undefined;
  #response: Response | undefined;
  #requestId: string | undefined;

  /** `load` fetches the first page, reporting its answer to `sink` (for `withResponse`). */
  constructor(load: (sink: ResponseSink) => Promise<Page<T>>) {
    if (typeof load !== 'function') {
      throw new ArgumentError({
        where: 'PagePromise',
        issues: [{ path: 'load', message: 'must be a function returning a page' }],
      });
    }
    this.#load = load;
  }

  #page(): Promise<Page<T>> {
    this.#promise ??= this.#load((response, requestId) => {
      this.#response = response;
      this.#requestId = requestId;
    });
    return this.#promise;
  }

  /**
   * The first page together with its HTTP answer and request id.
   *
   * @example
   * const { data: page, requestId } = await client.bridge.transfers.list({ userId }).withResponse();
   */
  withResponse(): Promise<WithResponse<Page<T>>> {
    return this.#page().then((page) => ({
      data: page,
      response: this.#response as Response,
      requestId: this.#requestId,
    }));
  }

  // biome-ignore lint/suspicious/noThenProperty: a PagePromise is awaitable by design.
  then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((value: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#page().then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.#page().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#page().finally(onfinally);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    yield* await this.#page();
  }
}
