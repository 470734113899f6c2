import { decodeFunctionData, parseAbi } from 'viem';
import { describe, expect, it } from 'vitest';
import { quote, route } from '../../fixtures/wire.js';
import {
  ArgumentError,
  BatchVerificationError,
  type BridgeConstructResult,
  ENTRY_POINT_V08,
  MAV2_7702_DELEGATE_V110,
  type VerifyBridgeBatchOptions,
  verifyBridgeBatch,
} from '../../src/index.js';
import { buildBridgeBundle, encodeBatchCallData } from '../../src/testing/index.js';
import { polygonToArbitrum, tv1, tv2, tvNow, withDeposit } from '../helpers/across-vectors.js';
import {
  ATTACKER,
  addressWord,
  forge,
  forgeWord,
  issuesOf,
  NOW,
  setWord,
  USER,
  unsponsor,
  validConstruct,
} from '../helpers/batches.js';

describe('verifyBridgeBatch accepts what is asked for', () => {
  it('a batch built as the service builds it, with a summary', () => {
    const construct = validConstruct();
    const summary = verifyBridgeBatch({
      route: route(),
      construct,
      wallet: USER,
      amount: '25.5',
      now: NOW,
    });
    expect(summary.source).toMatchObject({
      chainId: 8453,
      amount: '25.5',
      amountRaw: 25_500_000n,
      decimals: 6,
    });
    expect(summary.destination).toMatchObject({
      chainId: 56,
      amount: '25.45',
      amountRaw: 25_450_000_000_000_000_000n,
      decimals: 18,
    });
    expect(summary.gasFee).toMatchObject({ amount: '0.12', amountRaw: 120_000n, symbol: 'USDC' });
    expect(summary.totalDebit).toEqual({ amount: '25.62', amountRaw: 25_620_000n });
    expect(summary.needsAuthorization).toBe(true);
    expect(summary.entryPointVersion).toBe('0.7');
    expect(summary.depositFunction).toBe('deposit');
    expect(summary.fillDeadline.getTime()).toBe(NOW + 3 * 3600 * 1000);
    expect(summary.userOpHash).toBe(construct.bundle.userOpHash);
    expect(summary.feeBps).toBe(67); // (0.05 + 0.12) / 25.5 = 66.7 bps, rounded up
    expect(summary.source.known).toBe(true);
    expect(summary.destination.known).toBe(true);
    expect(summary.digest).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Object.isFrozen(summary)).toBe(true);
    expect(Object.isFrozen(summary.source)).toBe(true);
  });

  it('with the wallet address in any case, and without an amount (maxAmount)', () => {
    expect(
      verifyBridgeBatch({
        route: route(),
        construct: validConstruct(),
        wallet: USER.toLowerCase(),
        now: NOW,
      }).source.amount,
    ).toBe('25.5');
  });

  it('is synchronous, and an await in front of it still works', async () => {
    const params = { route: route(), construct: validConstruct(), wallet: USER, amount: '25.5', now: NOW };
    const summary = verifyBridgeBatch(params);
    expect(summary).not.toBeInstanceOf(Promise);
    expect((await verifyBridgeBatch(params)).digest).toBe(summary.digest);
  });

  it('an already delegated wallet (no authorization)', () => {
    const summary = verifyBridgeBatch({
      route: route(),
      construct: validConstruct({ authorizationNonce: null }),
      wallet: USER,
      now: NOW,
    });
    expect(summary.needsAuthorization).toBe(false);
  });

  it('no fee transfer when no gas fee is charged', () => {
    const r = route();
    const q = quote({ gasFee: '0', gasFeeRaw: '0' });
    const bundle = buildBridgeBundle({
      route: r,
      wallet: USER,
      amountInRaw: 25_500_000n,
      amountOutRaw: BigInt(q.amountOutRaw),
      gasFeeRaw: 0n,
      quoteTimestamp: NOW / 1000,
      fillDeadline: NOW / 1000 + 3 * 3600 + 900,
      authorizationNonce: 0,
    });
    expect(bundle.calls).toHaveLength(2);
    expect(
      verifyBridgeBatch({
        route: r,
        construct: { transferId: 't', intentId: 'i', bundle, quote: q },
        wallet: USER,
        now: NOW,
      }).gasFee.amountRaw,
    ).toBe(0n);
  });

  it('EntryPoint v0.8 (EIP-712 hash), the v1.1.0 delegate and depositV3', () => {
    const r = route();
    const q = quote();
    const bundle = buildBridgeBundle({
      route: r,
      wallet: USER,
      amountInRaw: 25_500_000n,
      amountOutRaw: BigInt(q.amountOutRaw),
      gasFeeRaw: 120_000n,
      quoteTimestamp: NOW / 1000,
      fillDeadline: NOW / 1000 + 3 * 3600 + 900,
      authorizationNonce: 9,
      entryPoint: ENTRY_POINT_V08,
      delegate: MAV2_7702_DELEGATE_V110,
      depositFunction: 'depositV3',
      exclusiveRelayer: '0xcad97616f91872c02ba3553db315db4015cbe850',
      exclusivityParameter: 5,
    });
    const summary = verifyBridgeBatch({
      route: r,
      construct: { transferId: 't', intentId: 'i', bundle, quote: q },
      wallet: USER,
      now: NOW,
    });
    expect(summary.entryPointVersion).toBe('0.8');
    expect(summary.depositFunction).toBe('depositV3');
    expect(summary.exclusiveRelayer?.toLowerCase()).toBe('0xcad97616f91872c02ba3553db315db4015cbe850');
  });

  it('the real Across calldata vectors (TV-1 with an integrator tag, TV-2 canonical)', () => {
    const verify = (construct: BridgeConstructResult, options?: VerifyBridgeBatchOptions) =>
      verifyBridgeBatch(
        { route: polygonToArbitrum, construct, wallet: USER, amount: '0.130592', now: tvNow },
        options,
      );

    // Accepted by default: every tagged production deposit carries the tag.
    const tagged = verify(withDeposit(tv1));
    expect(tagged.integratorSuffix).toBe('0x1dc0de0000');
    expect(tagged.depositFunction).toBe('depositV3');
    expect(tagged.fillDeadline.getTime()).toBe(1718657594 * 1000);
    expect(tagged.quoteTimestamp.getTime()).toBe(1718635895 * 1000);
    expect(tagged.feeBps).toBe(1757);
    expect(() => verify(withDeposit(tv1), { allowIntegratorSuffix: false })).toThrow(
      expect.objectContaining({ issues: [expect.objectContaining({ check: 'deposit.encoding' })] }),
    );
    const canonical = verify(withDeposit(tv2));
    expect(canonical.depositFunction).toBe('deposit');
    expect(canonical.integratorSuffix).toBeNull();
    // The tag is safe: the SpokePool decodes exactly the same deposit with it as without it.
    const abi = parseAbi([
      'function depositV3(address depositor, address recipient, address inputToken, address outputToken, uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, address exclusiveRelayer, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityDeadline, bytes message)',
    ]);
    expect(decodeFunctionData({ abi, data: tv1 as `0x${string}` }).args).toEqual(
      decodeFunctionData({ abi, data: `0x7b939232${tv2.slice(10)}` as `0x${string}` }).args,
    );
    // Any other trailing bytes stay an issue: the Swap API marker, a longer tag, a bare marker.
    for (const tail of ['73c0de', '1dc0de000000', '1dc0de', '00']) {
      expect(
        issuesOfCall(() => verify(withDeposit(`${tv2}${tail}`))),
        tail,
      ).toContain('deposit.encoding');
    }
  });
});

