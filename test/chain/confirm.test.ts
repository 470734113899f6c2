import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BridgeConstructResult,
  type BridgeRoute,
  confirmUserOperation,
  type FetchLike,
  PartnerClient,
  type SignedBridgeBatch,
  signBridgeBatch,
  toRawAmount,
  verifyBridgeBatch,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { type ChainOutcome, type ChainWorld, chainOrSkip, startChainWorld } from '../helpers/chain.js';
import { runMain } from '../helpers/cli.js';

/*
 * The chain is the witness: `confirmUserOperation` and `bridge.confirmOnChain` read real chain
 * states (anvil, the real EntryPoint v0.7 and MAv2 7702 account): an operation included and
 * successful, included with its calls reverted, superseded by another of the same nonce, and not
 * yet sent. And an unclear submit (a gateway that loses the answer) is settled by the chain.
 */

const chain = await chainOrSkip();
const ROUTE = 'base-usdc-to-bsc-usdc';
const usdc = (amount: string) => toRawAmount(amount, 6);
const described = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

describe.runIf(chain.ready)('confirming a user operation on a real chain', { timeout: 60_000 }, () => {
  let world: ChainWorld;
  let sim: PartnerSimulator;
  let client: PartnerClient;
  let route: BridgeRoute;

  beforeAll(async () => {
    if (!chain.ready) return;
    world = await startChainWorld(chain.packages);
    sim = createPartnerSimulator();
    client = new PartnerClient({
      baseUrl: sim.baseUrl,
      ...sim.demo.credentials,
      fetch: sim.fetch,
      chains: { [world.chainId]: world.rpcUrl },
    });
    route = (await client.bridge.routes()).find((r) => r.routeId === ROUTE)!;
  });

  afterAll(async () => {
    sim?.close();
    await world?.stop();
  });

  /** A fresh user whose wallet holds `onChain` USDC on the chain (100 in the simulator). */
  async function fundedUser(onChain: string) {
    const user = sim.createUser({ organisationId: sim.demo.organisationId });
    const wallet = privateKeyToAccount(user.wallet!.privateKey);
    sim.fund(user.userId, route.from.chainId, route.from.contractAddress, usdc('100'));
    await world.mint(wallet.address, usdc(onChain));
    return { userId: user.userId, wallet };
  }

  /** A batch built by `through`, verified and signed by the SDK. */
  async function signedBatch(user: Awaited<ReturnType<typeof fundedUser>>, amount: string, through = client) {
    const construct = await through.bridge.construct({ userId: user.userId, routeId: ROUTE, amount });
    const verified = verifyBridgeBatch({ route, construct, wallet: user.wallet.address, amount });
    return { construct, signed: await signBridgeBatch({ verified, signer: user.wallet }) };
  }

  /** A fresh wallet holding `onChain` USDC on the chain, and `count` signed batches of one nonce. */
  async function signedBatches(onChain: string, count = 1) {
    const user = await fundedUser(onChain);
    const batches: { construct: BridgeConstructResult; signed: SignedBridgeBatch }[] = [];
    for (const amount of ['25', '20', '15'].slice(0, count)) batches.push(await signedBatch(user, amount));
    return { userId: user.userId, batches };
  }

  const paramsOf = (construct: BridgeConstructResult, fromBlock?: bigint) => ({
    rpc: world.rpcUrl,
    entryPoint: construct.bundle.entryPoint,
    userOpHash: construct.bundle.userOpHash,
    sender: construct.bundle.userOp.sender,
    nonce: construct.bundle.userOp.nonce as string,
    ...(fromBlock === undefined ? {} : { fromBlock }),
  });

  it('included and successful: the EntryPoint event of the SDK hash, by URL and by client', async () => {
    const { batches } = await signedBatches('100');
    const [{ construct, signed }] = batches as [(typeof batches)[0]];
    const fromBlock = await world.client.getBlockNumber();
    const outcome = await world.submit(construct.bundle, signed);
    // The outcome in the message: a revert here names its decoded reason (revertError).
    expect(outcome, described(outcome)).toMatchObject({ status: 'included', success: true });
    if (outcome.status !== 'included') return;
    const receipt = await world.client.getTransactionReceipt({ hash: outcome.transactionHash });

    const answer = await confirmUserOperation(paramsOf(construct, fromBlock));
    expect(answer).toEqual({
      status: 'included',
      success: true,
      transactionHash: outcome.transactionHash,
      blockNumber: receipt.blockNumber,
      actualGasCost: expect.any(BigInt),
    });
    // The client takes the RPC from `chains` by the bundle's chain; a viem client is a provider too.
    await expect(client.bridge.confirmOnChain(construct)).resolves.toEqual(answer);
    await expect(confirmUserOperation({ ...paramsOf(construct), rpc: world.client })).resolves.toEqual(
      answer,
    );
    // And the CLI, on the construct result as saved.
    const file = join(mkdtempSync(join(tmpdir(), 'partner-chain-confirm-')), 'construct.json');
    writeFileSync(file, JSON.stringify({ data: construct }));
    const cli = await runMain(['confirm', '--rpc', world.rpcUrl, '--from-block', String(fromBlock), file]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(
      new RegExp(`^included: success, block ${receipt.blockNumber}, transaction ${outcome.transactionHash}`),
    );
  });

  it('included with its calls reverted: success false and the raw revert reason', async () => {
    const { batches } = await signedBatches('10');
    const [{ construct, signed }] = batches as [(typeof batches)[0]];
    const outcome = await world.submit(construct.bundle, signed);
    expect(outcome).toMatchObject({ status: 'included', success: false });
    if (outcome.status !== 'included') return;
    const answer = await client.bridge.confirmOnChain(construct);
    expect(answer).toMatchObject({
      status: 'included',
      success: false,
      transactionHash: outcome.transactionHash,
      revertReason: outcome.revertReason,
    });
    // The nonce is spent: the chain says so.
    expect(await world.nonceOf(construct.bundle.userOp.sender, 1n)).toBe(
      BigInt(construct.bundle.userOp.nonce as string) + 1n,
    );
  });

  it('superseded: another operation of the same nonce was included; pending: not sent yet', async () => {
    const { batches } = await signedBatches('100', 2);
    const [first, second] = batches as [(typeof batches)[0], (typeof batches)[0]];
    // Two builds of one intent's twin: same sender and nonce, other hashes.
    expect(second.construct.bundle.userOp.nonce).toBe(first.construct.bundle.userOp.nonce);
    expect(second.construct.bundle.userOpHash).not.toBe(first.construct.bundle.userOpHash);
    const nonce = BigInt(first.construct.bundle.userOp.nonce as string);

    await expect(confirmUserOperation(paramsOf(first.construct))).resolves.toEqual({
      status: 'pending',
      currentNonce: nonce,
    });

    const fromBlock = await world.client.getBlockNumber();
    const included = await world.submit(second.construct.bundle, second.signed);
    expect(included, described(included)).toMatchObject({ status: 'included', success: true });
    await expect(confirmUserOperation(paramsOf(first.construct, fromBlock))).resolves.toEqual({
      status: 'superseded',
      currentNonce: nonce + 1n,
    });
    await expect(
      client.bridge.confirmOnChain({ ...first.construct, fromBlock: `0x${fromBlock.toString(16)}` }),
    ).resolves.toMatchObject({ status: 'superseded' });
    await expect(confirmUserOperation(paramsOf(second.construct, fromBlock))).resolves.toMatchObject({
      status: 'included',
      success: true,
    });
  });

  it('an unclear submit, its answer lost by a gateway, is settled by the chain', async () => {
    const user = await fundedUser('100');
    let onTheWay: { construct: BridgeConstructResult; signed: SignedBridgeBatch } | undefined;
    const included: ChainOutcome[] = [];
    // The gateway hands the operation to the bundler (the chain) and loses the answer: the service
    // never hears of the submit, so its transfer reads say `pending` and cannot settle it.
    const gateway: FetchLike = async (url, init) => {
      if (String(url).endsWith('/bridge/transaction/batch/send') && onTheWay) {
        included.push(await world.submit(onTheWay.construct.bundle, onTheWay.signed));
        return new Response('<html>504 Gateway Time-out</html>', { status: 504 });
      }
      return sim.fetch(url, init);
    };
    const behind = new PartnerClient({
      baseUrl: sim.baseUrl,
      ...sim.demo.credentials,
      fetch: gateway,
      chains: { [world.chainId]: world.rpcUrl },
    });
    onTheWay = await signedBatch(user, '25', behind);
    const { construct, signed } = onTheWay;
    const result = await behind.bridge.send({ userId: user.userId, intentId: construct.intentId, ...signed });
    const [outcome] = included;
    expect(outcome, described(outcome)).toMatchObject({ status: 'included', success: true });
    expect(result).toEqual({
      transferId: construct.transferId,
      userOpHash: construct.bundle.userOpHash,
      onChain: {
        status: 'included',
        success: true,
        transactionHash: outcome?.status === 'included' ? outcome.transactionHash : undefined,
        blockNumber: expect.any(BigInt),
        actualGasCost: expect.any(BigInt),
      },
    });
    expect(sim.transfer(construct.transferId).status).toBe('pending');
  });
});
