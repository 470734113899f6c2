/**
 * One data call from its description to its result: the request built once, each attempt through
 * the hook, p-retry only after a failed first attempt, the answer parsed or typed as an error.
 * Everything a call keeps while it is in flight is on one object, so ten thousand calls in flight
 * hold ten thousand of them and one suspended function each, not a closure per step.
 */
import type { RequestOptions } from '../core/request-options.js';
import type { ParseResult } from '../core/standard-schema.js';
import type { Deadline, DeadlineErrors } from '../core/time.js';
import { AbortError, ResponseValidationError, TimeoutError } from '../errors/client-errors.js';
import { apiErrorFromResponse } from '../errors/from-response.js';
import type { Redact } from '../errors/redact.js';
import { toIssues } from '../schemas/issues.js';
import {
  type Answer,
  type CallContext,
  type CallHook,
  type DataRequest,
  type Exchange,
  fillPath,
  type HeaderValues,
  parseJson,
  type RawResponse,
  type RequestHook,
} from './types.js';

/** What a call needs of the transport. */
export interface CallTransport {
  deadline(
    method: string,
    label: string,
    options: RequestOptions | undefined,
    errors?: DeadlineErrors,
  ): Deadline;
  timeoutMs(options: RequestOptions | undefined): number;
  exchange(
    request: Exchange,
    attempt: number,
    options: RequestOptions | undefined,
    label: string,
    deadline: Deadline,
    sink: DataRequest<unknown>['sink'],
  ): Promise<RawResponse>;
  redaction(request: Exchange): Redact;
  /** The retries after a failed first attempt (p-retry's), or the failure as it is. */
  retried<T>(
    first: unknown,
    spec: DataRequest<T>,
    options: RequestOptions | undefined,
    attempt: () => Promise<T>,
  ): Promise<T>;
}

/** The SDK's own headers, shared by every call that brings none: the caller's never replace them. */
const ACCEPT: HeaderValues = Object.freeze({ accept: 'application/json' });
const ACCEPT_WITH_BODY: HeaderValues = Object.freeze({
  accept: 'application/json',
  'content-type': 'application/json',
});

/** The request of a call, the same object at each attempt (the hook sets its token). */
function exchangeOf(spec: DataRequest<unknown>, options: RequestOptions | undefined): Exchange {
  const own = spec.body === undefined ? ACCEPT : ACCEPT_WITH_BODY;
  return {
    method: spec.method,
    path: fillPath(spec.path, spec.params),
    ...(spec.searchParams ? { searchParams: spec.searchParams } : {}),
    // The caller's headers were checked not to name the SDK's own, which come last regardless.
    headers: options?.headers ? { ...options.headers, ...own } : own,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    onSent: spec.onSent,
    token: undefined,
  };
}

/**
 * A data call: `run()` makes its attempts through the hook's decoration and ends the decoration
 * once, whatever the outcome. Events, spans and errors name its path template.
 */
export class DataCall<T> implements CallContext<T>, DeadlineErrors {
  readonly spec: DataRequest<T>;
  readonly options: RequestOptions | undefined;
  readonly #transport: CallTransport;
  readonly #hook: CallHook;
  readonly #request: Exchange;
  /** Requests sent so far, for the events' `attempt` (a replay after a 401 counts). */
  #sent = 0;

  constructor(
    transport: CallTransport,
    spec: DataRequest<T>,
    options: RequestOptions | undefined,
    hook: RequestHook,
  ) {
    this.#transport = transport;
    this.spec = spec;
    this.options = options;
    this.#request = exchangeOf(spec, options);
    this.#hook = hook.open(spec, options);
  }

  deadline(): Deadline {
    return this.#transport.deadline(this.spec.method, this.spec.path, this.options, this);
  }

  /** What its attempts' deadlines end with: the call is their errors, not an object more each. */
  timedOut(): TimeoutError {
    const { method, path } = this.spec;
    return new TimeoutError({ method, path, timeoutMs: this.#transport.timeoutMs(this.options) });
  }

  aborted(): AbortError {
    return new AbortError({ cause: this.options?.signal?.reason });
  }

  send(request: Exchange, deadline: Deadline): Promise<RawResponse> {
    const { spec } = this;
    return this.#transport.exchange(request, ++this.#sent, this.options, spec.path, deadline, spec.sink);
  }

  settle(answer: Answer): T | Promise<T> {
    return settle(this.#transport, this.spec, answer);
  }

  /** The call's one frame in flight: the first attempt, the retries only once it failed. */
  async run(): Promise<T> {
    const signal = this.options?.signal;
    let failure: { error: unknown } | undefined;
    try {
      if (signal?.aborted) throw new AbortError({ cause: signal.reason });
      try {
        return await this.#hook.attempt(this, this.#request);
      } catch (error) {
        return await this.#transport.retried(error, this.spec, this.options, () =>
          this.#hook.attempt(this, this.#request),
        );
      }
    } catch (error) {
      failure = { error };
      throw error;
    } finally {
      this.#hook.end(failure);
    }
  }
}

/** Turns an answer into the call's result: the parsed data, or the typed error of its status. */
function settle<T>(transport: CallTransport, spec: DataRequest<T>, answer: Answer): T | Promise<T> {
  const { response } = answer;
  if (response.status >= 200 && response.status < 300) return parse(spec, response);
  const parsed = parseJson(response.text);
  throw apiErrorFromResponse({
    status: response.status,
    method: spec.method,
    path: spec.path,
    headers: response.headers,
    body: parsed.ok ? parsed.value : undefined,
    requiredScopes: spec.scopes,
    grantedScopes: answer.grantedScopes,
    credentialStopped: answer.credentialStopped ?? false,
    redact: transport.redaction(answer.request),
    ids: spec.ids,
  });
}

function parse<T>(spec: DataRequest<T>, response: RawResponse): T | Promise<T> {
  const json = parseJson(response.text);
  if (!json.ok) {
    throw new ResponseValidationError({
      method: spec.method,
      path: spec.path,
      status: response.status,
      issues: [{ path: '', message: 'the body is not JSON' }],
    });
  }
  const finish = (result: ParseResult<T>): T => {
    if (result.success) {
      const mismatch = spec.check?.(result.data);
      if (!mismatch?.length) return result.data;
      throw ResponseValidationError.mismatch({
        method: spec.method,
        path: spec.path,
        status: response.status,
        issues: mismatch,
      });
    }
    throw new ResponseValidationError({
      method: spec.method,
      path: spec.path,
      status: response.status,
      issues: toIssues(result.error),
    });
  };
  const result = spec.schema.safeParse(json.value);
  return result instanceof Promise ? result.then(finish) : finish(result);
}
