import type { RawResponse } from './types.js';

// Types only: the package is an optional peer dependency, loaded by `import()` when a tracer waits.
type OtelApi = typeof import('@opentelemetry/api');
type OtelContext = import('@opentelemetry/api').Context;
type OtelSpan = import('@opentelemetry/api').Span;
type OtelTracer = import('@opentelemetry/api').Tracer;

/**
 * A tracer provider in the shape of `@opentelemetry/api`'s `TracerProvider`: the
 * `BasicTracerProvider` or `NodeTracerProvider` of an OpenTelemetry SDK fits. Declared here so
 * that the SDK's types never name the optional package.
 *
 * @example
 * const provider: TracerProviderLike = new NodeTracerProvider({ spanProcessors: [processor] });
 */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): unknown;
}

/**
 * The `tracing` option of `PartnerClient`: `true` (spans go to the tracer provider registered with
 * `@opentelemetry/api`, when there is one), `false` (the package is never loaded), or a provider of
 * the client's own.
 *
 * @example
 * const tracing: TracingOption = { tracerProvider: provider };
 */
export type TracingOption = boolean | { tracerProvider: TracerProviderLike };

/** Runs `fn` in a child span named `name` of whatever span is active, when tracing is on. */
export type SpanRunner = <T>(name: string, fn: () => T | Promise<T>) => Promise<T>;

/** A `SpanRunner` that only runs: tracing off, or no client to trace for. */
export const untraced: SpanRunner = async (_name, fn) => fn();

/** The instrumentation scope the SDK's spans carry. */
export const TRACER_NAME = 'partner-s2s-sdk';

/**
 * Where `@opentelemetry/api` 1.x keeps its globals, shared by every copy of the package in the
 * process. Reading it tells whether a tracer provider is registered without loading anything, so
 * that a process with no tracer never loads the package.
 */
const GLOBAL_API_KEY = Symbol.for('opentelemetry.js.api.1');

const REQUEST_ID = 'http.response.header.x-request-id';
/** `SpanKind.CLIENT` and `SpanStatusCode.ERROR`: stable numbers of the API, spelled out here. */
const CLIENT = 2;
const ERROR = 2;

function tracerRegistered(): boolean {
  const registry = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[GLOBAL_API_KEY];
  return registry?.trace !== undefined;
}

let otel: OtelApi | undefined;
/** Set when the package could not be loaded: it is not tried again, and nothing is traced. */
let missing = false;
/** The one `import()` of the process. */
let loading: Promise<OtelApi | undefined> | undefined;

function loadOtel(): Promise<OtelApi | undefined> {
  loading ??= import('@opentelemetry/api').then(
    (module) => {
      // A CommonJS build seen through ESM interop may hold the API on `default` only.
      const api = (module.trace ? module : (module as { default?: OtelApi }).default) as OtelApi | undefined;
      otel = api?.trace && api.context ? api : undefined;
      missing = otel === undefined;
      return otel;
    },
    () => {
      missing = true;
      return undefined;
    },
  );
  return loading;
}

/** A loaded API and the tracer a client's spans go to. */
export interface Active {
  api: OtelApi;
  tracer: OtelTracer;
}

/**
 * The error's class name: low in cardinality and never a secret, where its message may quote
 * what a server sent.
 */
function errorType(error: unknown): string {
  return error instanceof Error && error.name ? error.name : '_OTHER';
}

function fail(span: OtelSpan, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: ERROR });
}

/** The attributes that name the service: its host and port only, never a path or query. */
export interface Server {
  'server.address': string;
  'server.port': number;
}

