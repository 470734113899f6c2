import type { SimCore } from './core.js';
import { HttpFailure, jsonResponse, validation } from './envelope.js';
import type { Mount, SimRequest } from './http.js';
import { requiredFields } from './json.js';

/*
 * The Partner Service Interface under /api/v1/s2s: the token endpoint, then every endpoint behind
 * a bearer token and the scopes it needs, each answered by the concern that owns it.
 */

/** The partner API, logging each request it receives (method and path below the prefix) in `requests`. */
export function partnerApi(core: SimCore, requests: { method: string; path: string }[]): Mount {
  return {
    prefix: '/api/v1/s2s',
    handle: (request) => {
      requests.push({ method: request.method, path: request.path });
      if (request.path === '/auth/token') {
        if (request.method !== 'POST') throw new HttpFailure(405, 'METHOD_NOT_ALLOWED', 'use POST');
        return core.auth.token(request.headers, request.body);
      }
      return route(core, request);
    },
  };
}

async function route(core: SimCore, { method, path, query, headers, body }: SimRequest): Promise<Response> {
  const { auth, routes, transfers, intents, users } = core;
  const caller = auth.authenticate(headers);
  const key = `${method} ${path}`;
  if (key === 'GET /me') return jsonResponse({ data: { scopes: [...caller.scopes].sort() } });
  if (key === 'GET /bridge/routes') {
    auth.require(caller, 'bridge:read');
    return jsonResponse({ data: routes.list() });
  }
  if (key === 'POST /bridge/quote') {
    auth.require(caller, 'bridge:read');
    const input = requiredFields(body, ['userId', 'routeId', 'amount']);
    users.ofPartner(caller.organisationId, input.userId);
    const state = routes.usable(input.routeId);
    return jsonResponse({ data: routes.quote(state, routes.amountRaw(state, input.amountLiteral)) });
  }
  if (key === 'GET /bridge/fee-estimate') {
    auth.require(caller, 'bridge:read');
    const errors: string[] = [];
    const routeId = query.get('routeId');
    const amount = query.get('amount');
    if (!routeId) errors.push('routeId is required');
    if (!amount || !/^\d+(\.\d+)?$/.test(amount)) errors.push('amount must be a positive number');
    if (errors.length > 0) throw validation(errors);
    return jsonResponse({ data: routes.feeEstimate(routes.known(routeId!), amount!) });
  }
  if (key === 'POST /bridge/construct/transaction/batch') {
    auth.require(caller, 'bridge:read', 'transactions:write');
    return jsonResponse({ data: intents.construct(caller.organisationId, body) });
  }
  if (key === 'POST /bridge/transaction/batch/send') {
    auth.require(caller, 'bridge:read', 'transactions:write');
    return jsonResponse({ data: await intents.send(caller.organisationId, body) });
  }
  if (key === 'GET /bridge/transfers') {
    auth.require(caller, 'bridge:read');
    return jsonResponse(transfers.list(caller.organisationId, query));
  }
  const single = /^\/bridge\/transfers\/([^/]+)$/.exec(path);
  if (method === 'GET' && single) {
    auth.require(caller, 'bridge:read');
    const userId = query.get('userId');
    if (!userId) throw validation(['userId is required']);
    users.ofPartner(caller.organisationId, userId);
    return jsonResponse({
      data: transfers.get(caller.organisationId, userId, decodeURIComponent(single[1]!)),
    });
  }
  throw new HttpFailure(404, 'NOT_FOUND', `no endpoint ${method} ${path}`);
}
