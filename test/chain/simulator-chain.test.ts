import {
  concat,
  encodeAbiParameters,
  type Hex,
  hashMessage,
  hexToBigInt,
  keccak256,
  pad,
  parseAbiParameters,
  parseEventLogs,
  toHex,
} from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { hashAuthorization } from 'viem/utils';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ArgumentError,
  BadRequestError,
  type BridgeRoute,
  type BridgeSigner,
  PartnerClient,
  signBridgeBatch,
  toRawAmount,
  verifyBridgeBatch,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { type ChainWorld, chainOrSkip, spokePoolEvents, startChainWorld } from '../helpers/chain.js';

/*
 * The simulator's chain mode: it is the bundler on the test chain. The README's flow runs through
 * the public API against it, and what the chain does (executes, refuses, reverts) is what the
 * transfer says.
 */

const chain = await chainOrSkip();
const ROUTE = 'base-usdc-to-bsc-usdc';
const usdc = (amount: string) => toRawAmount(amount, 6);
const FAST = { pollIntervalMs: 50 };

describe.runIf(chain.ready)('the simulator as the bundler on a real chain', { timeout: 60_000 }, () => {
  let world: ChainWorld;
  let sim: PartnerSimulator;
  let client: PartnerClient;
  let route: BridgeRoute;

  beforeAll(async () => {
    if (!chain.ready) return;
    world = await startChainWorld(chain.packages);
    sim = createPartnerSimulator({ chain: { rpcUrl: world.rpcUrl }, autoAdvance: { deliveredMs: 50 } });
    client = new PartnerClient({ baseUrl: sim.baseUrl, ...sim.demo.credentials, fetch: sim.fetch });
    route = (await client.bridge.routes()).find((r) => r.routeId === ROUTE)!;
  });

  afterAll(async () => {
    sim?.close();
    await world?.stop();
  });

  /** A fresh user whose wallet holds `amount` USDC on the chain, and nothing in the simulator. */
  async function walletHolding(amount: string) {
    const user = sim.createUser({ organisationId: sim.demo.organisationId });
    const wallet = privateKeyToAccount(user.wallet!.privateKey);
    await world.mint(wallet.address, usdc(amount));
    return { userId: user.userId, wallet };
  }

  const statusesOf = (transferId: string) =>
    sim.callbacks.filter((body) => body.transferId === transferId).map((body) => body.status);

  /** The README's flow, step by step, for a wallet `signer` signs for; checked on the chain. */
  async function readmeFlow(userId: string, signer: BridgeSigner, delegated: boolean) {
    const step = delegated ? 'delegated' : 'first delegation';
    const wallet = signer.address as Hex;
    const quote = await client.bridge.quote({ userId, routeId: ROUTE, amount: '25' });
    const built = await client.bridge.construct({ userId, routeId: ROUTE, amount: '25' });
    expect(built.bundle.authorization === null, step).toBe(delegated);
    expect(built.quote.amountOut, step).toBe(quote.amountOut);
    const verified = verifyBridgeBatch({ route, construct: built, wallet, amount: '25' });
    const signed = await signBridgeBatch({ verified, signer });
    const before = await world.balanceOf(wallet);
    const nonce = await world.nonceOf(wallet, 1n);

    const { transferId, userOpHash } = await client.bridge.send({
      userId,
      intentId: built.intentId,
      ...signed,
    });
    const final = await client.bridge.transfers.wait({ userId, transferId }, FAST);

    expect(final.status, step).toBe('delivered');
    expect(statusesOf(transferId), step).toEqual(['submitted', 'source_confirmed', 'delivered']);
    // srcTxHash is the bundler's handleOps transaction: its UserOperationEvent carries the SDK's hash.
    const receipt = await world.client.getTransactionReceipt({ hash: final.srcTxHash as Hex });
    const [event] = parseEventLogs({
      abi: entryPoint07Abi,
      logs: receipt.logs,
      eventName: 'UserOperationEvent',
    });
    expect(event?.args, step).toMatchObject({
      userOpHash: verified.userOpHash,
      sender: wallet,
      success: true,
    });
    expect(userOpHash, step).toBe(verified.userOpHash);
    expect(receipt.type, step).toBe(delegated ? 'eip1559' : 'eip7702');
    const [deposit] = parseEventLogs({
      abi: spokePoolEvents,
      logs: receipt.logs,
      eventName: 'FundsDeposited',
    });
    expect(deposit?.args.inputAmount, step).toBe(verified.source.amountRaw);
    // The chain's balances and nonces moved, as the summary says.
    expect(before - (await world.balanceOf(wallet)), step).toBe(verified.totalDebit.amountRaw);
    expect(await world.nonceOf(wallet, 1n), step).toBe(nonce + 1n);
    expect(await world.client.getCode({ address: wallet }), step).toBe(
      concat(['0xef0100', world.delegate]).toLowerCase(),
    );
  }

  it("runs the README flow: a first delegation, then delegated, each executed by the chain's EntryPoint and delivered", async () => {
    const { userId, wallet } = await walletHolding('100');
    await readmeFlow(userId, wallet, false);
    await readmeFlow(userId, wallet, true);
  });

  it('proves a KMS-style signer the simulator never holds the key of: its wallet linked by address', async () => {
    const signer = kmsStyleSigner(generatePrivateKey());
    const { userId, wallet } = sim.createUser({
      organisationId: sim.demo.organisationId,
      wallet: signer.address,
    });
    expect(wallet).toEqual({ address: signer.address, privateKey: null });
    await world.mint(signer.address, usdc('100'));
    await readmeFlow(userId, signer, false);
    await readmeFlow(userId, signer, true);
  });

  it('runs execute, the one-call flow, on the chain', async () => {
    const { userId, wallet } = await walletHolding('30');
    const { transferId, summary } = await client.bridge.execute({
      userId,
      routeId: ROUTE,
      amount: '10',
      signer: wallet,
    });
    const final = await client.bridge.transfers.wait({ userId, transferId }, FAST);
    expect(final.status).toBe('delivered');
    expect(await world.balanceOf(wallet.address)).toBe(usdc('30') - summary.totalDebit.amountRaw);
  });

  it('fails an operation whose calls revert on chain (the wallet was emptied after construct), its nonce spent and its delegation applied', async () => {
    const { userId, wallet } = await walletHolding('100');
    const built = await client.bridge.construct({ userId, routeId: ROUTE, amount: '25' });
    const verified = verifyBridgeBatch({ route, construct: built, wallet: wallet.address, amount: '25' });
    const signed = await signBridgeBatch({ verified, signer: wallet });
    await emptyWallet(world, wallet.address);

    const { transferId } = await client.bridge.send({ userId, intentId: built.intentId, ...signed });
    const final = await client.bridge.transfers.wait({ userId, transferId }, FAST);

    expect(final.status).toBe('failed');
    expect(final.failureReason).toMatch(
      /^the calls reverted on chain: InsufficientBalance\(0x[0-9a-fA-F]{40}, 0, 25000000\); the operation was included in 0x[0-9a-f]{64} and its nonce spent$/,
    );
    expect(statusesOf(transferId)).toEqual(['submitted', 'failed']);
    const sent = BigInt(built.bundle.userOp.nonce as string);
    expect(await world.nonceOf(wallet.address, 1n)).toBe(sent + 1n);
    expect(await world.client.getCode({ address: wallet.address })).toMatch(/^0xef0100/);
    // The next batch is built as the chain is now: delegated, the next nonce.
    await world.mint(wallet.address, usdc('10'));
    const next = await client.bridge.construct({ userId, routeId: ROUTE, amount: '1' });
    expect(next.bundle.authorization).toBeNull();
    expect(BigInt(next.bundle.userOp.nonce as string)).toBe(sent + 1n);
  });

  it("fails what the EntryPoint refuses with the chain's reason, nothing sent and the nonce unspent", async () => {
    const { userId, wallet } = await walletHolding('100');
    const built = await client.bridge.construct({ userId, routeId: ROUTE, amount: '25' });
    const verified = verifyBridgeBatch({ route, construct: built, wallet: wallet.address, amount: '25' });
    const signed = await signBridgeBatch({ verified, signer: wallet });
    // v as 0/1: it recovers off chain, so the service takes it; the account refuses it.
    const v = Number.parseInt(signed.signature.slice(-2), 16) - 27;
    const signature = `${signed.signature.slice(0, -2)}0${v}`;
    const nonce = await world.nonceOf(wallet.address, 1n);

    await client.post('/bridge/transaction/batch/send', {
      body: { userId, intentId: built.intentId, signature, authorization: signed.authorization },
    });
    const final = await client.bridge.transfers.wait({ userId, transferId: built.transferId }, FAST);

    expect(final.status).toBe('failed');
    expect(final.failureReason).toBe('the EntryPoint refused the operation: AA24 signature error');
    expect(final.srcTxHash).toBe('');
    expect(await world.nonceOf(wallet.address, 1n)).toBe(nonce);
    expect(await world.client.getCode({ address: wallet.address })).toBeUndefined();
  });

  it('reads the balance from the chain: construct refuses what the wallet holds too little for', async () => {
    const { userId } = await walletHolding('5');
    const refused = await refusal(client.bridge.construct({ userId, routeId: ROUTE, amount: '25' }));
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused.code).toBe('INSUFFICIENT_BALANCE');
    expect(refused.message).toMatch(/holds 5 USDC/);
  });

  it('refuses fund and balance clearly: the balances are the chain’s', () => {
    const { userId, wallet } = sim.createUser({ organisationId: sim.demo.organisationId });
    const fund = () => sim.fund(userId, route.from.chainId, route.from.contractAddress, usdc('1'));
    expect(fund).toThrow(ArgumentError);
    expect(fund).toThrow(/follows the chain at http:\/\/127\.0\.0\.1:\d+.*fund the wallet on the chain/);
    expect(() => sim.balance(userId, route.from.chainId, route.from.contractAddress)).toThrow(
      /balanceOf on the chain/,
    );
    expect(wallet).not.toBeNull();
  });

  it('builds only routes that start on the chain it follows', async () => {
    const { userId } = await walletHolding('1');
    const refused = await refusal(
      client.bridge.construct({ userId, routeId: 'bsc-usdc-to-base-usdc', amount: '1' }),
    );
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused.message).toMatch(/starts on chain 56; the simulator is the bundler on chain 8453/);
  });

  it('sends handleOps from a bundler key of its own when given one', async () => {
    const key = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'; // anvil's second
    const own = createPartnerSimulator({
      chain: { rpcUrl: world.rpcUrl, bundlerPrivateKey: key },
      autoAdvance: false,
    });
    try {
      const ownClient = new PartnerClient({
        baseUrl: own.baseUrl,
        ...own.demo.credentials,
        fetch: own.fetch,
      });
      const wallet = privateKeyToAccount(own.demo.wallet.privateKey);
      await world.mint(wallet.address, usdc('10'));
      const { transferId } = await ownClient.bridge.execute({
        userId: own.demo.userId,
        routeId: ROUTE,
        amount: '5',
        signer: wallet,
      });
      // The receipt moves it to source_confirmed; nothing moves it further.
      const confirmed = await vi.waitFor(
        () => {
          const now = own.transfer(transferId);
          if (now.status === 'submitted') throw new Error('still submitted');
          return now;
        },
        { timeout: 30_000, interval: 50 },
      );
      expect(confirmed.status).toBe('source_confirmed');
      const transaction = await world.client.getTransaction({ hash: confirmed.srcTxHash as Hex });
      expect(transaction.from).toBe(privateKeyToAccount(key).address.toLowerCase());
      // autoAdvance: false: the destination side waits for the test.
      expect(own.advance(transferId, 'delivered').status).toBe('delivered');
    } finally {
      own.close();
    }
  });

  it('builds without a paymaster where the chain has none (a fork of Base): the wallet pays its own gas', async () => {
    const code = (await world.client.getCode({ address: world.paymaster }))!;
    await world.client.setCode({ address: world.paymaster, bytecode: '0x' });
    try {
      const { userId, wallet } = await walletHolding('100');
      await world.client.setBalance({ address: wallet.address, value: 10n ** 17n });
      for (const delegated of [false, true]) {
        const built = await client.bridge.construct({ userId, routeId: ROUTE, amount: '25' });
        expect(built.bundle.userOp.paymaster).toBeUndefined();
        expect(built.bundle.authorization === null).toBe(delegated);
        // The verifier refuses an unsponsored batch unless told that the wallet pays its gas.
        const verified = verifyBridgeBatch(
          { route, construct: built, wallet: wallet.address, amount: '25' },
          { requirePaymaster: false },
        );
        expect(verified.paymaster).toBeNull();
        const signed = await signBridgeBatch({ verified, signer: wallet });
        const eth = await world.client.getBalance({ address: wallet.address });
        const { transferId } = await client.bridge.send({ userId, intentId: built.intentId, ...signed });
        const final = await client.bridge.transfers.wait({ userId, transferId }, FAST);
        expect(final.status, final.failureReason ?? '').toBe('delivered');
        expect(await world.client.getBalance({ address: wallet.address })).toBeLessThan(eth);
      }
    } finally {
      await world.client.setCode({ address: world.paymaster, bytecode: code });
    }
  });
});

