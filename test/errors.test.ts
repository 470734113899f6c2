import { generatePrivateKey } from 'viem/accounts';
import { describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  type BridgeSigner,
  ConflictError,
  ConnectionError,
  InsufficientBalanceError,
  IntentNotFoundError,
  InternalServerError,
  isApiError,
  isPartnerError,
  NotFoundError,
  PartnerClient,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  SigningError,
  SubmitOutcomeUnknownError,
  signBridgeBatch,
  UserNotFoundError,
  ValidationFailedError,
  WalletNotLinkedError,
} from '../src/index.js';
import { validConstruct } from './helpers/batches.js';
import { account, bridgeService } from './helpers/bridge-service.js';
import { envelopeError, type Handler, json, makeClient, mockService } from './helpers/mock-fetch.js';
import { freePort } from './helpers/spawn-server.js';

function failWith(response: () => Response, scope = 'bridge:read') {
  const service = mockService({
    scope,
    routes: { 'GET /bridge/routes': response, 'POST /bridge/construct/transaction/batch': response },
  });
  return { service, client: makeClient(service, { maxRetries: 0 }) };
}

async function errorOf(response: () => Response): Promise<unknown> {
  return failWith(response)
    .client.bridge.routes()
    .catch((e: unknown) => e);
}

describe('error classes', () => {
  it('VALIDATION_FAILED carries every failure', async () => {
    const error = await errorOf(() =>
      envelopeError(400, 'VALIDATION_FAILED', 'amount must be positive; userId is required', {
        errors: ['amount must be positive', 'userId is required'],
      }),
    );
    expect(error).toBeInstanceOf(ValidationFailedError);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as ValidationFailedError).errors).toEqual([
      'amount must be positive',
      'userId is required',
    ]);
    expect((error as ValidationFailedError).code).toBe('VALIDATION_FAILED');
    expect((error as ValidationFailedError).status).toBe(400);
  });

  it('INSUFFICIENT_BALANCE carries the token and bigint figures', async () => {
    const error = await errorOf(() =>
      envelopeError(400, 'INSUFFICIENT_BALANCE', 'wallet holds too little', {
        token: { address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', symbol: 'USDC', decimals: 6 },
        required: '25620000',
        available: '25000000',
        shortfall: '620000',
      }),
    );
    expect(error).toBeInstanceOf(InsufficientBalanceError);
    const balance = error as InsufficientBalanceError;
    expect(balance.token).toEqual({
      address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      symbol: 'USDC',
      decimals: 6,
    });
    expect(balance.required).toBe(25_620_000n);
    expect(balance.available).toBe(25_000_000n);
    expect(balance.shortfall).toBe(620_000n);
    expect(JSON.parse(JSON.stringify(balance))).toMatchObject({ required: '25620000', shortfall: '620000' });
  });

  it('an INSUFFICIENT_BALANCE without its figures still is a typed 400 with the code', async () => {
    const error = await errorOf(() => envelopeError(400, 'INSUFFICIENT_BALANCE', 'short', { required: 1.5 }));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).not.toBeInstanceOf(InsufficientBalanceError);
    expect(isApiError(error, 'INSUFFICIENT_BALANCE')).toBe(true);
  });

  it.each([
    ['WALLET_NOT_LINKED', 400, WalletNotLinkedError],
    ['INTENT_NOT_FOUND', 400, IntentNotFoundError],
    ['USER_NOT_FOUND', 404, UserNotFoundError],
  ] as const)('%s becomes its own class', async (code, status, Class) => {
    const error = await errorOf(() => envelopeError(status, code, 'x'));
    expect(error).toBeInstanceOf(Class);
    expect((error as ApiError).code).toBe(code);
  });

  it('chooses by code before status', async () => {
    const error = await errorOf(() => envelopeError(422, 'INTENT_NOT_FOUND', 'spent'));
    expect(error).toBeInstanceOf(IntentNotFoundError);
    expect((error as ApiError).status).toBe(422);
  });

  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [429, RateLimitError],
    [503, ServiceUnavailableError],
    [500, InternalServerError],
    [502, InternalServerError],
    [418, ApiError],
  ] as const)('an unknown code with status %i falls back to %s and keeps the code', async (status, Class) => {
    const error = await errorOf(() => envelopeError(status, 'SOMETHING_NEW', 'new failure', { hint: 'h' }));
    expect(error).toBeInstanceOf(Class);
    expect((error as ApiError).code).toBe('SOMETHING_NEW');
    expect((error as ApiError).details).toEqual({ hint: 'h' });
    expect((error as ApiError).message).toContain('new failure');
  });

  it('an HTML error page still gets its status class', async () => {
    const error = await errorOf(
      () =>
        new Response('<html>Bad gateway</html>', { status: 404, headers: { 'content-type': 'text/html' } }),
    );
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as ApiError).code).toBeUndefined();
  });

  it('a 3xx is an error that says it was not followed', async () => {
    const redirect = await errorOf(() => new Response(null, { status: 308, headers: { location: '/x' } }));
    expect(redirect).toBeInstanceOf(ApiError);
    expect((redirect as ApiError).status).toBe(308);
    expect((redirect as ApiError).message).toContain('not followed');
  });

  it('parses the WWW-Authenticate challenge', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/routes': () =>
          json({ statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message: 'no token' }, 401, {
            'www-authenticate':
              'Bearer realm="partner", error="invalid_token", error_description="The token \\"x\\" expired"',
          }),
      },
    });
    const error = (await makeClient(service)
      .bridge.routes()
      .catch((e: unknown) => e)) as AuthenticationError;
    expect(error.challenge).toEqual({
      scheme: 'Bearer',
      error: 'invalid_token',
      errorDescription: 'The token "x" expired',
    });
    expect(error.invalidToken).toBe(true);

    const bare = mockService({
      routes: {
        'GET /bridge/routes': () =>
          json({ statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED', message: 'no token' }, 401, {
            'www-authenticate': 'Bearer',
          }),
      },
    });
    const plain = (await makeClient(bare)
      .bridge.routes()
      .catch((e: unknown) => e)) as AuthenticationError;
    expect(plain.challenge).toEqual({ scheme: 'Bearer' });
    expect(plain.invalidToken).toBe(false);
  });

  it('a 403 names the scopes the endpoint needs and those the token holds', async () => {
    const { client } = failWith(
      () => envelopeError(403, 'FORBIDDEN', 'insufficient scope'),
      'bridge:read users:read',
    );
    const error = (await client.bridge
      .construct({ userId: 'u', routeId: 'r', amount: '1' })
      .catch((e: unknown) => e)) as PermissionDeniedError;
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error.message).toContain('bridge:read and transactions:write');
    expect(error.message).toContain('bridge:read, users:read');
    expect(error.requiredScopes).toEqual(['bridge:read', 'transactions:write']);
    expect(error.grantedScopes).toEqual(['bridge:read', 'users:read']);
  });

  it('keeps the request id', async () => {
    const error = (await errorOf(() =>
      envelopeError(404, 'NOT_FOUND', 'x', {}, { 'x-request-id': 'req_42' }),
    )) as ApiError;
    expect(error.requestId).toBe('req_42');
  });
});

