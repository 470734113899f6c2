import type { ApiPromise } from '../core/api-promise.js';
import { apiCall, parseArgs } from '../core/args.js';
import type { RequestOptions } from '../core/request-options.js';
import { type Api, type CallExtras, callEndpointData, type Endpoint } from './endpoints.js';

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
export function endpointArgs<A, R>(endpoint: Endpoint<A, R>, params: unknown): A {
  return endpoint.args ? parseArgs(endpoint.args, params, endpoint.name) : (undefined as A);
}

/**
 * The answer's `data` of a call with unchecked `params` and checked options (a flow's step). Not
 * an `async` function: no suspended frame of its own for each call in flight.
 */
export function endpointData<A, T>(
  api: Api,
  endpoint: Endpoint<A, { data: T }>,
  params: unknown,
  options: RequestOptions | undefined,
  extras?: CallExtras,
): Promise<T> {
  try {
    return callEndpointData(api, endpoint, endpointArgs(endpoint, params), options, extras);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The one call of an endpoint method: options and arguments checked (an `ArgumentError` rejects
 * the promise, before any request), the answer's `data` returned, every answer reported to
 * `.withResponse()`.
 *
 * @example
 * routes(options) { return call(this.api, ENDPOINTS.routes, undefined, options); }
 */
export function call<A, T>(
  api: Api,
  endpoint: Endpoint<A, { data: T }>,
  params: unknown,
  options: RequestOptions | undefined,
): ApiPromise<T> {
  return apiCall(options, endpoint.name, (checked, sink) =>
    endpointData(api, endpoint, params, checked, { sink }),
  );
}
