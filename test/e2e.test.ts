import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type AuthenticationError,
  InsufficientBalanceError,
  IntentNotFoundError,
  InvalidClientError,
  InvalidScopeError,
  NotFoundError,
  openApiDocument,
  PartnerClient,
  PermissionDeniedError,
  ServiceUnavailableError,
  signBridgeBatch,
  UserNotFoundError,
  ValidationFailedError,
  verifyBridgeBatch,
  WalletNotLinkedError,
} from '../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../src/testing/index.js';
import { OpenApiChecker } from './helpers/openapi.js';

const ROUTE = 'base-usdc-to-bsc-usdc';
let sim: PartnerSimulator;

// Every request the SDK sends, every answer the simulator gives and every callback body it delivers
// is held against the package's OpenAPI document: the document describes the service as it answers.
const DOCUMENT = openApiDocument();
let openApi: OpenApiChecker;
beforeEach(() => {
  openApi = new OpenApiChecker(DOCUMENT);
});
afterEach(() => {
  expect(openApi.problems).toEqual([]);
  expect(openApi.checked).toBeGreaterThan(0);
});

function clientFor(s: PartnerSimulator, extra: Partial<ConstructorParameters<typeof PartnerClient>[0]> = {}) {
  return new PartnerClient({
    baseUrl: s.baseUrl,
    ...s.demo.credentials,
    fetch: openApi.wrap(s.fetch),
    strict: true,
    ...extra,
  });
}

afterEach(() => sim?.close());

