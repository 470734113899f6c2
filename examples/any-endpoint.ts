/**
 * Any endpoint of the interface, with the client's token, retries and typed errors: the typed
 * `client.request` / `get` / `post` for the areas the SDK has no method for yet (staking pools,
 * stocks, users, portfolio, the transaction index), raw answers with `.withResponse()`, headers,
 * logging and a client with other settings from `withOptions`.
 *
 * Run: npx tsx examples/any-endpoint.ts (the embedded simulator unless PARTNER_BASE_URL is set)
 */
import assert from 'node:assert/strict';
import { ArgumentError, isApiError } from 'partner-s2s-sdk';
import { z } from 'zod';
import { connect } from './setup.js';

const { client, userId, sim, close } = await connect();
try {
  // A typed GET: `schema` checks the answer's `data` and gives its type.
  const Me = z.object({ scopes: z.array(z.string()) });
  const me = await client.get('/me', { schema: Me });
  console.log('token scopes:', me.scopes.join(' '));
  assert.ok(me.scopes.length > 0);

  // The HTTP answer and its request id, to quote to the service's support.
  const { data: routes, response, requestId } = await client.bridge.routes().withResponse();
  console.log(`${routes.length} routes, HTTP ${response.status}, request id ${requestId ?? '(none sent)'}`);
  assert.equal(response.status, 200);

  // An endpoint whose shape the specification does not show: `unknown` without a schema. The
  // simulator answers it as the service would (404 in the error envelope).
  try {
    await client.get('/staking/pools', { scopes: ['staking:read'] });
  } catch (error) {
    if (isApiError(error, 'NOT_FOUND'))
      console.log(`staking pools: ${error.status} ${error.code} (request ${error.requestId})`);
    else throw error;
  }

  // Path placeholders are filled and encoded; events, logs and spans show the template.
  const Transfers = z.array(z.object({ transferId: z.string(), status: z.string() }));
  const transfers = await client.get('/bridge/transfers', { query: { userId, limit: 5 }, schema: Transfers });
  console.log(`${transfers.length} transfers of ${userId}`);
  assert.ok(transfers.length <= 5);

  // The bearer token never leaves the prefix: this is refused before any request.
  await client.get('../auth/token').catch((error: unknown) => {
    if (error instanceof ArgumentError) console.log('refused:', error.issues[0]?.message);
    else throw error;
  });

  // One job with other settings and its own header, sharing the token cache (no new token request).
  const job = client.withOptions({
    timeoutMs: 5_000,
    maxRetries: 0,
    defaultHeaders: { 'x-job-id': 'nightly-sync' },
  });
  const tokenRequests = () => sim?.requests.filter((r) => r.path.endsWith('/auth/token')).length;
  const before = tokenRequests();
  await job.me();
  assert.equal(tokenRequests(), before);
  console.log('a job client with its own settings made no second token request');
} finally {
  await close();
}