function serverOf(baseUrl: string): Server {
  const url = new URL(baseUrl);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { 'server.address': url.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': port };
}

/**
 * One client's tracing: which provider, and whether it is on. Off, or with no tracer registered,
 * every call goes through untouched and `@opentelemetry/api` is not loaded. A tracer found later
 * (an SDK started after the client was made) is used from the next call on.
 */
export class Tracing {
  readonly #option: TracingOption;
  readonly #server: Server;

  constructor(option: TracingOption, baseUrl: string) {
    this.#option = option;
    this.#server = serverOf(baseUrl);
  }

  /** The tracer to use now; a promise while the package loads; undefined when nothing is traced. */
  #active(): Active | Promise<Active | undefined> | undefined {
    const option = this.#option;
    if (option === false) return undefined;
    const own = option === true ? undefined : option.tracerProvider;
    if (!own && !tracerRegistered()) return undefined;
    if (otel) return this.#resolved();
    return missing ? undefined : loadOtel().then(() => this.#resolved());
  }

  #resolved(): Active | undefined {
    if (!otel) return undefined;
    const provider =
      this.#option === true || this.#option === false ? otel.trace : this.#option.tracerProvider;
    // Asked each time: the global provider may be replaced, and providers cache their tracers.
    return { api: otel, tracer: provider.getTracer(TRACER_NAME) as OtelTracer };
  }

  /**
   * Runs `fn` in a span named `name`, a child of the active span. The child relation across
   * `await` needs the context manager the application registers (`AsyncLocalStorageContextManager`).
   */
  readonly span: SpanRunner = (name, fn) => {
    const active = this.#active();
    if (active === undefined) return untraced(name, fn);
    if (active instanceof Promise) return active.then((loaded) => (loaded ? inSpan(loaded, name, fn) : fn()));
    return inSpan(active, name, fn);
  };

  /** The spans of one data call; `undefined` when nothing is traced (the call goes through untouched). */
  open(method: string, path: string): CallSpans | undefined {
    const active = this.#active();
    return active === undefined ? undefined : new CallSpans(active, this.#server, method, path);
  }
}

async function inSpan<T>({ api, tracer }: Active, name: string, fn: () => T | Promise<T>): Promise<T> {
  const span = tracer.startSpan(name);
  try {
    return await api.context.with(api.trace.setSpan(api.context.active(), span), fn);
  } catch (error) {
    fail(span, errorType(error));
    throw error;
  } finally {
    span.end();
  }
}

interface CallSpan {
  api: Active['api'];
  tracer: OtelTracer;
  span: OtelSpan;
  context: OtelContext;
}

/**
 * The spans of one data call, after the HTTP semantic conventions: the call's own span, named by
 * method and route template (`GET /bridge/transfers/{transferId}`, never the ids the path holds),
 * started at the first attempt once the package is loaded, in the caller's context; and under it
 * one CLIENT span per request sent (a retry, a replay after a 401), with
 * `http.request.resend_count` from the second on. What they carry is chosen, not copied from the
 * request: no header but the answer's `x-request-id`, no body, no query, no URL with ids in it.
 */
export class CallSpans {
  readonly #active: Active | Promise<Active | undefined>;
  readonly #server: Server;
  readonly #name: string;
  readonly #route: { 'http.request.method': string; 'url.template': string };
  #call: CallSpan | undefined;
  #sends = 0;
  #lastStatus: number | undefined;
  #lastRequestId: string | undefined;

  constructor(active: Active | Promise<Active | undefined>, server: Server, method: string, path: string) {
    this.#active = active;
    this.#server = server;
    this.#name = `${method} ${path}`;
    this.#route = { 'http.request.method': method, 'url.template': path };
  }

  /** One attempt under the call's span: the hook's own work (the wait for a token) is the call's. */
  attempt<T>(run: () => Promise<T>): Promise<T> {
    const active = this.#active;
    return active instanceof Promise
      ? active.then((loaded) => this.#attemptIn(loaded, run))
      : this.#attemptIn(active, run);
  }

  #attemptIn<T>(loaded: Active | undefined, run: () => Promise<T>): Promise<T> {
    if (!loaded) return run();
    if (!this.#call) {
      const parent = loaded.api.context.active();
      const span = loaded.tracer.startSpan(this.#name, { attributes: this.#route }, parent);
      this.#call = { ...loaded, span, context: loaded.api.trace.setSpan(parent, span) };
    }
    return loaded.api.context.with(this.#call.context, run);
  }

  /** One request sent, in a CLIENT span of its own; untraced until the call's span started. */
  async send(send: () => Promise<RawResponse>): Promise<RawResponse> {
    const call = this.#call;
    if (!call) return send();
    const { api, tracer, context } = call;
    const resends = this.#sends++;
    const span = tracer.startSpan(
      this.#name,
      {
        kind: CLIENT,
        attributes: {
          ...this.#route,
          ...this.#server,
          ...(resends > 0 ? { 'http.request.resend_count': resends } : {}),
        },
      },
      context,
    );
    try {
      const response = await api.context.with(api.trace.setSpan(context, span), send);
      this.#lastStatus = response.status;
      this.#lastRequestId = response.headers.get('x-request-id') ?? undefined;
      span.setAttribute('http.response.status_code', response.status);
      if (this.#lastRequestId !== undefined) span.setAttribute(REQUEST_ID, [this.#lastRequestId]);
      if (response.status >= 400) fail(span, String(response.status));
      return response;
    } catch (error) {
      this.#lastStatus = undefined;
      this.#lastRequestId = undefined;
      fail(span, errorType(error));
      throw error;
    } finally {
      span.end();
    }
  }

  /** The call is over: its span ends with the last answer's status, or the error the caller got. */
  end(failure?: { error: unknown }): void {
    if (!this.#call) return;
    const { span } = this.#call;
    if (this.#lastStatus !== undefined) span.setAttribute('http.response.status_code', this.#lastStatus);
    if (this.#lastRequestId !== undefined) span.setAttribute(REQUEST_ID, [this.#lastRequestId]);
    if (failure) fail(span, errorType(failure.error));
    span.end();
  }
}
