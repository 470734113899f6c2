import type { ApiPromise } from '../core/api-promise.js';
import { apiCall, parseArgs } from '../core/args.js';
import type { RequestOptions } from '../core/request-options.js';
import { type Api, type Data, type Endpoint, send } from './endpoints.js';

/**
 * What every resource class extends (openai-node's `APIResource`): the client's `Api`, through
 * which `call` runs each endpoint method from a row of `ENDPOINTS`. The helpers are functions,
 * not methods, so that a resource's prototype holds only its public methods.
 */
export class Resource {
  protected readonly api: Api;

  constructor(api: Api) {
    this.api = api;
  }
}

/** The row's arguments checked, named as the method in an `ArgumentError`. */
export function checkArgs<A, R>(endpoint: Endpoint<A, R>, params: unknown): A {
  return endpoint.args ? parseArgs(endpoint.args, params, endpoint.name) : (undefined as A);
}

/**
 * An endpoint method: it names its row and passes its arguments. Options and arguments are
 * checked (an `ArgumentError` rejects the promise, before any request), the answer's `data`
 * returned, every answer reported to `.withResponse()`.
 *
 * @example
 * routes(options) { return call(this.api, ENDPOINTS.routes, undefined, options); }
 */
export function call<A, R>(
  api: Api,
  endpoint: Endpoint<A, R>,
  params: unknown,
  options: RequestOptions | undefined,
): ApiPromise<Data<R>> {
  return apiCall(options, endpoint.name, (checked, sink) =>
    send(api, endpoint, checkArgs(endpoint, params), { options: checked, sink }),
  );
}
