/**
 * How each typed error looks, and what to do about it. Runs on the embedded simulator.
 *
 *   node --import tsx examples/errors.ts
 */
import assert from 'node:assert/strict';
import {
  InsufficientBalanceError,
  isApiError,
  isPartnerError,
  PartnerClient,
  verifyBridgeBatch,
} from 'partner-s2s-sdk';
import { connect, say } from './setup.js';

const { client, userId, signer, sim, close } = await connect();

/** Runs a call that must fail with a typed error, and shows what the error says. */
async function show(title: string, advice: string, run: () => unknown): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!isPartnerError(error)) throw error;
    assert.ok(error.message.length > 0);
    const extra = isApiError(error) ? ` status ${error.status}, code ${error.code ?? '—'}` : '';
    say(`${title}\n  ${error.name}${extra}\n  ${error.message}`);
    if (error instanceof InsufficientBalanceError)
      say(`  short by ${error.shortfall} base units of ${error.token.symbol}`);
    say(`  → ${advice}\n`);
    return;
  }
  assert.fail(`${title}: the call did not fail`);
}

try {
  const routeId = (await client.bridge.routes())[0]!.routeId;

  await show('Bad input is caught before any request', 'fix the call; nothing was sent', () =>
    client.bridge.quote({ userId, routeId, amount: '-5' }),
  );

  if (sim) {
    const poor = sim.createUser({ organisationId: sim.demo.organisationId });
    await show(
      'A wallet without enough of the source token',
      'use maxAmount: true, or ask the user to top up',
      () => client.bridge.construct({ userId: poor.userId, routeId, amount: '100' }),
    );

    const walletless = sim.createUser({ organisationId: sim.demo.organisationId, wallet: false });
    await show('A user without a linked wallet', 'link a wallet first (WalletNotLinkedError)', () =>
      client.bridge.construct({ userId: walletless.userId, routeId, amount: '5' }),
    );

    await show(
      "Another partner's user, or no such user",
      'not proof the id is wrong: check whose user it is (UserNotFoundError)',
      () => client.bridge.quote({ userId: 'usr_unknown', routeId, amount: '5' }),
    );

    const readOnly = sim.createCredential({ organisationId: sim.demo.organisationId, scopes: ['all:read'] });
    const reader = new PartnerClient({ baseUrl: client.baseUrl, ...readOnly });
    await show(
      'A token without the scope an endpoint needs',
      'add the scope to the credential; retrying does not help',
      () => reader.bridge.construct({ userId, routeId, amount: '5' }),
    );

    sim.configureRoute(routeId, { reachable: false });
    await show('The bridge cannot be reached', 'retry shortly (the SDK already retried with backoff)', () =>
      client.bridge.quote({ userId, routeId, amount: '5' }, { maxRetries: 1 }),
    );
    sim.configureRoute(routeId, { reachable: true });

    const built = await client.bridge.construct({ userId, routeId, amount: '5' });
    const route = (await client.bridge.routes()).find((r) => r.routeId === routeId)!;
    await show('A batch that does not do what was asked', 'never sign it; report it', () =>
      verifyBridgeBatch({ route, construct: built, wallet: signer.address, amount: '6' }),
    );

    const revoked = sim.createCredential({ organisationId: sim.demo.organisationId, scopes: ['all:read'] });
    sim.revokeCredential(revoked.clientId);
    await show(
      'A revoked credential',
      'rotate the credential; the organisation or credential is stopped',
      () => new PartnerClient({ baseUrl: client.baseUrl, ...revoked }).bridge.routes(),
    );
  }
} finally {
  await close();
}
