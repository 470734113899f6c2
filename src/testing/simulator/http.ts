import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readArgs } from '../../core/args.js';
import { readWholeBody, readWholeText } from '../../core/body.js';
import { failure, HttpFailure } from './envelope.js';

/*
 * The HTTP surface: a web `fetch` that reads the request once and hands it to the API mounted at
 * its path prefix, and a node:http server that serves that same `fetch`. The partner API is one
 * mount; the admin API (admin-http.ts, under `sim.adminPath`) is another, answering with the same
 * envelope.
 */

/** A request as an API of the simulator sees it: the path is below the mount's prefix. */
export interface SimRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  /**
   * Where the request was addressed: its `Host` header over HTTP (node:http keeps it), the URL's
   * host when called as a function (a `Request` made in-process has no `Host`).
   */
  host: string;
  body: string;
}

/** An API served under `prefix`; an `HttpFailure` it throws is answered as the error envelope. */
export interface Mount {
  prefix: string;
  handle(request: SimRequest): Response | Promise<Response>;
}

export type FetchFunction = (input: Request | URL | string, init?: RequestInit) => Promise<Response>;

/**
 * A fetch function that answers as the service would, from the first mount whose prefix matches;
 * a path under no mount is a 404 in the error envelope, without looking at any token.
 */
export function simulatorFetch(mounts: readonly Mount[]): FetchFunction {
  let answered = 0;
  // Every answer names itself, as the service's gateway does, so `requestId` can be followed in tests.
  const named = (response: Response) => {
    response.headers.set('x-request-id', `req_sim_${(++answered).toString().padStart(6, '0')}`);
    return response;
  };
  const answer: FetchFunction = async (input, init) => {
    const where = 'PartnerSimulator.fetch';
    const request = readArgs(where, () =>
      input instanceof Request && init === undefined ? input : new Request(input, init),
    );
    const url = new URL(request.url);
    // A prefix is whole segments: /api/v1/s2sx is not under /api/v1/s2s.
    const mount = mounts.find(
      ({ prefix }) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`),
    );
    if (!mount) return failure(new HttpFailure(404, 'NOT_FOUND', 'unknown path'));
    const path = url.pathname.slice(mount.prefix.length);
    // A body stream of the caller's that errors is theirs too: rethrown inside readArgs to be typed.
    const body =
      request.method === 'GET' || request.method === 'HEAD'
        ? ''
        : // A used body is refused as fetch refuses it.
          await (request.bodyUsed ? request.text() : readWholeText(request)).catch((error: unknown) =>
            readArgs(where, () => {
              throw error;
            }),
          );
    try {
      return await mount.handle({
        method: request.method,
        path,
        query: url.searchParams,
        headers: request.headers,
        host: request.headers.get('host') ?? url.host,
        body,
      });
    } catch (error) {
      if (error instanceof HttpFailure) return failure(error);
      throw error;
    }
  };
  return async (input, init) => named(await answer(input, init));
}

/** Serves `fetch` over HTTP on `host`, 127.0.0.1 unless told (`port` 0: any free port). */
export async function listenOn(
  fetch: FetchFunction,
  port: number,
  host = '127.0.0.1',
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    void serve(fetch, req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  // An IPv6 literal needs brackets in a URL.
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function serve(fetch: FetchFunction, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const bytes = await readWholeBody(req);
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(key, value);
    const method = req.method ?? 'GET';
    const response = await fetch(`http://127.0.0.1${req.url ?? '/'}`, {
      method,
      headers,
      ...(method === 'GET' || method === 'HEAD' ? {} : { body: bytes }),
    });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        statusCode: 500,
        error: 'Internal Server Error',
        code: 'INTERNAL',
        message: 'simulator failure',
      }),
    );
  }
}
