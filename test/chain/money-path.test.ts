import { readFileSync } from 'node:fs';
import { concat, keccak256, pad, parseAbi, parseEventLogs } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BridgeRoute,
  PartnerClient,
  signBridgeBatch,
  toRawAmount,
  verifyBridgeBatch,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { type ChainWorld, chainOrSkip, spokePoolEvents, startChainWorld } from '../helpers/chain.js';

/*
 * The money path on a real chain: a batch the simulator built, verified and signed by the SDK,
 * runs through the real EntryPoint v0.7 into the MAv2 7702 account and an Across SpokePool, and
 * does what `verifyBridgeBatch`'s summary says it does.
 */

const chain = await chainOrSkip();
const ROUTE = 'base-usdc-to-bsc-usdc';
const usdc = (amount: string) => toRawAmount(amount, 6);

describe.runIf(chain.ready)('the money path on a real chain', { timeout: 60_000 }, () => {
  let world: ChainWorld;
  let sim: PartnerSimulator;
  let client: PartnerClient;
  let route: BridgeRoute;

  beforeAll(async () => {
    if (!chain.ready) return;
    world = await startChainWorld(chain.packages);
    sim = createPartnerSimulator();
    client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    route = (await client.bridge.routes()).find((r) => r.routeId === ROUTE)!;
  });

  afterAll(async () => {
    sim?.close();
    await world?.stop();
  });

  it('runs the account its provenance names, on the addresses of the simulator route', async () => {
    const artifact = JSON.parse(
      readFileSync(new URL('fixtures/SemiModularAccount7702.json', import.meta.url), 'utf8'),
    ) as { bytecode: `0x${string}` };
    expect(keccak256(artifact.bytecode)).toBe(
      '0x72e48b471278d38341dfb4397e79af745f0468ebeb8b55bbabe78d1344bac488',
    );
    const accountId = await world.client.readContract({
      address: world.delegate,
      abi: parseAbi(['function accountId() pure returns (string)']),
      functionName: 'accountId',
    });
    expect(accountId).toBe('alchemy.sma-7702.1.0.0');
    expect([world.spokePool, world.token, world.treasury]).toEqual([
      route.targets.bridge,
      route.targets.token,
      route.targets.treasury,
    ]);
    expect(world.chainId).toBe(route.from.chainId);
  });

  for (const [first, then] of [
    ['deposit', 'depositV3'],
    ['depositV3', 'deposit'],
  ] as const) {
    it(`executes through handleOps as the summary says: a first delegation with ${first}, then delegated with ${then}`, async () => {
      const user = sim.createUser({ organisationId: sim.demo.organisationId });
      const wallet = privateKeyToAccount(user.wallet!.privateKey);
      sim.fund(user.userId, route.from.chainId, route.from.contractAddress, usdc('100'));
      await world.mint(wallet.address, usdc('100'));

      for (const [depositFunction, delegated] of [
        [first, false],
        [then, true],
      ] as const) {
        const step = `${depositFunction}, ${delegated ? 'delegated' : 'first delegation'}`;
        sim.configureRoute(ROUTE, { depositFunction });
        const construct = await client.bridge.construct({
          userId: user.userId,
          routeId: ROUTE,
          amount: '25',
        });
        const verified = verifyBridgeBatch({ route, construct, wallet: wallet.address, amount: '25' });
        expect(verified.depositFunction, step).toBe(depositFunction);
        expect(verified.needsAuthorization, step).toBe(!delegated);
        const signed = await signBridgeBatch({ verified, signer: wallet });
        expect(signed.authorization === undefined, step).toBe(delegated);

        const before = await balances(world, wallet.address);
        const outcome = await world.submit(construct.bundle, signed);
        // The EntryPoint hashed the operation as the SDK did, and its calls ran (a revert is named
        // in the message, decoded: revertError).
        const said = JSON.stringify(outcome, (_key, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
        expect(outcome, `${step}: ${said}`).toMatchObject({
          status: 'included',
          success: true,
          userOpHash: verified.userOpHash,
        });
        if (outcome.status !== 'included') return;
        const [event] = parseEventLogs({
          abi: entryPoint07Abi,
          logs: outcome.logs,
          eventName: 'UserOperationEvent',
        });
        expect(event?.args, step).toMatchObject({ sender: wallet.address, paymaster: world.paymaster });

        // The deposit carries what the summary says.
        const deposits = parseEventLogs({
          abi: spokePoolEvents,
          logs: outcome.logs,
          eventName: 'FundsDeposited',
        });
        expect(deposits, step).toHaveLength(1);
        expect(deposits[0]!.address.toLowerCase(), step).toBe(verified.bridge.toLowerCase());
        expect(deposits[0]!.args, step).toMatchObject({
          inputToken: pad(verified.source.token.toLowerCase() as `0x${string}`),
          outputToken: pad(verified.destination.token.toLowerCase() as `0x${string}`),
          inputAmount: verified.source.amountRaw,
          outputAmount: verified.destination.amountRaw,
          destinationChainId: BigInt(verified.destination.chainId),
          depositor: pad(wallet.address.toLowerCase() as `0x${string}`),
          recipient: pad(verified.wallet.toLowerCase() as `0x${string}`),
          quoteTimestamp: verified.quoteTimestamp.getTime() / 1000,
          fillDeadline: verified.fillDeadline.getTime() / 1000,
          message: '0x',
        });

        // Balances move by the summary's debits: the amount to the SpokePool, the fee to the treasury.
        const after = await balances(world, wallet.address);
        expect(before.wallet - after.wallet, step).toBe(verified.totalDebit.amountRaw);
        expect(after.spokePool - before.spokePool, step).toBe(verified.source.amountRaw);
        expect(after.treasury - before.treasury, step).toBe(verified.gasFee.amountRaw);
        expect(verified.gasFee.treasury, step).toBe(world.treasury);

        // The wallet is delegated, and its nonce moved on by one under the owner's key.
        expect(await world.client.getCode({ address: wallet.address }), step).toBe(
          concat(['0xef0100', world.delegate]).toLowerCase(),
        );
        expect(await world.nonceOf(wallet.address, 1n), step).toBe(
          BigInt(construct.bundle.userOp.nonce as string) + 1n,
        );

        // The simulator takes the same signatures, and so builds the next batch as the chain is now.
        await client.bridge.send({ userId: user.userId, intentId: construct.intentId, ...signed });
        expect(sim.transfer(construct.transferId).status, step).toBe('submitted');
      }
    });
  }
});

async function balances(world: ChainWorld, wallet: `0x${string}`) {
  const [own, spokePool, treasury] = await Promise.all([
    world.balanceOf(wallet),
    world.balanceOf(world.spokePool),
    world.balanceOf(world.treasury),
  ]);
  return { wallet: own, spokePool, treasury };
}
