import { getUserOperationHash } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { ArgumentError, PartnerClient, signBridgeBatch, verifyBridgeBatch } from '../../src/index.js';
import { userOperationForViem } from '../../src/testing/batch.js';
import { buildBridgeBundle, createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';

const API = 'http://simulator.localhost/api/v1/s2s';
const ROUTE = 'base-usdc-to-bsc-usdc';
let sim: PartnerSimulator;
afterEach(() => sim?.close());

async function token(
  s: PartnerSimulator,
  form: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const response = await s.fetch(`${API}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { response, body: (await response.json()) as Record<string, unknown> };
}

async function bearer(
  s: PartnerSimulator,
  scope?: string,
  credentials = s.demo.credentials,
): Promise<string> {
  const { body } = await token(s, {
    grant_type: 'client_credentials',
    client_id: credentials.clientId,
    client_secret: credentials.clientSecret,
    ...(scope ? { scope } : {}),
  });
  return body.access_token as string;
}

async function call(s: PartnerSimulator, method: string, path: string, accessToken?: string, body?: unknown) {
  const response = await s.fetch(`${API}${path}`, {
    method,
    headers: {
      ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}),
      'content-type': 'application/json',
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { response, body: (await response.json()) as Record<string, any> };
}

/**
 * A quote of a literal amount (written into the JSON as it is, so that its digits reach the
 * simulator unrounded) for the demo user on `routeId`.
 */
function quoteOf(s: PartnerSimulator, accessToken: string, routeId: string) {
  return (amount: string) =>
    call(
      s,
      'POST',
      '/bridge/quote',
      accessToken,
      `{"userId":"${s.demo.userId}","routeId":"${routeId}","amount":${amount}}`,
    );
}

/** A pending transfer of 5 USDC for the demo user, built through the API. */
async function construct(s: PartnerSimulator) {
  const built = await call(s, 'POST', '/bridge/construct/transaction/batch', await bearer(s), {
    userId: s.demo.userId,
    routeId: ROUTE,
    amount: 5,
  });
  return built.body.data;
}

describe('simulator: token endpoint', () => {
  it('issues a token with expires_in, expanded scopes and Cache-Control: no-store', async () => {
    sim = createPartnerSimulator();
    const { response, body } = await token(sim, {
      grant_type: 'client_credentials',
      client_id: sim.demo.credentials.clientId,
      client_secret: sim.demo.credentials.clientSecret,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const scopes = (body.scope as string).split(' ');
    expect(scopes).toContain('bridge:read');
    expect(scopes).toContain('transactions:write');
    expect(scopes.some((scope) => scope.startsWith('all:'))).toBe(false);
  });

  it('takes JSON bodies and HTTP Basic', async () => {
    sim = createPartnerSimulator();
    const { clientId, clientSecret } = sim.demo.credentials;
    const json = await sim.fetch(`${API}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });
    expect(json.status).toBe(200);
    const encode = (v: string) => new URLSearchParams({ v }).toString().slice(2);
    const basic = await token(
      sim,
      { grant_type: 'client_credentials' },
      {
        authorization: `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`,
      },
    );
    expect(basic.response.status).toBe(200);
  });

  it('answers OAuth errors', async () => {
    sim = createPartnerSimulator();
    const { clientId, clientSecret } = sim.demo.credentials;
    expect((await token(sim, { client_id: clientId, client_secret: clientSecret })).body.error).toBe(
      'invalid_request',
    );
    expect(
      (await token(sim, { grant_type: 'password', client_id: clientId, client_secret: clientSecret })).body
        .error,
    ).toBe('unsupported_grant_type');
    const wrong = await token(sim, {
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: 'nope',
    });
    expect(wrong.response.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    const readOnly = sim.createCredential({ organisationId: sim.demo.organisationId, scopes: ['all:read'] });
    const scoped = (scope: string) =>
      token(sim, {
        grant_type: 'client_credentials',
        ...{ client_id: readOnly.clientId, client_secret: readOnly.clientSecret },
        scope,
      });
    expect((await scoped('transactions:write')).body.error).toBe('invalid_scope');
    expect((await scoped('all:write')).body.error).toBe('invalid_scope');
    expect((await scoped('all:read')).body.scope).not.toContain(':write');
    expect((await scoped('bridge:read')).body.scope).toBe('bridge:read');
  });

  it('intersects with the organisation, and withdraws at once', async () => {
    sim = createPartnerSimulator({ demo: false });
    const org = sim.createOrganisation({ scopes: ['bridge:read'] });
    const credential = sim.createCredential({
      organisationId: org,
      scopes: ['all:read', 'transactions:write'],
    });
    const accessToken = await bearer(sim, undefined, credential);
    expect((await call(sim, 'GET', '/me', accessToken)).body.data.scopes).toEqual(['bridge:read']);
    sim.withdrawOrganisationScope(org, 'bridge:read');
    expect((await call(sim, 'GET', '/bridge/routes', accessToken)).response.status).toBe(403);
  });

  it('expires tokens on its clock, and revokes or suspends at once', async () => {
    sim = createPartnerSimulator({ tokenTtlSec: 60 });
    const accessToken = await bearer(sim);
    expect((await call(sim, 'GET', '/me', accessToken)).response.status).toBe(200);
    sim.advanceClock(61_000);
    const expired = await call(sim, 'GET', '/me', accessToken);
    expect(expired.response.status).toBe(401);
    expect(expired.response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const fresh = await bearer(sim);
    sim.setOrganisationActive(sim.demo.organisationId, false);
    expect((await call(sim, 'GET', '/me', fresh)).response.status).toBe(401);
    sim.setOrganisationActive(sim.demo.organisationId, true);
    sim.revokeCredential(sim.demo.credentials.clientId);
    expect((await call(sim, 'GET', '/me', fresh)).response.status).toBe(401);
  });

  it('challenges a request without a token without naming an error', async () => {
    sim = createPartnerSimulator();
    const { response, body } = await call(sim, 'GET', '/me');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="partner"');
    expect(body).toMatchObject({
      statusCode: 401,
      error: 'Unauthorized',
      code: expect.any(String),
      message: expect.any(String),
    });
  });

  it('rotates a secret with a grace period', async () => {
    sim = createPartnerSimulator();
    const { clientId, clientSecret } = sim.demo.credentials;
    const { clientSecret: next } = sim.rotateCredential(clientId, { graceMs: 60_000 });
    const form = (secret: string) =>
      token(sim, { grant_type: 'client_credentials', client_id: clientId, client_secret: secret });
    expect((await form(clientSecret)).response.status).toBe(200);
    expect((await form(next)).response.status).toBe(200);
    sim.advanceClock(61_000);
    expect((await form(clientSecret)).response.status).toBe(401);
    expect((await form(next)).response.status).toBe(200);
  });
});