describe('the SDK against the simulator', () => {
  it('runs the whole bridge flow: execute, state changes, callbacks, wait', async () => {
    const bodies: unknown[] = [];
    sim = createPartnerSimulator({
      callbacks: (body) => {
        bodies.push(body);
        openApi.callback(body);
      },
    });
    const client = clientFor(sim);
    const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
    const { transferId, summary } = await client.bridge.execute({
      userId: sim.demo.userId,
      routeId: ROUTE,
      amount: '25.5',
      signer,
    });
    expect(summary.destination).toMatchObject({ chainId: 56, decimals: 18 });
    expect((await client.bridge.transfers.get({ userId: sim.demo.userId, transferId })).status).toBe(
      'submitted',
    );

    sim.advance(transferId, 'source_confirmed');
    const waiting = client.bridge.transfers.wait(
      { userId: sim.demo.userId, transferId },
      { pollIntervalMs: 5 },
    );
    sim.advance(transferId, 'delivered');
    const final = await waiting;
    expect(final.status).toBe('delivered');
    expect(final.dstTxHash).toMatch(/^0x/);
    expect(bodies.map((body) => (body as { status: string }).status)).toEqual([
      'submitted',
      'source_confirmed',
      'delivered',
    ]);
    expect(bodies.at(-1)).toEqual(final);
    // 25.5 + 0.12 gas fee left the wallet.
    expect(sim.balance(sim.demo.userId, 8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913')).toBe(
      1_000_000_000n - 25_620_000n,
    );
  });

  it('asks for an authorization only until the wallet is delegated', async () => {
    sim = createPartnerSimulator();
    const client = clientFor(sim);
    const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
    const first = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE, amount: '5' });
    expect(first.bundle.authorization).toMatchObject({ chainId: 8453, nonce: 0 });
    const signed = await signBridgeBatch({ unverifiedBundle: first.bundle, signer });
    await client.bridge.send({ userId: sim.demo.userId, intentId: first.intentId, ...signed });
    const second = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE, amount: '5' });
    expect(second.bundle.authorization).toBeNull();
    const route = (await client.bridge.routes()).find((r) => r.routeId === ROUTE)!;
    await verifyBridgeBatch({ route, construct: second, wallet: signer.address, amount: '5' });
  });

  it('rejects a submit signed by another key and a repeated submit', async () => {
    sim = createPartnerSimulator();
    const client = clientFor(sim);
    const built = await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE, amount: '5' });
    const stranger = privateKeyToAccount(`0x${'42'.repeat(32)}`);
    const forged = await signBridgeBatch({ unverifiedBundle: built.bundle, signer: stranger });
    await expect(
      client.bridge.send({ userId: sim.demo.userId, intentId: built.intentId, ...forged }),
    ).rejects.toBeInstanceOf(ValidationFailedError);
    const signed = await signBridgeBatch({
      unverifiedBundle: built.bundle,
      signer: privateKeyToAccount(sim.demo.wallet.privateKey),
    });
    const sent = await client.bridge.send({ userId: sim.demo.userId, intentId: built.intentId, ...signed });
    // Spent: the SDK reads the transfer, sees it submitted, and reports the submit instead of failing.
    const again = await client.bridge.send({ userId: sim.demo.userId, intentId: built.intentId, ...signed });
    expect(again).toEqual(sent);
    // A client that did not build the intent gets the service's answer.
    await expect(
      clientFor(sim).bridge.send({ userId: sim.demo.userId, intentId: built.intentId, ...signed }),
    ).rejects.toBeInstanceOf(IntentNotFoundError);
  });

  it('answers the specified errors', async () => {
    sim = createPartnerSimulator();
    const client = clientFor(sim);
    const other = sim.createOrganisation({ scopes: ['all:read', 'all:write'] });
    const foreign = sim.createUser({ organisationId: other });
    const walletless = sim.createUser({ organisationId: sim.demo.organisationId, wallet: false });
    const poor = sim.createUser({ organisationId: sim.demo.organisationId });
    await expect(
      client.bridge.quote({ userId: foreign.userId, routeId: ROUTE, amount: '5' }),
    ).rejects.toBeInstanceOf(UserNotFoundError);
    await expect(
      client.bridge.construct({ userId: walletless.userId, routeId: ROUTE, amount: '5' }),
    ).rejects.toBeInstanceOf(WalletNotLinkedError);
    const short = (await client.bridge
      .construct({ userId: poor.userId, routeId: ROUTE, amount: '5' })
      .catch((e: unknown) => e)) as InsufficientBalanceError;
    expect(short).toBeInstanceOf(InsufficientBalanceError);
    expect(short.required).toBe(5_120_000n);
    expect(short.shortfall).toBe(5_120_000n);
    await expect(
      client.bridge.quote({ userId: sim.demo.userId, routeId: 'nowhere', amount: '5' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    sim.configureRoute(ROUTE, { reachable: false });
    expect((await client.bridge.routes()).find((r) => r.routeId === ROUTE)!.limits).toBeNull();
    await expect(
      client.bridge.quote({ userId: sim.demo.userId, routeId: ROUTE, amount: '5' }, { maxRetries: 0 }),
    ).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it('bridges the whole balance less the gas fee with maxAmount', async () => {
    sim = createPartnerSimulator();
    const client = clientFor(sim);
    const user = sim.createUser({ organisationId: sim.demo.organisationId });
    sim.fund(user.userId, 8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 10_000_000n);
    const built = await client.bridge.construct({ userId: user.userId, routeId: ROUTE, maxAmount: true });
    expect(built.quote.amountInRaw).toBe('9880000');
    const estimate = await client.bridge.feeEstimate({ routeId: ROUTE, amount: '10' });
    expect(estimate.finalAmount).toBe('9.88');
  });

  it('enforces scopes, narrow tokens, revocation and suspension', async () => {
    sim = createPartnerSimulator();
    const readOnly = sim.createCredential({ organisationId: sim.demo.organisationId, scopes: ['all:read'] });
    const reader = new PartnerClient({ baseUrl: sim.baseUrl, ...readOnly, fetch: openApi.wrap(sim.fetch) });
    expect((await reader.me()).scopes).toContain('bridge:read');
    expect((await reader.me()).scopes).not.toContain('transactions:write');
    const denied = (await reader.bridge
      .construct({ userId: sim.demo.userId, routeId: ROUTE, amount: '5' })
      .catch((e: unknown) => e)) as PermissionDeniedError;
    expect(denied).toBeInstanceOf(PermissionDeniedError);
    expect(denied.message).toContain('transactions:write');

    const narrow = clientFor(sim, { scope: ['bridge:read'] });
    expect(await narrow.getScopes()).toEqual(['bridge:read']);
    await expect(clientFor(sim, { scope: ['users:write'], strict: false }).getScopes()).resolves.toContain(
      'users:write',
    );
    await expect(
      new PartnerClient({
        baseUrl: sim.baseUrl,
        ...readOnly,
        fetch: openApi.wrap(sim.fetch),
        scope: 'all:write',
      }).getScopes(),
    ).rejects.toBeInstanceOf(InvalidScopeError);

    const client = clientFor(sim);
    await client.bridge.routes();
    sim.revokeCredential(sim.demo.credentials.clientId);
    const stopped = (await client.bridge.routes().catch((e: unknown) => e)) as AuthenticationError;
    expect(stopped).toBeInstanceOf(InvalidClientError);
  });

  it('drops a withdrawn organisation scope from live tokens at once', async () => {
    sim = createPartnerSimulator();
    const client = clientFor(sim);
    await client.bridge.routes();
    sim.withdrawOrganisationScope(sim.demo.organisationId, 'all:read');
    await expect(client.bridge.routes()).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it('pages through a user history with cursors', async () => {
    sim = createPartnerSimulator();
    const client = clientFor(sim);
    for (let i = 0; i < 7; i++)
      await client.bridge.construct({ userId: sim.demo.userId, routeId: ROUTE, amount: '1' });
    const ids: string[] = [];
    for await (const transfer of client.bridge.transfers.list({ userId: sim.demo.userId, limit: 3 }))
      ids.push(transfer.transferId);
    expect(ids).toHaveLength(7);
    expect(new Set(ids).size).toBe(7);
    const pending = await client.bridge.transfers.list({ userId: sim.demo.userId, status: 'delivered' });
    expect(pending.data).toEqual([]);
  });

  it('works over real HTTP on 127.0.0.1 with Basic client authentication', async () => {
    sim = createPartnerSimulator({ autoAdvance: { sourceConfirmedMs: 5, deliveredMs: 5 } });
    const server = await sim.listen();
    try {
      const client = new PartnerClient({
        baseUrl: server.url,
        ...sim.demo.credentials,
        clientAuth: 'basic',
        strict: true,
        fetch: openApi.wrap(globalThis.fetch),
      });
      const signer = privateKeyToAccount(sim.demo.wallet.privateKey);
      const { transferId } = await client.bridge.execute({
        userId: sim.demo.userId,
        routeId: ROUTE,
        amount: '1.000001',
        signer,
      });
      const final = await client.bridge.transfers.wait(
        { userId: sim.demo.userId, transferId },
        { pollIntervalMs: 5 },
      );
      expect(final.status).toBe('delivered');
    } finally {
      await server.close();
    }
  });
});
