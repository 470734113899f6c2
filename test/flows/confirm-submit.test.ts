import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import {
  ArgumentError,
  OperationSupersededError,
  type PartnerClient,
  SubmitOutcomeUnknownError,
  TimeoutError,
} from '../../src/index.js';
import { freshConstruct } from '../helpers/batches.js';
import { account, bridgeService } from '../helpers/bridge-service.js';
import { type MockChainState, mockChain } from '../helpers/mock-chain.js';
import { json, type MockRequest, makeClient } from '../helpers/mock-fetch.js';

/*
 * The chain as the witness of a submit: with the source chain in `chains`, an unclear submit that
 * the transfer reads cannot settle is settled by the EntryPoint (included, superseded), and
 * `bridge.confirmOnChain` reads a construct result's operation.
 */

afterEach(() => {
  vi.useRealTimers();
});

// The SDK loads its transport and viem on first use, in real time: under fake timers a loaded
// machine could run out of fake time before the first request went out.
beforeAll(async () => {
  await makeClient(bridgeService()).bridge.execute({
    userId: 'user-1',
    routeId: 'base-usdc-to-bsc-usdc',
    amount: '25.5',
    signer: account,
  });
}, 60_000);

const construct = freshConstruct(account.address);
const NONCE = BigInt(construct.bundle.userOp.nonce as string);
const SENDER = construct.bundle.userOp.sender;
const HASH = construct.bundle.userOpHash;
const CHAIN = construct.bundle.chainId;

function hangUntilAborted(request: MockRequest): Promise<Response> {
  return new Promise<Response>((_, reject) => {
    if (request.signal.aborted) reject(request.signal.reason);
    request.signal.addEventListener('abort', () => reject(request.signal.reason));
  });
}

/** A service whose submit answer is lost and whose transfer reads still say `pending`. */
function lostSubmit(order: string[]) {
  return bridgeService(
    {
      'POST /bridge/transaction/batch/send': (request) => {
        order.push('submit');
        return hangUntilAborted(request);
      },
      'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'pending' }) }),
    },
    construct,
  );
}

function chainAt(state: Partial<MockChainState>, order: string[], fail?: (method: string) => unknown) {
  return mockChain(
    { entryPoint: construct.bundle.entryPoint, currentNonce: NONCE, latest: 100n, ...state },
    (call) => {
      order.push(call.method);
      return fail?.(call.method);
    },
  );
}

/** The outcome of a call under fake timers, after 30 s of them have run. */
async function settle<T>(promise: Promise<T>): Promise<T | unknown> {
  const result = promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  for (let i = 0; i < 30; i++) await vi.advanceTimersByTimeAsync(1_000);
  const outcome = await result;
  return 'error' in outcome ? outcome.error : outcome.value;
}

async function submit(client: PartnerClient) {
  const built = await client.bridge.construct({
    userId: 'user-1',
    routeId: 'base-usdc-to-bsc-usdc',
    amount: '25.5',
  });
  return client.bridge.send({
    userId: 'user-1',
    intentId: built.intentId,
    signature: `0xff00${'11'.repeat(64)}1b`,
  });
}

const logRanges = (calls: { method: string; params: unknown[] }[]) =>
  calls
    .filter((c) => c.method === 'eth_getLogs')
    .map((c) => {
      const filter = c.params[0] as { fromBlock: string; toBlock: string };
      return [BigInt(filter.fromBlock), BigInt(filter.toBlock)];
    });