describe('guards', () => {
  it('narrow by code', async () => {
    const error = await errorOf(() => envelopeError(400, 'WALLET_NOT_LINKED', 'x'));
    expect(isPartnerError(error)).toBe(true);
    expect(isApiError(error)).toBe(true);
    expect(isApiError(error, 'WALLET_NOT_LINKED')).toBe(true);
    expect(isApiError(error, 'INTENT_NOT_FOUND')).toBe(false);
    expect(isPartnerError(new Error('x'))).toBe(false);
    expect(isApiError({ code: 'WALLET_NOT_LINKED' })).toBe(false);
    expect(isPartnerError(null)).toBe(false);
  });

  it('answer false for a value whose reads throw, instead of throwing', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new TypeError('trap');
        },
      },
    );
    expect(isPartnerError(hostile)).toBe(false);
    expect(isApiError(hostile, 'X')).toBe(false);
    // A look-alike carrying both brands whose `code` getter throws is not an API error either.
    const branded = {
      [Symbol.for('partner-s2s-sdk.error')]: true,
      [Symbol.for('partner-s2s-sdk.api-error')]: true,
      get code(): string {
        throw new TypeError('getter');
      },
    };
    expect(isApiError(branded, 'X')).toBe(false);
  });

  it('work across two copies of the package', async () => {
    vi.resetModules();
    // A second module instance stands for a second copy of the package (bundled twice, ESM beside CJS).
    const copy = await import('../src/index.js');
    expect(copy.ApiError).not.toBe(ApiError);
    const foreign = new copy.IntentNotFoundError({
      status: 400,
      method: 'POST',
      path: '/x',
      code: 'INTENT_NOT_FOUND',
      message: 'm',
    });
    expect(foreign).not.toBeInstanceOf(ApiError);
    expect(isPartnerError(foreign)).toBe(true);
    expect(isApiError(foreign, 'INTENT_NOT_FOUND')).toBe(true);
    const local = await errorOf(() => envelopeError(400, 'X', 'x'));
    expect(copy.isApiError(local, 'X')).toBe(true);
    expect(copy.isPartnerError(new copy.ArgumentError({ where: 'x', issues: [] }))).toBe(true);
    expect(isApiError(new copy.ArgumentError({ where: 'x', issues: [] }))).toBe(false);
  });
});

