import { API_PREFIX } from '../../core/defaults.js';
import type { Caller } from './auth.js';
import type { SimCore } from './core.js';
import { HttpFailure, jsonResponse, oauthError, validation } from './envelope.js';
import type { Mount, SimRequest } from './http.js';
import { requiredFields } from './json.js';

/*
 * The Partner Service Interface under /api/v1/s2s: the token endpoint, then every endpoint behind
 * a bearer token and the scopes it needs, each answered by the concern that owns it. Any other
 * path under the prefix is answered as the service answers it: 401 without a valid token (the
 * token is checked before the path), then 404, or 405 with `Allow` for a known path and another
 * method.
 */

/** One endpoint: its method, its path below the prefix, and what answers it for a caller. */
interface Endpoint {
  method: 'GET' | 'POST';
  /** A literal path, or a pattern whose groups are the path's ids. */
  path: string | RegExp;
  handle(core: SimCore, caller: Caller, request: SimRequest, ids: string[]): Response | Promise<Response>;
}

const TOKEN_PATH = '/auth/token';

const ENDPOINTS: readonly Endpoint[] = [
  {
    method: 'GET',
    path: '/me',
    handle: (_core, caller) => jsonResponse({ data: { scopes: [...caller.scopes].sort() } }),
  },
  {
    method: 'GET',
    path: '/bridge/routes',
    handle: ({ auth, routes }, caller) => {
      auth.require(caller, 'bridge:read');
      return jsonResponse({ data: routes.list() });
    },
  },
  {
    method: 'POST',
    path: '/bridge/quote',
    handle: ({ auth, routes, users }, caller, { body }) => {
      auth.require(caller, 'bridge:read');
      const input = requiredFields(body, ['userId', 'routeId', 'amount']);
      users.ofPartner(caller.organisationId, input.userId);
      const state = routes.usable(input.routeId);
      return jsonResponse({ data: routes.quote(state, routes.amountRaw(state, input.amountLiteral)) });
    },
  },
  {
    method: 'GET',
    path: '/bridge/fee-estimate',
    handle: ({ auth, routes }, caller, { query }) => {
      auth.require(caller, 'bridge:read');
      const errors: string[] = [];
      const routeId = query.get('routeId');
      const amount = query.get('amount');
      if (!routeId) errors.push('routeId is required');
      if (!amount || !/^\d+(\.\d+)?$/.test(amount)) errors.push('amount must be a positive number');
      if (errors.length > 0) throw validation(errors);
      return jsonResponse({ data: routes.feeEstimate(routes.known(routeId!), amount!) });
    },
  },
  {
    method: 'POST',
    path: '/bridge/construct/transaction/batch',
    handle: async ({ auth, intents }, caller, { body }) => {
      auth.require(caller, 'bridge:read', 'transactions:write');
      return jsonResponse({ data: await intents.construct(caller.organisationId, body) });
    },
  },
  {
    method: 'POST',
    path: '/bridge/transaction/batch/send',
    handle: async ({ auth, intents }, caller, { body }) => {
      auth.require(caller, 'bridge:read', 'transactions:write');
      return jsonResponse({ data: await intents.send(caller.organisationId, body) });
    },
  },
  {
    method: 'GET',
    path: '/bridge/transfers',
    handle: ({ auth, transfers }, caller, { query }) => {
      auth.require(caller, 'bridge:read');
      return jsonResponse(transfers.list(caller.organisationId, query));
    },
  },
  {
    method: 'GET',
    path: /^\/bridge\/transfers\/([^/]+)$/,
    handle: ({ auth, transfers, users }, caller, { query }, [transferId]) => {
      auth.require(caller, 'bridge:read');
      const userId = query.get('userId');
      if (!userId) throw validation(['userId is required']);
      users.ofPartner(caller.organisationId, userId);
      return jsonResponse({
        data: transfers.get(caller.organisationId, userId, decodeURIComponent(transferId!)),
      });
    },
  },
];

/** The path's ids when `endpoint` serves `path`, whatever the method. */
function match(endpoint: Endpoint, path: string): string[] | undefined {
  if (typeof endpoint.path === 'string') return endpoint.path === path ? [] : undefined;
  return endpoint.path.exec(path)?.slice(1);
}

/** One request the partner API received: method, path below the prefix, and when (epoch ms, real time). */
export interface ReceivedRequest {
  method: string;
  path: string;
  at: number;
}

/** The partner API, logging each request it receives (method and path below the prefix) in `requests`. */
export function partnerApi(core: SimCore, requests: ReceivedRequest[]): Mount {
  return {
    prefix: API_PREFIX,
    handle: (request) => {
      requests.push({ method: request.method, path: request.path, at: Date.now() });
      if (request.path === TOKEN_PATH) {
        // The token endpoint answers every mistake in the OAuth shape, this one included.
        if (request.method !== 'POST')
          return oauthError(405, 'invalid_request', 'the token endpoint takes POST', { allow: 'POST' });
        return core.auth.token(request.headers, request.body);
      }
      return route(core, request);
    },
  };
}

function route(core: SimCore, request: SimRequest): Response | Promise<Response> {
  // Before the path: without a valid token nothing is revealed, not even which paths exist.
  const caller = core.auth.authenticate(request.headers);
  const { method, path } = request;
  let allowed: string[] = [];
  for (const endpoint of ENDPOINTS) {
    const ids = match(endpoint, path);
    if (!ids) continue;
    if (endpoint.method === method) return endpoint.handle(core, caller, request, ids);
    allowed.push(endpoint.method);
  }
  // A long path is not echoed whole: the answer stays small whatever was asked.
  const shown = JSON.stringify(path.slice(0, 80));
  if (allowed.length === 0) throw new HttpFailure(404, 'NOT_FOUND', `no endpoint ${method} ${shown}`);
  allowed = [...new Set(allowed)].sort();
  throw new HttpFailure(
    405,
    'METHOD_NOT_ALLOWED',
    `${shown} takes ${allowed.join(' or ')}, not ${method}`,
    {},
    { allow: allowed.join(', ') },
  );
}