function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

function issuesOfCall(run: () => unknown): string[] {
  const error = caught(run);
  return error instanceof BatchVerificationError ? error.issues.map((issue) => issue.check) : [];
}

type Case = [check: string, make: () => BridgeConstructResult, extra?: Parameters<typeof issuesOf>[1]];

const deposit = (c: BridgeConstructResult) => c.bundle.calls[1]!;
const cases: Case[] = [
  [
    'shape.construct',
    () => ({ ...validConstruct(), bundle: { ...validConstruct().bundle, calls: 'nope' } }) as never,
  ],
  ['shape.route', validConstruct, { route: { ...route(), targets: undefined } as never }],
  ['route.id', () => forge((c) => (c.quote.routeId = 'another-route'))],
  [
    'route.chain',
    () =>
      forge((c) => {
        c.bundle.chainId = 10;
        c.bundle.authorization!.chainId = 10;
      }),
  ],
  [
    'route.token',
    validConstruct,
    { route: { ...route(), targets: { ...route().targets, token: ATTACKER } } },
  ],
  ['quote.amountIn', () => forge((c) => (c.quote.amountIn = '2550'))],
  ['quote.amountOut', () => forge((c) => (c.quote.amountOut = '254.5'))],
  ['quote.gasFee', () => forge((c) => (c.quote.gasFee = '0.012'))],
  ['quote.gasFeeToken', () => forge((c) => (c.quote.gasFeeToken = 'ETH'))],
  ['request.amount', validConstruct, { amount: '25' }],
  ['request.amount', validConstruct, { amount: '25.5000001' }],
  ['quote.expiry', validConstruct, { now: Date.parse('2026-11-22T10:04:50.000Z') }],
  [
    'entryPoint.allowed',
    () => forge((c) => (c.bundle.entryPoint = '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789')),
  ],
  [
    'delegate.allowed',
    () =>
      forge((c) => {
        c.bundle.delegate = ATTACKER;
        c.bundle.authorization!.address = ATTACKER;
      }),
  ],
  ['authorization.chain', () => forge((c) => (c.bundle.authorization!.chainId = 1))],
  ['authorization.chain', () => forge((c) => (c.bundle.authorization!.chainId = 0))],
  ['authorization.delegate', () => forge((c) => (c.bundle.authorization!.address = MAV2_7702_DELEGATE_V110))],
  ['userOp.sender', () => forge((c) => (c.bundle.userOp.sender = ATTACKER))],
  ['userOp.fields', () => forge((c) => delete c.bundle.userOp.callGasLimit, { rehash: false })],
  ['userOp.fields', () => forge((c) => (c.bundle.userOp.maxFeePerGas = 1.5), { rehash: false })],
  [
    'userOp.paymaster',
    () =>
      forge((c) => {
        unsponsor(c.bundle.userOp);
      }),
  ],
  [
    'userOp.callData',
    () =>
      forge(
        (c) => {
          const hidden = structuredClone(c.bundle.calls);
          hidden.push({
            target: c.bundle.calls[0]!.target,
            value: '0x0',
            data: setWord(c.bundle.calls[2]!.data, 0, addressWord(ATTACKER)),
          });
          c.bundle.userOp.callData = encodeBatchCallData(hidden);
        },
        { reencode: false },
      ),
  ],
  [
    'userOp.callData',
    () =>
      forge(
        (c) => {
          c.bundle.userOp.callData = `0x8dd7712f${encodeBatchCallData(c.bundle.calls).slice(2)}`;
        },
        { reencode: false },
      ),
  ],
  ['userOp.hash', () => forge((c) => (c.bundle.userOpHash = `0x${'12'.repeat(32)}`), { rehash: false })],
  ['userOp.hash', () => forge((c) => (c.bundle.userOp.preVerificationGas = '0x1'), { rehash: false })],
  ['calls.count', () => forge((c) => c.bundle.calls.pop())],
  ['calls.count', () => forge((c) => c.bundle.calls.push(structuredClone(c.bundle.calls[2]!)))],
  ['calls.value', () => forge((c) => (c.bundle.calls[1]!.value = '0x1'))],
  ['approve.target', () => forge((c) => (c.bundle.calls[0]!.target = ATTACKER))],
  ['approve.encoding', () => forge((c) => (c.bundle.calls[0]!.data = `${c.bundle.calls[0]!.data}00`))],
  ['approve.encoding', () => forgeWord(0, 0, `ff${addressWord(route().targets.bridge).slice(2)}`)],
  ['approve.spender', () => forgeWord(0, 0, addressWord(ATTACKER))],
  ['approve.amount', () => forgeWord(0, 1, 'f'.repeat(64))],
  ['deposit.target', () => forge((c) => (deposit(c).target = ATTACKER))],
  ['deposit.selector', () => forge((c) => (deposit(c).data = `0x1186ec33${deposit(c).data.slice(10)}`))],
  ['deposit.encoding', () => forge((c) => (deposit(c).data = `${deposit(c).data}1dc0de000100`))],
  [
    'deposit.encoding',
    () => forge((c) => (deposit(c).data = `${deposit(c).data}1dc0de0001`)),
    { options: { allowIntegratorSuffix: false } },
  ],
  ['deposit.encoding', () => forgeWord(1, 0, `01${addressWord(USER).slice(2)}`)],
  ['deposit.encoding', () => forgeWord(1, 9, (2n ** 40n).toString(16))],
  [
    'deposit.encoding',
    () => forge((c) => (deposit(c).data = deposit(c).data.slice(0, -64) as `0x${string}`)),
  ],
  ['deposit.depositor', () => forgeWord(1, 0, addressWord(ATTACKER))],
  ['deposit.recipient', () => forgeWord(1, 1, addressWord(ATTACKER))],
  ['deposit.inputToken', () => forgeWord(1, 2, addressWord(ATTACKER))],
  ['deposit.outputToken', () => forgeWord(1, 3, addressWord(ATTACKER))],
  ['deposit.inputAmount', () => forgeWord(1, 4, 25_500_001n.toString(16))],
  ['deposit.outputAmount', () => forgeWord(1, 5, 1n.toString(16))],
  ['deposit.destinationChain', () => forgeWord(1, 6, 10n.toString(16))],
  [
    'deposit.message',
    () =>
      forge((c) => {
        deposit(c).data =
          `${setWord(deposit(c).data, 12, '4')}${'ab'.repeat(4).padEnd(64, '0')}` as `0x${string}`;
      }),
  ],
  ['deposit.exclusivity', () => forgeWord(1, 10, '5')],
  ['deposit.fillDeadline', () => forgeWord(1, 9, (NOW / 1000 - 1).toString(16))],
  ['fee.target', () => forge((c) => (c.bundle.calls[2]!.target = ATTACKER))],
  [
    'fee.encoding',
    () => forge((c) => (c.bundle.calls[2]!.data = `0x23b872dd${c.bundle.calls[2]!.data.slice(10)}`)),
  ],
  ['fee.encoding', () => forgeWord(2, 0, `ff${addressWord(route().targets.treasury).slice(2)}`)],
  ['fee.recipient', () => forgeWord(2, 0, addressWord(ATTACKER))],
  ['fee.amount', () => forgeWord(2, 1, 120_001n.toString(16))],
];