describe('a 404 names the ids the call sent', () => {
  it('transfers.get and quote: which transfer, user or route may be missing', async () => {
    const service = mockService({
      routes: {
        'GET /bridge/transfers/tr_missing': () => envelopeError(404, 'NOT_FOUND', 'no such transfer'),
        'POST /bridge/quote': () => envelopeError(404, 'USER_NOT_FOUND', 'no such user'),
      },
    });
    const client = makeClient(service);
    const missing = await client.bridge.transfers
      .get({ userId: 'usr_1', transferId: 'tr_missing' })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ ids: { userId: 'usr_1', transferId: 'tr_missing' } });
    expect((missing as Error).message).toContain('transferId tr_missing');
    const nobody = await client.bridge
      .quote({ userId: 'usr_gone', routeId: 'r1', amount: '1' })
      .catch((e: unknown) => e);
    expect(nobody).toBeInstanceOf(UserNotFoundError);
    expect(nobody).toMatchObject({ ids: { userId: 'usr_gone', routeId: 'r1' } });
    expect((nobody as Error).message).toContain('userId usr_gone');
  });
});

describe('a wrapping error says why: its message ends with the reason of its root cause', () => {
  const key = generatePrivateKey();
  /** A signer whose KMS refuses, quoting the key it was configured with, as a careless one might. */
  const refusing = (address: string): BridgeSigner => ({
    address,
    signMessage: async () => {
      throw Object.assign(new Error(`KMSAccessDenied: key ${key} is disabled\n    at kms.sign`), {
        code: 'AccessDenied',
      });
    },
    signAuthorization: (request) => account.signAuthorization(request),
  });

  it("bridge.execute with a throwing signer: the SigningError ends with the signer's reason, never its key", async () => {
    const execute = makeClient(bridgeService()).bridge.execute({
      userId: 'user-1',
      routeId: 'base-usdc-to-bsc-usdc',
      amount: '25.5',
      signer: refusing(account.address),
    });
    const error = (await execute.catch((e: unknown) => e)) as SigningError;
    expect(error).toBeInstanceOf(SigningError);
    expect(error.message).toMatch(
      /^The signer failed to sign the user operation: AccessDenied: KMSAccessDenied: key \[redacted\] is disabled$/,
    );
    // The chain stays: the signer's own error is the cause, as it threw it.
    expect((error.cause as Error).message).toContain('KMSAccessDenied');
  });

  it('signBridgeBatch: no key in the message, JSON or stack, with or without 0x, and a long reason is capped', async () => {
    const bare = key.slice(2);
    for (const shown of [key, bare, `${'x'.repeat(500)} ${bare}`]) {
      const signer: BridgeSigner = {
        address: account.address,
        signMessage: async () => {
          throw new Error(`signing failed for ${shown}`);
        },
      };
      const error = (await signBridgeBatch({
        unverifiedBundle: validConstruct({ authorizationNonce: null }).bundle,
        signer,
      }).catch((e: unknown) => e)) as SigningError;
      expect(error).toBeInstanceOf(SigningError);
      expect(error.message).toMatch(/^The signer failed to sign the user operation: signing failed for /);
      for (const text of [error.message, JSON.stringify(error), String(error.stack)])
        expect(text.toLowerCase()).not.toContain(bare.toLowerCase());
      expect(error.message.length).toBeLessThan(400);
    }
  });

  it('a bearer token or a JWT a signer puts in its message is masked', async () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwYXJ0bmVyIn0.c2lnbmF0dXJlLXZhbHVl';
    const signer: BridgeSigner = {
      address: account.address,
      signMessage: async () => {
        throw new TypeError(`KMS said 401 to Bearer abc.def-ghi and to ${jwt}`);
      },
    };
    const error = (await signBridgeBatch({
      unverifiedBundle: validConstruct({ authorizationNonce: null }).bundle,
      signer,
    }).catch((e: unknown) => e)) as SigningError;
    expect(error.message).toMatch(/: TypeError: KMS said 401 to Bearer \[redacted\] and to \[redacted\]$/);
    expect(error.message).not.toContain('abc.def-ghi');
    expect(error.message).not.toContain(jwt);
  });

  it('a connection refused: the ConnectionError names ECONNREFUSED and where, never the credential', async () => {
    const port = await freePort();
    const clientSecret = 'a-secret-of-the-client-0123';
    const client = new PartnerClient({
      baseUrl: `http://127.0.0.1:${port}`,
      clientId: 'c',
      clientSecret,
      maxRetries: 0,
    });
    const error = (await client.bridge.routes().catch((e: unknown) => e)) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toMatch(
      new RegExp(
        `^Connection error on POST /auth/token: ECONNREFUSED: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`,
      ),
    );
    expect(JSON.stringify(error)).not.toContain(clientSecret);
  });

  it('through a chain: the submit whose connection broke says why once, and each cause is kept', async () => {
    const service = mockService({
      routes: {
        'POST /bridge/transaction/batch/send': () => {
          throw new TypeError('socket hang up');
        },
      },
    });
    const error = (await makeClient(service, { maxRetries: 0 })
      .bridge.send({ userId: 'user-1', intentId: 'int_1', signature: `0xff00${'11'.repeat(64)}1b` })
      .catch((e: unknown) => e)) as SubmitOutcomeUnknownError;
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(error.message).toBe(
      'The outcome of submitting intent int_1 is unknown; check transfer (unknown) before rebuilding: TypeError: socket hang up',
    );
    const connection = error.cause as ConnectionError;
    expect(connection).toBeInstanceOf(ConnectionError);
    expect(connection.message).toBe(
      'Connection error on POST /bridge/transaction/batch/send: TypeError: socket hang up',
    );
    expect(connection.cause).toMatchObject({ name: 'TypeError', message: 'socket hang up' });
  });

  it('a message that already ends with the reason does not say it twice', () => {
    const cause = new Error('HSM offline');
    expect(new SigningError({ message: 'the signer failed: HSM offline', cause }).message).toBe(
      'the signer failed: HSM offline',
    );
    expect(new SigningError({ message: 'the signer failed', cause }).message).toBe(
      'the signer failed: HSM offline',
    );
  });
});

