import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AbortError,
  ArgumentError,
  ChainRpcError,
  ConnectionError,
  confirmUserOperation,
  DEFAULTS,
  ResponseValidationError,
  TimeoutError,
} from '../../src/index.js';
import { leaping, useTestClock } from '../helpers/clock.js';
import { mockChain } from '../helpers/mock-chain.js';

const ENTRY_POINT = '0x0000000071727de22e5e9d8baf0edac6f37da032';
const SENDER = '0x1111111111111111111111111111111111111111';
const HASH = `0x${'ab'.repeat(32)}` as const;
/** Key 1, sequence 5: the owner's validation of the MAv2 account. */
const NONCE = (1n << 64n) | 5n;

const op = (overrides: Partial<Parameters<typeof confirmUserOperation>[0]> = {}) => ({
  entryPoint: ENTRY_POINT,
  userOpHash: HASH,
  sender: SENDER,
  nonce: NONCE,
  ...overrides,
});

const range = (params: unknown[]) => {
  const filter = params[0] as { fromBlock: string; toBlock: string };
  return [BigInt(filter.fromBlock), BigInt(filter.toBlock)];
};

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('confirmUserOperation', () => {
  it('reads the nonce first, then the logs back from the latest block, page by page, and answers included', async () => {
    const chain = mockChain({
      entryPoint: ENTRY_POINT,
      currentNonce: NONCE + 1n,
      latest: 2_500n,
      included: [{ userOpHash: HASH, sender: SENDER, nonce: NONCE, block: 400n, actualGasCost: 777n }],
    });
    const answer = await confirmUserOperation({ rpc: chain.provider, ...op() });
    expect(answer).toEqual({
      status: 'included',
      success: true,
      transactionHash: `0x${'0'.repeat(61)}190`,
      blockNumber: 400n,
      actualGasCost: 777n,
    });
    expect(chain.methods()).toEqual([
      'eth_call',
      'eth_blockNumber',
      'eth_getLogs',
      'eth_getLogs',
      'eth_getLogs',
    ]);
    // getNonce(sender, key 1) at the latest block.
    expect(chain.calls[0]!.params).toEqual([
      { to: ENTRY_POINT, data: `0x35567e1a${SENDER.slice(2).padStart(64, '0')}${'1'.padStart(64, '0')}` },
      'latest',
    ]);
    const pages = chain.calls.filter((c) => c.method === 'eth_getLogs').map((c) => range(c.params));
    const size = BigInt(DEFAULTS.confirm.pageBlocks);
    expect(pages).toEqual([
      [2_501n - size, 2_500n],
      [2_501n - 2n * size, 2_500n - size],
      [0n, 2_500n - 2n * size],
    ]);
  });

  it('answers included with success false and the raw revert reason of a reverted operation', async () => {
    const revertReason = '0xf4d678b8000000000000000000000000000000000000000000000000000000000000002a';
    const chain = mockChain({
      entryPoint: ENTRY_POINT,
      currentNonce: NONCE + 1n,
      latest: 10n,
      included: [{ userOpHash: HASH, sender: SENDER, nonce: NONCE, block: 9n, success: false, revertReason }],
    });
    const answer = await confirmUserOperation({
      rpc: chain.provider,
      ...op(),
      nonce: `0x${NONCE.toString(16)}`,
    });
    expect(answer).toMatchObject({ status: 'included', success: false, revertReason, blockNumber: 9n });
  });

  it('answers pending when the nonce is not used, without reading logs', async () => {
    const chain = mockChain({ entryPoint: ENTRY_POINT, currentNonce: NONCE, latest: 100n });
    await expect(
      confirmUserOperation({ rpc: chain.provider, ...op(), nonce: NONCE.toString() }),
    ).resolves.toEqual({
      status: 'pending',
      currentNonce: NONCE,
    });
    expect(chain.methods()).toEqual(['eth_call']);
  });

  it('answers superseded when the search reached fromBlock, unknown when the default look-back ended first', async () => {
    const state = { entryPoint: ENTRY_POINT as `0x${string}`, currentNonce: NONCE + 3n, latest: 50_000n };
    const withFrom = mockChain(state);
    await expect(
      confirmUserOperation({ rpc: withFrom.provider, ...op(), fromBlock: 49_500 }),
    ).resolves.toEqual({
      status: 'superseded',
      currentNonce: NONCE + 3n,
    });
    expect(withFrom.calls.filter((c) => c.method === 'eth_getLogs').map((c) => range(c.params))).toEqual([
      [49_500n, 50_000n],
    ]);

    const without = mockChain(state);
    await expect(confirmUserOperation({ rpc: without.provider, ...op() })).resolves.toEqual({
      status: 'unknown',
      currentNonce: NONCE + 3n,
    });
    const pages = without.calls.filter((c) => c.method === 'eth_getLogs').map((c) => range(c.params));
    expect(pages).toHaveLength(DEFAULTS.confirm.lookBackBlocks / DEFAULTS.confirm.pageBlocks);
    expect(pages.at(-1)![0]).toBe(50_001n - BigInt(DEFAULTS.confirm.lookBackBlocks));
  });

  it('calls a look-back that reached the first block a full search: superseded', async () => {
    const chain = mockChain({ entryPoint: ENTRY_POINT, currentNonce: NONCE + 1n, latest: 30n });
    await expect(confirmUserOperation({ rpc: chain.provider, ...op() })).resolves.toMatchObject({
      status: 'superseded',
    });
  });

  it('an operation included after the nonce read is found in the logs, never called superseded', async () => {
    // The nonce read sees it unused; by the logs read it is in: still not superseded (pending).
    const chain = mockChain(
      {
        entryPoint: ENTRY_POINT,
        currentNonce: NONCE,
        latest: 20n,
        included: [{ userOpHash: HASH, sender: SENDER, nonce: NONCE, block: 20n }],
      },
      (call) => (call.method === 'eth_call' ? `0x${NONCE.toString(16).padStart(64, '0')}` : undefined),
    );
    const answer = await confirmUserOperation({ rpc: chain.provider, ...op(), fromBlock: 1n });
    expect(answer.status).toBe('pending');
  });

  it.each([
    ['an entry point that is no address', op({ entryPoint: '0x12' }), 'entryPoint'],
    ['a hash that is not 32 bytes', op({ userOpHash: '0xabcd' }), 'userOpHash'],
    ['a negative nonce', op({ nonce: -1n }), 'nonce'],
    ['a nonce that is no number', op({ nonce: '12abc' }), 'nonce'],
    ['a fractional block', op({ fromBlock: 1.5 }), 'fromBlock'],
  ])('refuses %s with an ArgumentError before any request', async (_name, params, path) => {
    const chain = mockChain({ entryPoint: ENTRY_POINT, currentNonce: 0n, latest: 0n });
    const error = await confirmUserOperation({ rpc: chain.provider, ...params }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as ArgumentError).issues.map((i) => i.path)).toContain(path);
    expect(chain.calls).toEqual([]);
  });

  it('refuses an rpc that is neither an http(s) URL nor a provider, and bad options, before any request', async () => {
    const fetch = vi.fn();
    vi.stubGlobal('fetch', fetch);
    for (const rpc of ['ws://127.0.0.1:8545', 'not a url', { send: () => {} }, 42]) {
      await expect(confirmUserOperation({ rpc: rpc as never, ...op() })).rejects.toBeInstanceOf(
        ArgumentError,
      );
    }
    const chain = mockChain({ entryPoint: ENTRY_POINT, currentNonce: 0n, latest: 0n });
    await expect(
      confirmUserOperation({ rpc: chain.provider, ...op() }, { timeoutMs: -1 }),
    ).rejects.toBeInstanceOf(ArgumentError);
    expect(fetch).not.toHaveBeenCalled();
    expect(chain.calls).toEqual([]);
  });

  it('types what a node answers that is no answer: never a TypeError', async () => {
    const cases: [string, (method: string) => unknown][] = [
      ['a nonce that is not a word', (m) => (m === 'eth_call' ? '0x12' : undefined)],
      ['no contract at the entry point', (m) => (m === 'eth_call' ? '0x' : undefined)],
      ['a block that is not a quantity', (m) => (m === 'eth_blockNumber' ? 17 : undefined)],
      ['logs that are not a list', (m) => (m === 'eth_getLogs' ? { logs: [] } : undefined)],
      [
        'a log without topics',
        (m) => (m === 'eth_getLogs' ? [{ address: ENTRY_POINT, data: '0x' }] : undefined),
      ],
      ['null', () => null],
    ];
    for (const [name, answer] of cases) {
      const chain = mockChain({ entryPoint: ENTRY_POINT, currentNonce: NONCE + 1n, latest: 5n }, (call) =>
        answer(call.method),
      );
      const error = await confirmUserOperation({ rpc: chain.provider, ...op() }).catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(ResponseValidationError);
    }
  });

  it('refuses an event for the hash that names another sender or nonce', async () => {
    const chain = mockChain({
      entryPoint: ENTRY_POINT,
      currentNonce: NONCE + 1n,
      latest: 5n,
      included: [
        { userOpHash: HASH, sender: '0x2222222222222222222222222222222222222222', nonce: NONCE, block: 5n },
      ],
    });
    const error = await confirmUserOperation({ rpc: chain.provider, ...op() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).message).toMatch(/another sender/);
  });

  it('retries a node that is passing through trouble, and not one that refuses the request', async () => {
    const busy = mockChain({ entryPoint: ENTRY_POINT, currentNonce: NONCE, latest: 5n }, (call, count) => {
      if (call.method === 'eth_call' && count < 3)
        throw Object.assign(new Error('limit exceeded'), { code: -32005 });
      return undefined;
    });
    // The backoff between tries is the SDK's of a second and more: on the test's clock, no real wait.
    useTestClock();
    await expect(
      leaping(confirmUserOperation({ rpc: busy.provider, ...op() }, { maxRetries: 2 })),
    ).resolves.toMatchObject({ status: 'pending' });
    expect(busy.methods()).toEqual(['eth_call', 'eth_call', 'eth_call']);

    const refusing = mockChain({ entryPoint: ENTRY_POINT, currentNonce: NONCE, latest: 5n }, () => {
      throw Object.assign(new Error('invalid params'), { code: -32602 });
    });
    const error = await confirmUserOperation({ rpc: refusing.provider, ...op() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainRpcError);
    expect(error).toMatchObject({ method: 'eth_call', code: -32602, retryable: false, endpoint: 'provider' });
    expect(refusing.calls).toHaveLength(1);
  });

  it('bounds each read by timeoutMs and stops at the signal', async () => {
    const hanging = { request: () => new Promise(() => {}) };
    useTestClock();
    const timedOut = await leaping(
      confirmUserOperation({ rpc: hanging, ...op() }, { timeoutMs: 20, maxRetries: 1 }),
    ).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(TimeoutError);
    expect(timedOut).toMatchObject({ method: 'eth_call', attempts: 2 });

    const controller = new AbortController();
    const pending = confirmUserOperation({ rpc: hanging, ...op() }, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortError);
  });

  describe('over an RPC URL', () => {
    const URL_WITH_KEY = 'https://rpc.example.com/v2/sEcReTkEy123456?token=abc';

    it('posts JSON-RPC with the runtime fetch and reads the result', async () => {
      const bodies: { method: string; params: unknown[] }[] = [];
      vi.stubGlobal(
        'fetch',
        vi.fn(async (url: string, init: RequestInit) => {
          expect(url).toBe(URL_WITH_KEY);
          const body = JSON.parse(String(init.body));
          bodies.push(body);
          return new Response(
            JSON.stringify({
              jsonrpc: '2.0',
              id: body.id,
              result: `0x${NONCE.toString(16).padStart(64, '0')}`,
            }),
          );
        }),
      );
      await expect(confirmUserOperation({ rpc: URL_WITH_KEY, ...op() })).resolves.toMatchObject({
        status: 'pending',
      });
      expect(bodies[0]).toMatchObject({ jsonrpc: '2.0', method: 'eth_call' });
    });

    it('types HTTP errors, JSON-RPC errors, broken bodies and connection failures, never naming the URL past its origin', async () => {
      const answers: (() => Response | Promise<Response>)[] = [
        () => new Response('busy', { status: 503 }),
        () =>
          new Response(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'bad' } })),
        () => new Response('<html>', { status: 200 }),
        () => Promise.reject(new TypeError(`fetch failed for ${URL_WITH_KEY}`)),
      ];
      const expected = [ChainRpcError, ChainRpcError, ResponseValidationError, ConnectionError];
      for (const [i, answer] of answers.entries()) {
        vi.stubGlobal('fetch', vi.fn(answer));
        const error = await confirmUserOperation({ rpc: URL_WITH_KEY, ...op() }, { maxRetries: 0 }).catch(
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(expected[i]!);
        const shown = `${(error as Error).message} ${JSON.stringify(error)} ${String((error as Error).cause)}`;
        expect(shown).not.toContain('sEcReTkEy');
        expect(shown).not.toContain('token=abc');
      }
    });
  });
});
