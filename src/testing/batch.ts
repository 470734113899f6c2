import { encodeFunctionData, erc20Abi, pad, parseAbi, toHex } from 'viem';
import { entryPoint07Address, entryPoint08Address, getUserOperationHash } from 'viem/account-abstraction';
import { parseArgs } from '../core/args.js';
import { MAV2_7702_DELEGATE_V100, OWNER_NONCE_KEY } from '../onchain/constants.js';
import type { BridgeBundle, BridgeRoute, BundleCall } from '../schemas/bridge.js';
import type { Address, Hex } from '../schemas/common.js';
import { batchCallsArgs, buildBundleArgs, rehashArgs } from './simulator/args.js';

const spokePoolAbi = parseAbi([
  'function deposit(bytes32 depositor, bytes32 recipient, bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, bytes32 exclusiveRelayer, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityParameter, bytes message)',
  'function depositV3(address depositor, address recipient, address inputToken, address outputToken, uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, address exclusiveRelayer, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityDeadline, bytes message)',
]);
/** The paymaster a built batch names unless told otherwise (the chain tests sponsor from it). */
export const SIMULATOR_PAYMASTER: Address = '0x2cc0c7981D846b9F2a16276556f6e8cb52BfB633';

const accountAbi = parseAbi(['function executeBatch((address target, uint256 value, bytes data)[] calls)']);

/** What `buildBridgeBundle` builds a batch from. */
export interface BuildBridgeBundleParams {
  route: BridgeRoute;
  wallet: Address;
  amountInRaw: bigint;
  amountOutRaw: bigint;
  gasFeeRaw: bigint;
  /** Unix seconds. */
  quoteTimestamp: number;
  /** Unix seconds. */
  fillDeadline: number;
  /** The wallet's EIP-7702 nonce when it still has to delegate; `null` when it is delegated already. */
  authorizationNonce: number | null;
  entryPoint?: Address;
  delegate?: Address;
  depositFunction?: 'deposit' | 'depositV3';
  exclusiveRelayer?: Address;
  exclusivityParameter?: number;
  paymaster?: Address | null;
  /** The user operation's sequence number under its nonce key. */
  sequence?: bigint;
  /**
   * The EntryPoint v0.7 nonce key (the upper 192 bits of the nonce): 1, the owner's validation key,
   * unless told otherwise.
   */
  nonceKey?: bigint;
}

/** The JSON form of a v0.7 user operation's fields as bigint, for viem. */
export function userOperationForViem(userOp: Record<string, unknown>) {
  const big = (name: string) => BigInt(userOp[name] as string);
  return {
    sender: userOp.sender as Address,
    nonce: big('nonce'),
    callData: userOp.callData as Hex,
    callGasLimit: big('callGasLimit'),
    verificationGasLimit: big('verificationGasLimit'),
    preVerificationGas: big('preVerificationGas'),
    maxFeePerGas: big('maxFeePerGas'),
    maxPriorityFeePerGas: big('maxPriorityFeePerGas'),
    signature: '0x' as Hex,
    ...(userOp.factory
      ? { factory: userOp.factory as Address, factoryData: (userOp.factoryData ?? '0x') as Hex }
      : {}),
    ...(userOp.paymaster
      ? {
          paymaster: userOp.paymaster as Address,
          paymasterVerificationGasLimit: big('paymasterVerificationGasLimit'),
          paymasterPostOpGasLimit: big('paymasterPostOpGasLimit'),
          paymasterData: (userOp.paymasterData ?? '0x') as Hex,
        }
      : {}),
  };
}

/**
 * Recomputes `userOpHash` with viem after a change to the bundle, as a forger would: a test of a
 * verifier then shows that only the check aimed at catches the change.
 *
 * @example
 * const forged = rehashBundle({ ...bundle, userOp: { ...bundle.userOp, sender: attacker } });
 * expect(() => verifyBridgeBatch({ route, construct: { ...built, bundle: forged }, wallet })).toThrow();
 */
export function rehashBundle(bundle: BridgeBundle): BridgeBundle {
  return rehash(parseArgs(rehashArgs, bundle, 'rehashBundle') as unknown as BridgeBundle);
}

/** `rehashBundle` for a bundle known to be well formed: the one `buildBridgeBundle` just built. */
function rehash(bundle: BridgeBundle): BridgeBundle {
  const version = bundle.entryPoint.toLowerCase() === entryPoint08Address.toLowerCase() ? '0.8' : '0.7';
  const userOperation = userOperationForViem(bundle.userOp);
  const userOpHash = getUserOperationHash({
    chainId: bundle.chainId,
    entryPointAddress: bundle.entryPoint,
    entryPointVersion: version,
    userOperation:
      version === '0.8' && bundle.authorization
        ? { ...userOperation, authorization: { ...bundle.authorization, r: '0x0', s: '0x0', yParity: 0 } }
        : userOperation,
  } as Parameters<typeof getUserOperationHash>[0]);
  return { ...bundle, userOpHash };
}