describe('verifyBridgeBatch rejects a forged batch', () => {
  it.each(cases)('%s', (check, make, extra) => {
    const issues = issuesOf(make(), extra);
    expect(issues).toContain(check);
  });

  it('rejects a batch for another wallet', () => {
    expect(issuesOf(validConstruct(), { wallet: ATTACKER })).toEqual(
      expect.arrayContaining(['userOp.sender', 'deposit.depositor', 'deposit.recipient']),
    );
  });

  it('accepts a batch without paymaster only when asked to', () => {
    const unsponsored = forge((c) => {
      unsponsor(c.bundle.userOp);
    });
    expect(issuesOf(unsponsored, { options: { requirePaymaster: false } })).toEqual([]);
  });

  it('checks the route the partner read, not one the service echoes', () => {
    const reverse = route({ routeId: 'bsc-usdc-to-base-usdc' });
    expect(issuesOf(validConstruct(), { route: reverse })).toContain('route.id');
  });

  it('names every failure with expected and actual values', () => {
    const construct = forge(
      (c) => (c.bundle.calls[0]!.data = setWord(c.bundle.calls[0]!.data, 1, 'f'.repeat(64))),
    );
    const error = caught(() =>
      verifyBridgeBatch({ route: route(), construct, wallet: USER, amount: '25.5', now: NOW }),
    ) as BatchVerificationError;
    const issue = error.issues.find((i) => i.check === 'approve.amount')!;
    expect(issue.expected).toBe('25500000');
    expect(issue.actual).toBe((2n ** 256n - 1n).toString());
  });

  it('rejects bad arguments as an ArgumentError', () => {
    expect(() => verifyBridgeBatch({ route: route(), construct: validConstruct(), wallet: 'me' })).toThrow(
      ArgumentError,
    );
    expect(() =>
      verifyBridgeBatch({ route: route(), construct: validConstruct(), wallet: USER, amount: '-1' }),
    ).toThrow(ArgumentError);
    expect(() => verifyBridgeBatch(undefined as never)).toThrow(ArgumentError);
  });

  it('refuses a numeric now below 1e12 (seconds read as ms would switch the time checks off)', () => {
    const params = { route: route(), construct: validConstruct(), wallet: USER, amount: '25.5' };
    for (const now of [NOW / 1000, 0, new Date(NOW / 1000)]) {
      expect(() => verifyBridgeBatch({ ...params, now }), String(now)).toThrow(ArgumentError);
    }
    expect(verifyBridgeBatch({ ...params, now: new Date(NOW) }).source.amount).toBe('25.5');
  });

  it('takes an option of the wrong kind as an ArgumentError, never as a looser check', () => {
    const params = { route: route(), construct: validConstruct(), wallet: USER, amount: '25.5', now: NOW };
    const unsponsored = forge((c) => {
      delete c.bundle.userOp.paymaster;
    });
    for (const options of [
      { allowIntegratorSuffix: 'yes' },
      { requirePaymaster: 0 },
      { entryPoints: USER },
      { delegates: ['not an address'] },
      { expiryMarginMs: -1 },
      { expiryMarginMs: Number.NaN },
      { maxFeeBps: -1 },
      { maxFeeBps: 1.5 },
      { maxFeeBps: '100' },
      { bridges: ['0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64'] },
      { bridges: { 8453: 'nope' } },
      { bridges: { 0: '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64' } },
      { bridges: { 8453: [] } },
      { tokens: {} },
      { tokens: [{ chainId: 8453, address: USER, symbol: 'X', decimals: -1 }] },
      { tokens: [{ chainId: '8453', address: USER, symbol: 'X', decimals: 6 }] },
      'strict',
    ]) {
      for (const construct of [params.construct, unsponsored]) {
        expect(
          () => verifyBridgeBatch({ ...params, construct }, options as never),
          JSON.stringify(options),
        ).toThrow(ArgumentError);
      }
    }
  });

  it('reads its input once: a getter cannot pass one check and answer otherwise later', () => {
    let reads = 0;
    const params = {
      route: route(),
      construct: validConstruct(),
      amount: '25.5',
      now: NOW,
      get wallet() {
        reads++;
        return reads === 1 ? USER : ATTACKER;
      },
    };
    verifyBridgeBatch(params);
    expect(reads).toBe(1);
  });
});