describe('simulator: bridge', () => {
  it('lists both directions with their own ids and decimals', async () => {
    sim = createPartnerSimulator();
    const { body } = await call(sim, 'GET', '/bridge/routes', await bearer(sim));
    const ids = body.data.map((r: { routeId: string }) => r.routeId);
    expect(ids).toEqual(['base-usdc-to-bsc-usdc', 'bsc-usdc-to-base-usdc']);
    expect(body.data[0].from.decimals).not.toBe(body.data[0].to.decimals);
  });

  it('validates bodies with VALIDATION_FAILED and every failure listed', async () => {
    sim = createPartnerSimulator();
    const { response, body } = await call(sim, 'POST', '/bridge/quote', await bearer(sim), { amount: -1 });
    expect(response.status).toBe(400);
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(body.errors.length).toBe(3);
    expect(body.message).toBe(body.errors.join('; '));
  });

  it('reads the amount digit for digit and keeps route bounds and pauses', async () => {
    sim = createPartnerSimulator();
    const accessToken = await bearer(sim);
    const quote = quoteOf(sim, accessToken, 'bsc-usdc-to-base-usdc');
    expect((await quote('1.123456789012345678')).body.data.amountInRaw).toBe('1123456789012345678');
    expect((await quote('0.5')).body.message).toContain('minimum');
    expect((await quote('50001')).body.message).toContain('maximum');
    sim.configureRoute('bsc-usdc-to-base-usdc', { paused: true });
    expect((await quote('5')).response.status).toBe(400);
    sim.configureRoute('bsc-usdc-to-base-usdc', { paused: false, providerFeeBps: 500n });
    const construct = await call(sim, 'POST', '/bridge/construct/transaction/batch', accessToken, {
      userId: sim.demo.userId,
      routeId: 'bsc-usdc-to-base-usdc',
      amount: 5,
    });
    expect(construct.response.status).toBe(503);
  });

  it('takes limits set in-process or through the admin API, and quotes within them only', async () => {
    sim = createPartnerSimulator();
    const accessToken = await bearer(sim);
    const quote = quoteOf(sim, accessToken, ROUTE);
    sim.configureRoute(ROUTE, { minAmountRaw: 5_000_000n, maxAmountRaw: 100_000_000n });
    expect((await quote('4')).body.message).toContain('minimum of 5');
    expect((await quote('101')).body.message).toContain('maximum of 100');
    expect((await quote('50')).response.status).toBe(200);
    // Over HTTP, raw amounts travel as decimal strings; a maximum below the minimum is refused.
    const admin = (body: unknown) =>
      sim!.fetch(`${sim!.baseUrl}${sim!.adminPath}/configureRoute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await admin({ routeId: ROUTE, change: { maxAmountRaw: '20000000' } })).status).toBe(200);
    expect((await quote('50')).body.message).toContain('maximum of 20');
    const refused = await admin({ routeId: ROUTE, change: { minAmountRaw: '9', maxAmountRaw: '1' } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { code: string }).code).toBe('VALIDATION_FAILED');
  });

  it('builds a batch whose hash is the EntryPoint v0.7 hash of its user operation', async () => {
    sim = createPartnerSimulator();
    const { body } = await call(sim, 'POST', '/bridge/construct/transaction/batch', await bearer(sim), {
      userId: sim.demo.userId,
      routeId: ROUTE,
      amount: 5,
    });
    const { bundle } = body.data;
    expect(bundle.calls.map((c: { data: string }) => c.data.slice(0, 10))).toEqual([
      '0x095ea7b3',
      '0xad5425c6',
      '0xa9059cbb',
    ]);
    expect(
      getUserOperationHash({
        chainId: bundle.chainId,
        entryPointAddress: bundle.entryPoint,
        entryPointVersion: '0.7',
        userOperation: userOperationForViem(bundle.userOp),
      } as never),
    ).toBe(bundle.userOpHash);
  });

  it('deposits through depositV3 when the route is configured so, and the SDK verifies and signs it', async () => {
    sim = createPartnerSimulator();
    sim.configureRoute(ROUTE, { depositFunction: 'depositV3' });
    const client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
    const route = (await client.bridge.routes()).find((r) => r.routeId === ROUTE)!;
    const built = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE, amount: '5' });
    expect(built.bundle.calls[1]!.data.slice(0, 10)).toBe('0x7b939232');
    const verified = verifyBridgeBatch({ route, construct: built, wallet: signer.address, amount: '5' });
    const signed = await signBridgeBatch({ verified, signer });
    await client.bridge.send({ userId: sim.demo.userId, intentId: built.intentId, ...signed });
    expect(sim.transfer(built.transferId).status).toBe('submitted');
    // And back: the current encoding.
    sim.configureRoute(ROUTE, { depositFunction: 'deposit' });
    expect((await construct(sim)).bundle.calls[1].data.slice(0, 10)).toBe('0xad5425c6');
    const wrong = thrown(() => sim.configureRoute(ROUTE, { depositFunction: 'deposit2' as never }));
    expect((wrong as ArgumentError).issues).toEqual([
      { path: 'change.depositFunction', message: expect.stringMatching(/deposit.*depositV3/) },
    ]);
  });

  it('spends an intent once, and not after its quote expired', async () => {
    sim = createPartnerSimulator();
    const accessToken = await bearer(sim);
    const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
    const build = async () =>
      (
        await call(sim, 'POST', '/bridge/construct/transaction/batch', accessToken, {
          userId: sim.demo.userId,
          routeId: ROUTE,
          amount: 5,
        })
      ).body.data;
    const first = await build();
    const signed = await signBridgeBatch({ unverifiedBundle: first.bundle, signer });
    const send = (intentId: string, extra: object = signed) =>
      call(sim, 'POST', '/bridge/transaction/batch/send', accessToken, {
        userId: sim.demo.userId,
        intentId,
        ...extra,
      });
    expect((await send(first.intentId, { signature: signed.signature })).body.code).toBe('VALIDATION_FAILED'); // authorization missing
    expect((await send(first.intentId)).response.status).toBe(200);
    expect((await send(first.intentId)).body.code).toBe('INTENT_NOT_FOUND');
    const late = await build();
    sim.advanceClock(121_000);
    const lateSigned = await signBridgeBatch({ unverifiedBundle: late.bundle, signer });
    expect((await send(late.intentId, lateSigned)).body.code).toBe('INTENT_NOT_FOUND');
    expect(sim.transfer(late.transferId).status).toBe('expired');
  });

  it('follows the state machine and posts callbacks with the exact transfer body', async () => {
    const delivered: unknown[] = [];
    sim = createPartnerSimulator({ callbacks: (body) => void delivered.push(body) });
    const accessToken = await bearer(sim);
    const built = (
      await call(sim, 'POST', '/bridge/construct/transaction/batch', accessToken, {
        userId: sim.demo.userId,
        routeId: ROUTE,
        amount: 5,
      })
    ).body.data;
    expect(() => sim.advance(built.transferId, 'delivered')).toThrow();
    sim.advance(built.transferId, 'submitted');
    sim.advance(built.transferId, 'failed', { failureReason: 'reverted' });
    const read = (
      await call(sim, 'GET', `/bridge/transfers/${built.transferId}?userId=${sim.demo.userId}`, accessToken)
    ).body.data;
    expect(delivered.at(-1)).toEqual(read);
    expect(read.failureReason).toBe('reverted');
  });

  it("hides another partner's users and transfers", async () => {
    sim = createPartnerSimulator();
    const other = sim.createOrganisation({ scopes: ['all:read', 'all:write'] });
    const otherCredential = sim.createCredential({
      organisationId: other,
      scopes: ['all:read', 'all:write'],
    });
    const built = await construct(sim);
    const stranger = await bearer(sim, undefined, otherCredential);
    expect(
      (await call(sim, 'GET', `/bridge/transfers/${built.transferId}?userId=${sim.demo.userId}`, stranger))
        .response.status,
    ).toBe(404);
    expect(
      (await call(sim, 'GET', `/bridge/transfers?userId=${sim.demo.userId}`, stranger)).response.status,
    ).toBe(404);
  });
});

/** What a call threw, for assertions on its type and message. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('simulator: caller mistakes are ArgumentErrors that say what is wrong', () => {
  const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

  it('fund names an unknown user, a negative amount and a number where a bigint belongs', () => {
    sim = createPartnerSimulator();
    const unknown = thrown(() => sim.fund('usr_nobody', 8453, USDC_BASE, 1n));
    expect(unknown).toBeInstanceOf(ArgumentError);
    expect((unknown as ArgumentError).message).toBe(
      'Invalid arguments to PartnerSimulator.fund: userId: no user "usr_nobody" in this simulator',
    );
    const before = sim.balance(sim.demo.userId, 8453, USDC_BASE);
    const negative = thrown(() => sim.fund(sim.demo.userId, 8453, USDC_BASE, -1n));
    expect((negative as ArgumentError).issues).toEqual([{ path: 'raw', message: 'must not be negative' }]);
    const number = thrown(() => sim.fund(sim.demo.userId, 8453, USDC_BASE, 5 as unknown as bigint));
    expect((number as ArgumentError).issues).toEqual([{ path: 'raw', message: 'must be a bigint' }]);
    // Every problem at once, and nothing changed.
    const all = thrown(() => sim.fund(sim.demo.userId, -1, 'usdc', -1n)) as ArgumentError;
    expect(all.issues.map((issue) => issue.path)).toEqual(['chainId', 'token', 'raw']);
    expect(sim.balance(sim.demo.userId, 8453, USDC_BASE)).toBe(before);
  });

  it('advance refuses a step backwards, an unknown state and an unknown transfer', async () => {
    sim = createPartnerSimulator();
    const built = await construct(sim);
    sim.advance(built.transferId, 'submitted');
    const backwards = thrown(() => sim.advance(built.transferId, 'pending'));
    expect(backwards).toBeInstanceOf(ArgumentError);
    expect((backwards as ArgumentError).message).toBe(
      'Invalid arguments to PartnerSimulator.advance: status: a transfer cannot go from submitted to pending: it can go to source_confirmed or failed',
    );
    const unknownState = thrown(() => sim.advance(built.transferId, 'teleported')) as ArgumentError;
    expect(unknownState).toBeInstanceOf(ArgumentError);
    expect(unknownState.issues[0]).toMatchObject({
      path: 'status',
      message: expect.stringMatching(/^must be one of pending, submitted/),
    });
    sim.advance(built.transferId, 'failed');
    expect((thrown(() => sim.advance(built.transferId, 'delivered')) as Error).message).toContain(
      'failed is final',
    );
    expect(thrown(() => sim.transfer('brt_nothing'))).toBeInstanceOf(ArgumentError);
    expect(sim.transfer(built.transferId).status).toBe('failed');
  });

  it('configureRoute and the options refuse mistyped fees and misspelt keys', () => {
    sim = createPartnerSimulator();
    const fee = thrown(() =>
      sim.configureRoute(ROUTE, { gasFeeRaw: 120_000 as unknown as bigint, providerFeeBps: 20_000n }),
    ) as ArgumentError;
    expect(fee.issues.map((issue) => issue.path)).toEqual(['change.gasFeeRaw', 'change.providerFeeBps']);
    expect(sim.routes().find((route) => route.routeId === ROUTE)).toBeDefined();
    const typo = thrown(() => createPartnerSimulator({ autoAdvanced: true } as never));
    expect(typo).toBeInstanceOf(ArgumentError);
    expect((typo as ArgumentError).message).toContain('autoAdvanced');
  });

  it('buildBridgeBundle names a negative amount and a number where a bigint belongs', () => {
    sim = createPartnerSimulator();
    const error = thrown(() =>
      buildBridgeBundle({
        route: sim.routes()[0]!,
        wallet: sim.demo.wallet.address,
        amountInRaw: -1n,
        amountOutRaw: 25 as unknown as bigint,
        gasFeeRaw: 0n,
        quoteTimestamp: 1_800_000_000,
        fillDeadline: 1_800_003_600,
        authorizationNonce: 0,
      }),
    );
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as ArgumentError).issues).toEqual([
      { path: 'amountInRaw', message: 'must not be negative' },
      { path: 'amountOutRaw', message: 'must be a bigint' },
    ]);
  });

  it('fetch rejects what no fetch could send with an ArgumentError instead of hanging', async () => {
    sim = createPartnerSimulator();
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('hostile');
        },
      },
    );
    await expect(sim.fetch(hostile as never)).rejects.toBeInstanceOf(ArgumentError);
    await expect(sim.fetch('not a url')).rejects.toBeInstanceOf(ArgumentError);
    const broken = new ReadableStream({
      pull() {
        throw new Error('the body broke');
      },
    });
    await expect(
      sim.fetch(`${API}/auth/token`, { method: 'POST', body: broken, duplex: 'half' } as RequestInit),
    ).rejects.toBeInstanceOf(ArgumentError);
  });
});

describe('paths the simulator does not serve', () => {
  /** What a partner's HTTP client sees: status, the headers that matter, and the JSON body. */
  async function seen(response: Response) {
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      allow: response.headers.get('allow'),
      type: response.headers.get('content-type'),
      body: (await response.json()) as Record<string, unknown>,
    };
  }
  const envelope = (statusCode: number, error: string, code: string) => ({
    statusCode,
    error,
    code,
    message: expect.any(String),
  });

  /** The same checks on `sim.fetch` and over the simulator's HTTP server. */
  async function answers(fetch: typeof globalThis.fetch, base: string, accessToken: string) {
    const send = (method: string, path: string, token?: string) =>
      fetch(`${base}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} }).then(
        seen,
      );
    const api = '/api/v1/s2s';
    for (const path of ['/users', '/portfolio/usr_1/balances', '/bridge/routes/extra', '', '/']) {
      // Without a token the service reveals nothing, not even whether the path exists.
      expect(await send('GET', `${api}${path}`)).toEqual({
        status: 401,
        challenge: 'Bearer realm="partner"',
        allow: null,
        type: 'application/json',
        body: envelope(401, 'Unauthorized', 'UNAUTHORIZED'),
      });
      const rejected = await send('GET', `${api}${path}`, 'at_not-a-token');
      expect([rejected.status, rejected.challenge]).toEqual([
        401,
        expect.stringContaining('error="invalid_token"'),
      ]);
      expect(await send('GET', `${api}${path}`, accessToken)).toEqual({
        status: 404,
        challenge: null,
        allow: null,
        type: 'application/json',
        body: envelope(404, 'Not Found', 'NOT_FOUND'),
      });
    }
    // A known path and another method: 405 naming the methods it takes, after the token check.
    for (const [method, path, allow] of [
      ['POST', '/bridge/routes', 'GET'],
      ['GET', '/bridge/quote', 'POST'],
      ['DELETE', '/bridge/transfers/brt_1?userId=usr_1', 'GET'],
      ['PUT', '/me', 'GET'],
    ] as const) {
      expect((await send(method, `${api}${path}`)).status).toBe(401);
      expect(await send(method, `${api}${path}`, accessToken)).toEqual({
        status: 405,
        challenge: null,
        allow,
        type: 'application/json',
        body: envelope(405, 'Method Not Allowed', 'METHOD_NOT_ALLOWED'),
      });
    }
    // The token endpoint answers in the OAuth shape, whatever the mistake.
    const token = await fetch(`${base}${api}/auth/token`);
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(await seen(token)).toMatchObject({
      status: 405,
      allow: 'POST',
      body: { error: 'invalid_request', error_description: expect.any(String) },
    });
    // Outside the prefix nothing is the service's: a 404, token or not, and no challenge.
    for (const path of ['/elsewhere', '/api/v1/s2sx/me', '/api/v2/s2s/me', '/api/v1']) {
      for (const given of [undefined, accessToken])
        expect(await send('GET', path, given)).toEqual({
          status: 404,
          challenge: null,
          allow: null,
          type: 'application/json',
          body: envelope(404, 'Not Found', 'NOT_FOUND'),
        });
    }
  }

  it('answers as the service: 401 without a valid token, then 404, or 405 with Allow', async () => {
    sim = createPartnerSimulator();
    await answers(sim.fetch, 'http://simulator.localhost', await bearer(sim));
  });

  it('answers the same over its HTTP server', async () => {
    sim = createPartnerSimulator();
    const server = await sim.listen();
    try {
      await answers(globalThis.fetch, server.url, await bearer(sim));
    } finally {
      await server.close();
    }
  });

  it('names the method its admin API takes on a 405, as the partner API does', async () => {
    sim = createPartnerSimulator();
    const admin = `${sim.baseUrl}${sim.adminPath}`;
    const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };
    expect(await seen(await sim.fetch(`${admin}/callbacks`, post))).toMatchObject({
      status: 405,
      allow: 'GET',
      body: envelope(405, 'Method Not Allowed', 'METHOD_NOT_ALLOWED'),
    });
    expect(await seen(await sim.fetch(`${admin}/fund`))).toMatchObject({ status: 405, allow: 'POST' });
  });

  it('answers an unknown path 404 even to a token without any scope the path could need', async () => {
    sim = createPartnerSimulator();
    const org = sim.createOrganisation({ scopes: ['rates:read'] });
    const credential = sim.createCredential({ organisationId: org, scopes: ['rates:read'] });
    const narrow = await bearer(sim, undefined, credential);
    expect((await call(sim, 'GET', '/rates', narrow)).body).toMatchObject({
      statusCode: 404,
      code: 'NOT_FOUND',
    });
    expect((await call(sim, 'GET', '/bridge/routes', narrow)).response.status).toBe(403);
    expect((await call(sim, 'POST', '/bridge/routes', narrow)).response.status).toBe(405);
  });
});