/**
 * A signer shaped as a KMS adapter is: raw digests signed, s not normalised (n - s, as AWS KMS
 * may return it), v 0/1; `signBridgeBatch` puts both into the form the chain accepts.
 */
function kmsStyleSigner(key: Hex): BridgeSigner & { address: Hex } {
  const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const raw = async (hash: Hex) => {
    const { r, s, yParity } = await sign({ hash, privateKey: key });
    return { r, s: toHex(N - hexToBigInt(s), { size: 32 }), yParity: 1 - yParity! };
  };
  return {
    address: privateKeyToAccount(key).address,
    signMessage: async ({ message }: { message: { raw: Hex } }) => {
      const { r, s, yParity } = await raw(hashMessage(message));
      return concat([r, s, toHex(yParity, { size: 1 })]);
    },
    signAuthorization: async (authorization: { address: Hex; chainId: number; nonce: number }) =>
      raw(hashAuthorization(authorization)),
  };
}

/** The error a call is refused with. */
const refusal = (call: Promise<unknown>) =>
  call.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error as BadRequestError,
  );

/**
 * Sets the wallet's token balance to 0 in the token's storage (`balanceOf` is its slot 0 mapping):
 * a transaction from the wallet would also move its account nonce, and with it void the
 * authorization its batch was signed with.
 */
async function emptyWallet(world: ChainWorld, wallet: Hex) {
  await world.client.setStorageAt({
    address: world.token,
    index: keccak256(encodeAbiParameters(parseAbiParameters('address, uint256'), [wallet, 0n])),
    value: pad('0x0'),
  });
  expect(await world.balanceOf(wallet)).toBe(0n);
}