describe('a very short secret is masked only as a whole token', () => {
  const shortSecret = (routes: Record<string, Handler>, fetch?: typeof globalThis.fetch) => {
    const service = mockService({ routes });
    return new PartnerClient({
      baseUrl: 'https://partner.test',
      clientId: 'c',
      clientSecret: 'b',
      maxRetries: 0,
      fetch: fetch ?? service.fetch,
    });
  };

  it('a server that answers `bad port` and echoes the secret: `bad port` stays, the secret is masked', async () => {
    const client = shortSecret({
      'GET /bridge/routes': () =>
        envelopeError(500, 'INTERNAL', 'bad port for client_secret=b (b), body client_secret%3Db%26x'),
    });
    const error = (await client.bridge.routes().catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.message).toBe(
      'GET /bridge/routes: bad port for client_secret=[redacted] ([redacted]), body client_secret%3D[redacted]%26x [INTERNAL]',
    );
  });

  it('a connection error whose cause says `bad port`: kept in the message, the secret masked', async () => {
    const service = mockService();
    const fetch = async (input: Request | URL | string, init?: RequestInit) => {
      const request = new Request(input, init);
      if (request.url.endsWith('/bridge/routes')) throw new TypeError('bad port: b');
      return service.fetch(request);
    };
    const error = (await shortSecret({}, fetch)
      .bridge.routes()
      .catch((e: unknown) => e)) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toBe('Connection error on GET /bridge/routes: TypeError: bad port: [redacted]');
    expect((error.cause as Error).message).toBe('bad port: [redacted]');
  });
});
