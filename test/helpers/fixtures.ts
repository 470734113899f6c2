import type { BridgeConstructResult, BridgeQuote, BridgeRoute, BridgeTransfer } from '../../src/index.js';

export const WALLET = '0x6969174FD72466430a46e18234D0b530c9FD5f49';

export function route(overrides: Partial<BridgeRoute> = {}): BridgeRoute {
  return {
    routeId: 'base-usdc-to-bsc-usdc',
    provider: 'across',
    from: {
      symbol: 'USDC',
      chain: 'base',
      chainId: 8453,
      contractAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      decimals: 6,
    },
    to: {
      symbol: 'USDC',
      chain: 'bsc',
      chainId: 56,
      contractAddress: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
      decimals: 18,
    },
    limits: {
      minAmount: '1',
      maxAmount: '50000',
      minAmountRaw: '1000000',
      maxAmountRaw: '50000000000',
      fetchedAt: '2026-11-22T10:00:00.000Z',
    },
    targets: {
      bridge: '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64',
      token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      treasury: '0x1111111111111111111111111111111111111111',
    },
    ...overrides,
  };
}

export function quote(overrides: Partial<BridgeQuote> = {}): BridgeQuote {
  return {
    routeId: 'base-usdc-to-bsc-usdc',
    amountIn: '25.5',
    amountInRaw: '25500000',
    amountOut: '25.45',
    amountOutRaw: '25450000000000000000',
    providerFee: '0.05',
    providerFeeRaw: '50000',
    gasFee: '0.12',
    gasFeeRaw: '120000',
    gasFeeToken: 'USDC',
    etaSec: 4,
    expiresAt: '2026-11-22T10:05:00.000Z',
    limits: route().limits,
    ...overrides,
  };
}

export function transfer(overrides: Partial<BridgeTransfer> = {}): BridgeTransfer {
  return {
    transferId: 'tr_1',
    userId: 'user-1',
    routeId: 'base-usdc-to-bsc-usdc',
    status: 'submitted',
    provider: 'across',
    providerRef: '12345',
    source: {
      chain: 'base',
      chainId: 8453,
      token: 'USDC',
      tokenAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      decimals: 6,
      amount: '25.5',
      amountRaw: '25500000',
    },
    destination: {
      chain: 'bsc',
      chainId: 56,
      token: 'USDC',
      tokenAddress: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
      decimals: 18,
      amount: '25.45',
      amountRaw: '25450000000000000000',
    },
    providerFee: '0.05',
    providerFeeRaw: '50000',
    gasFee: '0.12',
    gasFeeRaw: '120000',
    gasFeeToken: 'USDC',
    srcTxHash: '0xabc',
    dstTxHash: null,
    refundTxHash: null,
    failureReason: null,
    createdAt: '2026-11-22T10:00:00.000Z',
    updatedAt: '2026-11-22T10:00:01.000Z',
    ...overrides,
  };
}

export function constructResult(): BridgeConstructResult {
  return {
    transferId: 'tr_1',
    intentId: 'int_1',
    quote: quote(),
    bundle: {
      chainId: 8453,
      entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
      delegate: '0x69007702764179f14F51cdce752f4f775d74E139',
      calls: [{ target: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', value: '0x0', data: '0x095ea7b3' }],
      userOp: { sender: WALLET, nonce: '0x10000000000000000', callData: '0x34fcd5be' },
      userOpHash: `0x${'ab'.repeat(32)}`,
      authorization: { chainId: 8453, address: '0x69007702764179f14F51cdce752f4f775d74E139', nonce: 0 },
    },
  };
}