/**
 * `executeBatch` call data for a list of calls, encoded by viem.
 *
 * @example
 * bundle.userOp.callData = encodeBatchCallData(bundle.calls);
 */
export function encodeBatchCallData(calls: readonly BundleCall[]): Hex {
  return encodeCalls(parseArgs(batchCallsArgs, calls, 'encodeBatchCallData'));
}

function encodeCalls(calls: readonly { target: Address; value: string | bigint | number; data: Hex }[]): Hex {
  return encodeFunctionData({
    abi: accountAbi,
    functionName: 'executeBatch',
    args: [calls.map((call) => ({ target: call.target, value: BigInt(call.value), data: call.data }))],
  });
}

/**
 * Builds a real bridge bundle, as the service builds one: ERC-20 approve, Across deposit and fee
 * transfer, wrapped in an MAv2 `executeBatch` user operation with its EntryPoint hash.
 *
 * @example
 * const bundle = buildBridgeBundle({
 *   route, wallet, amountInRaw: 25_500_000n, amountOutRaw: 25_474_500_000_000_000_000n, gasFeeRaw: 120_000n,
 *   quoteTimestamp: now, fillDeadline: now + 3 * 3600 + 900, authorizationNonce: 0,
 * });
 */
export function buildBridgeBundle(input: BuildBridgeBundleParams): BridgeBundle {
  const params = parseArgs(buildBundleArgs, input, 'buildBridgeBundle');
  const { route, wallet } = params;
  const word = (address: Address) => pad(address, { size: 32 });
  const relayer = params.exclusiveRelayer ?? '0x0000000000000000000000000000000000000000';
  const depositArgs = [params.amountInRaw, params.amountOutRaw, BigInt(route.to.chainId)] as const;
  const tail = [params.quoteTimestamp, params.fillDeadline, params.exclusivityParameter ?? 0, '0x'] as const;
  const depositData =
    params.depositFunction === 'depositV3'
      ? encodeFunctionData({
          abi: spokePoolAbi,
          functionName: 'depositV3',
          args: [
            wallet,
            wallet,
            route.from.contractAddress,
            route.to.contractAddress,
            ...depositArgs,
            relayer,
            ...tail,
          ],
        })
      : encodeFunctionData({
          abi: spokePoolAbi,
          functionName: 'deposit',
          args: [
            word(wallet),
            word(wallet),
            word(route.from.contractAddress),
            word(route.to.contractAddress),
            ...depositArgs,
            word(relayer),
            ...tail,
          ],
        });
  const calls: BundleCall[] = [
    {
      target: route.targets.token,
      value: '0x0',
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: 'approve',
        args: [route.targets.bridge, params.amountInRaw],
      }),
    },
    { target: route.targets.bridge, value: '0x0', data: depositData },
  ];
  if (params.gasFeeRaw > 0n) {
    calls.push({
      target: route.targets.token,
      value: '0x0',
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: 'transfer',
        args: [route.targets.treasury, params.gasFeeRaw],
      }),
    });
  }
  const entryPoint = params.entryPoint ?? entryPoint07Address;
  const delegate = params.delegate ?? MAV2_7702_DELEGATE_V100;
  const paymaster = params.paymaster === undefined ? SIMULATOR_PAYMASTER : params.paymaster;
  const userOp: Record<string, unknown> & { sender: Address } = {
    sender: wallet,
    nonce: toHex(((params.nonceKey ?? OWNER_NONCE_KEY) << 64n) | (params.sequence ?? 0n)),
    callData: encodeCalls(calls),
    callGasLimit: toHex(250_000n),
    verificationGasLimit: toHex(120_000n),
    preVerificationGas: toHex(60_000n),
    maxFeePerGas: toHex(1_500_000_000n),
    maxPriorityFeePerGas: toHex(1_000_000n),
    ...(paymaster
      ? {
          paymaster,
          paymasterVerificationGasLimit: toHex(60_000n),
          paymasterPostOpGasLimit: toHex(20_000n),
          paymasterData: `0x${'5a'.repeat(20)}`,
        }
      : {}),
    signature: '0x',
  };
  return rehash({
    chainId: route.from.chainId,
    entryPoint,
    delegate,
    calls,
    userOp,
    userOpHash: '0x',
    authorization:
      params.authorizationNonce === null
        ? null
        : { chainId: route.from.chainId, address: delegate, nonce: params.authorizationNonce },
  });
}
