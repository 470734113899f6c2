import type { IncomingMessage, ServerResponse } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BridgeConstructResult,
  PartnerClient,
  RequoteNonceError,
  type SignedBridgeBatch,
  SubmitOutcomeUnknownError,
  signBridgeBatch,
  verifyBridgeBatch,
} from '../../src/index.js';
import { freshConstruct } from '../helpers/batches.js';
import { account, bridgeService } from '../helpers/bridge-service.js';
import { countingFetch, leaping, untilAborted } from '../helpers/clock.js';
import { faultServer, jsonReply } from '../helpers/fault-server.js';
import { json, makeClient } from '../helpers/mock-fetch.js';
import { onCleanup, requoteSetup, SHORT, scriptedSigner } from '../helpers/requote.js';

/** Passes a request on to `target` and its answer back, as a gateway in front of the service would. */
function forward(target: string) {
  return (req: IncomingMessage, res: ServerResponse, then?: () => void) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'accept'])
        if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      const response = await fetch(`${target}${req.url}`, {
        method: req.method!,
        headers,
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      });
      const body = Buffer.from(await response.arrayBuffer());
      if (then) return then();
      res.writeHead(response.status, {
        'content-type': response.headers.get('content-type') ?? 'application/json',
      });
      res.end(body);
    });
  };
}

/** The simulator behind a gateway that drops the answer to every submit (the service took it). */
async function droppingGateway(run: Awaited<ReturnType<typeof requoteSetup>>, readsFail: boolean) {
  const server = await run.sim.listen();
  onCleanup(server.close);
  const pass = forward(server.url);
  const gateway = await faultServer({
    'POST /bridge/transaction/batch/send': (req, res) => pass(req, res, () => res.socket?.destroy()),
    'GET *': (req, res) =>
      readsFail && req.url?.includes('/bridge/transfers/')
        ? jsonReply(res, 502, { message: 'bad gateway' })
        : pass(req, res),
    'POST *': (req, res) => pass(req, res),
  });
  onCleanup(gateway.close);
  const { fetch, busy } = countingFetch();
  return {
    client: new PartnerClient({ baseUrl: gateway.url, ...run.sim.demo.credentials, maxRetries: 0, fetch }),
    busy,
  };
}

describe('bridge.execute never lets two operations of one call execute', () => {
  it('an ambiguous send never rebuilds: the lost answer is resolved by reading the transfer', async () => {
    const run = await requoteSetup();
    const { client } = await droppingGateway(run, false);
    const { signer } = scriptedSigner(run.wallet, []);
    const result = await run.execute(signer, { requote: { maxAttempts: 2 } }, client);
    expect(run.constructs()).toBe(1);
    expect(run.submits()).toBe(1);
    expect(result.transferId).toBe(run.built()[0]!.transferId);
    expect(run.progress.some((p) => p.step === 'requoted')).toBe(false);
  });

  it('an ambiguous send that reading cannot resolve is SubmitOutcomeUnknownError, never a rebuild', async () => {
    const run = await requoteSetup();
    const { client, busy } = await droppingGateway(run, true);
    const { signer } = scriptedSigner(run.wallet, []);
    // The reads that look for the outcome are seconds apart: the clock leaps between them.
    const error = await leaping(run.execute(signer, { requote: { maxAttempts: 2 } }, client), busy).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect((error as SubmitOutcomeUnknownError).intentId).toBe(run.built()[0]!.intentId);
    expect(run.constructs()).toBe(1);
    expect(run.submits()).toBe(1);
  });

  it('refuses a rebuild with a higher nonce once a signature exists for the earlier operation', async () => {
    const run = await requoteSetup();
    const { signer, calls } = scriptedSigner(run.wallet, [
      async (call) => {
        // Meanwhile another operation of this wallet executes: the service hands out the next nonce.
        await run.client.bridge.execute({
          userId: run.userId,
          routeId: run.routeId,
          amount: '5',
          signer: run.wallet,
          ...SHORT,
        });
        await untilAborted(call.context?.signal);
      },
    ]);
    const error = await run.execute(signer, { requote: { maxAttempts: 2 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequoteNonceError);
    const refused = error as RequoteNonceError;
    expect(refused.code).toBe('REQUOTE_NONCE');
    // Key 1, the owner's validation: sequence 0 signed, sequence 1 rebuilt.
    expect(refused.expected.nonce).toBe(1n << 64n);
    expect(refused.actual.nonce).toBe((1n << 64n) | 1n);
    expect(refused.signedUserOpHash).toBe(calls[0]!.hash);
    expect(calls).toHaveLength(1);
    // Only the other operation was submitted.
    expect(run.submits()).toBe(1);
  });

  it('a rebuild without the authorization an earlier signature carries is an unclear outcome, never signed', async () => {
    let constructs = 0;
    const first = freshConstruct(account.address);
    const second = freshConstruct(account.address, (c) => {
      c.intentId = 'int_2';
      c.transferId = 'tr_2';
      c.bundle.authorization = null;
    });
    const service = bridgeService({
      'POST /bridge/construct/transaction/batch': () => json({ data: constructs++ === 0 ? first : second }),
    });
    const signed: string[] = [];
    const error = await makeClient(service)
      .bridge.execute({
        userId: 'user-1',
        routeId: 'base-usdc-to-bsc-usdc',
        amount: '25.5',
        signer: {
          address: account.address,
          signMessage: async (args, context) => {
            signed.push(args.message.raw);
            await untilAborted(context?.signal);
            return account.signMessage(args);
          },
          signAuthorization: (args) => account.signAuthorization(args),
        },
        // The fake quote lives 120 s: the deadline falls a second from now.
        signing: { submitMarginMs: 119_000 },
        requote: { maxAttempts: 2 },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect((error as SubmitOutcomeUnknownError).intentId).toBe('int_1');
    expect(signed).toEqual([first.bundle.userOpHash]);
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(0);
  });

  it('property: of operations signed for one sender and nonce, the simulator executes at most one', async () => {
    const run = await requoteSetup({ quoteTtlSec: 120 });
    const routes = await run.client.bridge.routes();
    const route = routes.find((r) => r.routeId === run.routeId)!;
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 4 })
          .chain((n) =>
            fc.tuple(fc.constant(n), fc.shuffledSubarray([...Array(n).keys()], { minLength: n })),
          ),
        async ([n, order]) => {
          const signed: { construct: BridgeConstructResult; signed: SignedBridgeBatch }[] = [];
          for (let i = 0; i < n; i++) {
            const amount = String(1 + i);
            const construct = await run.client.bridge.construct({
              userId: run.userId,
              routeId: run.routeId,
              amount,
            });
            const verified = verifyBridgeBatch({ route, construct, wallet: run.wallet.address, amount });
            signed.push({ construct, signed: await signBridgeBatch({ verified, signer: run.wallet }) });
          }
          const nonces = new Set(signed.map((s) => s.construct.bundle.userOp.nonce));
          expect(nonces.size).toBe(1);
          for (const index of order) {
            const { construct, signed: signatures } = signed[index]!;
            await run.client.bridge.send({ userId: run.userId, intentId: construct.intentId, ...signatures });
          }
          const states = order.map((index) => run.sim.transfer(signed[index]!.construct.transferId));
          expect(states[0]!.status).toBe('submitted');
          for (const later of states.slice(1)) {
            expect(later.status).toBe('failed');
            expect(later.failureReason).toMatch(/nonce .* already used/);
          }
        },
      ),
      { numRuns: 8 },
    );
  });
});