describe('an unclear submit, settled by the chain', { timeout: 30_000 }, () => {
  it('included: resolves with onChain, searching from the block read before the submit', async () => {
    vi.useFakeTimers();
    const order: string[] = [];
    // The bundler includes it at block 103 while the answer is lost; the chain is at 105 by then.
    const included = [{ userOpHash: HASH, sender: SENDER, nonce: NONCE, block: 103n, actualGasCost: 9n }];
    const chain = chainAt({ currentNonce: NONCE + 1n, included }, order, (method) =>
      method === 'eth_blockNumber' && order.filter((m) => m === method).length > 1 ? '0x69' : undefined,
    );
    const client = makeClient(lostSubmit(order), { timeoutMs: 50, chains: { [CHAIN]: chain.provider } });
    const settled = await settle(submit(client));
    expect(settled).toEqual({
      transferId: 'tr_1',
      userOpHash: HASH,
      onChain: {
        status: 'included',
        success: true,
        transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        blockNumber: 103n,
        actualGasCost: 9n,
      },
    });
    // The latest block before the submit, then the nonce, then the logs from that block on.
    expect(order.slice(0, 2)).toEqual(['eth_blockNumber', 'submit']);
    expect(order.slice(2)).toEqual(['eth_call', 'eth_blockNumber', 'eth_getLogs']);
    expect(logRanges(chain.calls)).toEqual([[100n, 105n]]);
  });

  it('superseded: OperationSupersededError with the ids and the current nonce', async () => {
    vi.useFakeTimers();
    const order: string[] = [];
    const chain = chainAt({ currentNonce: NONCE + 2n }, order);
    const client = makeClient(lostSubmit(order), { timeoutMs: 50, chains: { [CHAIN]: chain.provider } });
    const error = await settle(submit(client));
    expect(error).toBeInstanceOf(OperationSupersededError);
    expect(error).toMatchObject({
      intentId: 'int_1',
      transferId: 'tr_1',
      userOpHash: HASH,
      currentNonce: NONCE + 2n,
    });
    expect((error as Error).cause).toBeInstanceOf(TimeoutError);
  });

  it('pending: SubmitOutcomeUnknownError carrying onChain; a chain that cannot be read leaves it as it was', async () => {
    vi.useFakeTimers();
    const order: string[] = [];
    const chain = chainAt({}, order);
    const client = makeClient(lostSubmit(order), { timeoutMs: 50, chains: { [CHAIN]: chain.provider } });
    const error = await settle(submit(client));
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(error).toMatchObject({ onChain: { status: 'pending', currentNonce: NONCE } });

    const broken = chainAt({}, [], () => {
      throw Object.assign(new Error('down'), { code: -32601 });
    });
    const service = lostSubmit([]);
    const other = makeClient(service, { timeoutMs: 50, chains: { [CHAIN]: broken.provider } });
    const unknown = await settle(submit(other));
    expect(unknown).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(unknown).toMatchObject({ onChain: undefined });
    // The block read before the submit failed too: the submit went anyway, once.
    expect(service.count('POST /bridge/transaction/batch/send')).toBe(1);
  });

  it('execute resolves with onChain when the chain settles its submit', async () => {
    vi.useFakeTimers();
    const order: string[] = [];
    const included = [{ userOpHash: HASH, sender: SENDER, nonce: NONCE, block: 100n, success: false }];
    const chain = chainAt({ currentNonce: NONCE + 1n, included }, order);
    const client = makeClient(lostSubmit(order), { timeoutMs: 50, chains: { [CHAIN]: chain.provider } });
    const result = await settle(
      client.bridge.execute({
        userId: 'user-1',
        routeId: 'base-usdc-to-bsc-usdc',
        amount: '25.5',
        signer: account,
      }),
    );
    expect(result).toMatchObject({ transferId: 'tr_1', onChain: { status: 'included', success: false } });
  });

  it('without chains, or without the chain, asks no chain: as before', async () => {
    vi.useFakeTimers();
    const order: string[] = [];
    const chain = chainAt({ currentNonce: NONCE + 2n }, order);
    const client = makeClient(lostSubmit(order), { timeoutMs: 50, chains: { 1: chain.provider } });
    const error = await settle(submit(client));
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(chain.calls).toEqual([]);
  });
});

describe('bridge.confirmOnChain', () => {
  it("reads the bundle's operation through the chain's RPC", async () => {
    const chain = mockChain({
      entryPoint: construct.bundle.entryPoint,
      currentNonce: NONCE + 1n,
      latest: 50n,
      included: [{ userOpHash: HASH, sender: SENDER, nonce: NONCE, block: 49n }],
    });
    const client = makeClient(bridgeService({}, construct), { chains: { [CHAIN]: chain.provider } });
    await expect(client.bridge.confirmOnChain(construct)).resolves.toMatchObject({
      status: 'included',
      blockNumber: 49n,
    });
    // Anything with the bundle, and a fromBlock beside it.
    await expect(
      client.bridge.confirmOnChain({ bundle: construct.bundle, fromBlock: '0x30' }),
    ).resolves.toMatchObject({
      status: 'included',
    });
    expect(logRanges(chain.calls).at(-1)).toEqual([48n, 50n]);
  });

  it('is an ArgumentError before any request without an RPC for the chain, or for a bundle it cannot read', async () => {
    const chain = mockChain({ entryPoint: construct.bundle.entryPoint, currentNonce: 0n, latest: 0n });
    const none = makeClient(bridgeService({}, construct));
    await expect(none.bridge.confirmOnChain(construct)).rejects.toBeInstanceOf(ArgumentError);
    const other = makeClient(bridgeService({}, construct), { chains: { 1: chain.provider } });
    const error = await other.bridge.confirmOnChain(construct).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as Error).message).toMatch(new RegExp(`no RPC for chain ${CHAIN}`));
    const mine = makeClient(bridgeService({}, construct), { chains: { [CHAIN]: chain.provider } });
    await expect(mine.bridge.confirmOnChain({} as never)).rejects.toBeInstanceOf(ArgumentError);
    expect(chain.calls).toEqual([]);
  });

  it('refuses chains that are not RPC URLs or providers when the client is made', () => {
    for (const chains of [{ 8453: 'ftp://x' }, { base: 'https://x.example' }, { 8453: {} }]) {
      expect(() => makeClient(bridgeService(), { chains: chains as never })).toThrow(ArgumentError);
    }
  });
});
