import { PartnerClient, type PartnerClientOptions } from '../../src/index.js';

export interface MockRequest {
  method: string;
  /** Path below /api/v1/s2s. */
  path: string;
  url: URL;
  headers: Headers;
  body: string;
  signal: AbortSignal;
}

export type Handler = (request: MockRequest) => Response | Promise<Response>;

export const SECRET = 'sh:h%+/= secret';
export const BASE_URL = 'https://partner.test';

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export function envelopeError(
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return json({ statusCode: status, error: 'Error', code, message, ...extra }, status, headers);
}

export interface MockService {
  fetch: (input: Request | URL | string, init?: RequestInit) => Promise<Response>;
  calls: MockRequest[];
  /** Calls whose "METHOD /path" matches. */
  count(route: string): number;
  tokensIssued: string[];
}

export interface MockServiceOptions {
  /** "METHOD /path" → handler; the path has no query. */
  routes?: Record<string, Handler>;
  token?: Handler;
  expiresIn?: number;
  scope?: string;
}

/**
 * A fetch double for the service: a token endpoint that issues `token-1`, `token-2`, … and the
 * given data routes, each of which must see a currently issued bearer token.
 */
export function mockService(options: MockServiceOptions = {}): MockService {
  const calls: MockRequest[] = [];
  const tokensIssued: string[] = [];
  const defaultToken: Handler = () => {
    const token = `token-${tokensIssued.length + 1}`;
    tokensIssued.push(token);
    return json(
      {
        access_token: token,
        token_type: 'Bearer',
        expires_in: options.expiresIn ?? 3600,
        scope: options.scope ?? 'bridge:read transactions:write',
      },
      200,
      { 'cache-control': 'no-store' },
    );
  };
  const fetch = async (input: Request | URL | string, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const path = url.pathname.replace(/^\/api\/v1\/s2s/, '');
    const call: MockRequest = {
      method: request.method,
      path,
      url,
      headers: request.headers,
      body: await request.text(),
      signal: request.signal,
    };
    calls.push(call);
    if (path === '/auth/token') return (options.token ?? defaultToken)(call);
    const handler = options.routes?.[`${call.method} ${path}`] ?? options.routes?.[`${call.method} *`];
    if (!handler)
      return json(
        { statusCode: 404, error: 'Not Found', code: 'NOT_FOUND', message: `no route ${path}` },
        404,
      );
    return handler(call);
  };
  return {
    fetch,
    calls,
    tokensIssued,
    count: (route) => calls.filter((call) => `${call.method} ${call.path}` === route).length,
  };
}

export function makeClient(service: MockService, options: Partial<PartnerClientOptions> = {}): PartnerClient {
  return new PartnerClient({
    baseUrl: BASE_URL,
    clientId: 'client-1',
    clientSecret: SECRET,
    fetch: service.fetch,
    retry: { minDelayMs: 1, maxDelayMs: 5 },
    ...options,
  });
}
