import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Abi,
  type Address,
  BaseError,
  createTestClient,
  decodeErrorResult,
  defineChain,
  encodeFunctionData,
  type Hex,
  http,
  type Log,
  pad,
  parseAbi,
  parseEventLogs,
  publicActions,
  type SignedAuthorization,
  walletActions,
  zeroAddress,
} from 'viem';
import { entryPoint07Abi, entryPoint07Address, toPackedUserOperation } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import type { AuthorizationSignature, BridgeBundle, BridgeRoute } from '../../src/index.js';
import { MAV2_7702_DELEGATE_V100 } from '../../src/index.js';
import { SIMULATOR_PAYMASTER, userOperationForViem } from '../../src/testing/batch.js';
import { createPartnerSimulator } from '../../src/testing/index.js';
import {
  ANVIL_VERSION,
  anvilPackage,
  CHAIN_CACHE,
  CHAIN_PACKAGES,
  cachedPackagePath,
  ensureChainPackages,
} from './chain-packages.js';
import { skipOrFail } from './shared.js';
import { freePort, spawnServer } from './spawn-server.js';

/*
 * A chain for the tests: anvil on 127.0.0.1 (Prague, so EIP-7702 type-4 transactions), started by
 * the test and stopped by its pid, with the real contracts of the money path at the addresses the
 * simulator's route names: EntryPoint v0.7 at its canonical address (through the CREATE2 deployer
 * and the canonical salt), the MAv2 7702 account at its delegate address, an Across SpokePool behind
 * its ERC1967Proxy, a USDC stand-in, and a paymaster that sponsors every operation.
 */

/** Anvil's first unlocked account (its well-known test key): deployer, owner and bundler. */
const BUNDLER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
/** Anvil's CREATE2 deployer and the salt EntryPoint v0.7 was deployed with everywhere. */
const CREATE2_DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c';
const ENTRY_POINT_SALT = '0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3';
/** ERC-1967's implementation slot: `keccak256('eip1967.proxy.implementation') - 1`. */
const IMPLEMENTATION_SLOT = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';
/** Across's deploy constants (`@across-protocol/contracts` `dist/src/consts.js`). */
const QUOTE_TIME_BUFFER = 3600;
const FILL_DEADLINE_BUFFER = 6 * 3600;
/** Base's WETH: the SpokePool wraps native deposits into it; the tests deposit only USDC. */
const WRAPPED_NATIVE = '0x4200000000000000000000000000000000000006';

const ACCOUNT_ARTIFACT = new URL('../chain/fixtures/SemiModularAccount7702.json', import.meta.url);

export const tokenAbi = parseAbi([
  'function mint(address to, uint256 value)',
  'function balanceOf(address owner) view returns (uint256)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

export const spokePoolEvents = parseAbi([
  'event FundsDeposited(bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount, uint256 indexed destinationChainId, uint256 indexed depositId, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityDeadline, bytes32 indexed depositor, bytes32 recipient, bytes32 exclusiveRelayer, bytes message)',
]);

/** What the chain did with one user operation handed to `handleOps`. */
export type ChainOutcome =
  | {
      /** The EntryPoint refused it (`FailedOp`): nothing was sent, nothing changed. */
      status: 'refused';
      reason: string;
    }
  | {
      /** Included: its nonce is spent; `success` is false when its calls reverted. */
      status: 'included';
      success: boolean;
      userOpHash: Hex;
      transactionHash: Hex;
      /** The raw bytes of `UserOperationRevertReason`, when the calls reverted. */
      revertReason?: Hex;
      /** That revert decoded with the SpokePool's and the token's errors (`InsufficientBalance(…)`). */
      revertError?: string;
      logs: Log[];
    };

export interface ChainWorld {
  rpcUrl: string;
  chainId: number;
  entryPoint: Address;
  spokePool: Address;
  token: Address;
  treasury: Address;
  paymaster: Address;
  delegate: Address;
  /** Anvil's first account: it deployed everything, owns the SpokePool and sends `handleOps`. */
  bundler: { address: Address; privateKey: Hex };
  /** A viem test client (anvil, public and wallet actions) acting as the bundler. */
  client: ReturnType<typeof chainClient>;
  /** Mints the token stand-in to `to`. */
  mint(to: Address, amount: bigint): Promise<void>;
  balanceOf(owner: Address): Promise<bigint>;
  /** The sender's EntryPoint nonce under `key` (the full value: `key << 64 | sequence`). */
  nonceOf(sender: Address, key: bigint): Promise<bigint>;
  /**
   * Hands one signed operation to `handleOps`, as a bundler: simulated first (a refusal is the
   * EntryPoint's `FailedOp`, and nothing is sent), then sent, as a type-4 transaction carrying the
   * authorization when one is given.
   */
  submit(
    bundle: BridgeBundle,
    signed: { signature: Hex; authorization?: AuthorizationSignature },
  ): Promise<ChainOutcome>;
  stop(): Promise<void>;
}

function chainClient(rpcUrl: string, chainId: number) {
  const chain = defineChain({
    id: chainId,
    name: `anvil (chain ${chainId})`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return createTestClient({
    mode: 'anvil',
    chain,
    account: privateKeyToAccount(BUNDLER_KEY),
    transport: http(rpcUrl),
    pollingInterval: 50,
  })
    .extend(publicActions)
    .extend(walletActions);
}

/** Whether the chain tests can run here, and if not, the one line naming what was looked for where. */
export type ChainReadiness =
  | { ready: true; packages: Awaited<ReturnType<typeof ensureChainPackages>> }
  | { ready: false; missing: string };

/**
 * Fetches (or finds in `.cache/chain/`) what the chain world needs. Outside CI a test file skips
 * with the line `missing`; under CI=true a chain test that cannot start anvil fails.
 */
export async function prepareChain(): Promise<ChainReadiness> {
  try {
    return { ready: true, packages: await ensureChainPackages() };
  } catch (error) {
    const binary = anvilPackage();
    const where = binary
      ? `${binary.name}@${ANVIL_VERSION} at ${join(cachedPackagePath(binary), 'bin', 'anvil')}`
      : `an anvil binary of @foundry-rs/anvil@${ANVIL_VERSION} for ${process.platform}-${process.arch}`;
    return {
      ready: false,
      missing: `Chain tests skipped: looked for ${where} and the contracts of ${CHAIN_PACKAGES.entryPoint.name}@${CHAIN_PACKAGES.entryPoint.version} and ${CHAIN_PACKAGES.across.name}@${CHAIN_PACKAGES.across.version} in ${CHAIN_CACHE} (${(error as Error).message})`,
    };
  }
}

/** `prepareChain`, with the rule of every suite that needs a service: skip outside CI, fail in it. */
export async function chainOrSkip(): Promise<ChainReadiness> {
  const readiness = await prepareChain();
  if (!readiness.ready) skipOrFail(false, readiness.missing);
  return readiness;
}

/** The simulator's first route: where its batches say the token, the SpokePool and the treasury are. */
function simulatorRoute(): BridgeRoute {
  const sim = createPartnerSimulator({ demo: false });
  try {
    return sim.routes()[0]!;
  } finally {
    sim.close();
  }
}

/**
 * Starts anvil and deploys the money path at the addresses of `route` (by default the simulator's
 * first: Base USDC to BNB Chain), on its source chain id. `stop()` ends anvil by its pid.
 */
export async function startChainWorld(
  packages: Awaited<ReturnType<typeof ensureChainPackages>>,
  { route = simulatorRoute() }: { route?: BridgeRoute } = {},
): Promise<ChainWorld> {
  const chainId = route.from.chainId;
  const port = await freePort();
  const stop = await spawnServer(
    packages.anvil,
    ['--host', '127.0.0.1', '--port', String(port), '--hardfork', 'prague', '--chain-id', String(chainId)],
    { ready: 'Listening on', stopSignal: 'SIGTERM', orphanSignal: 'SIGKILL' },
  );
  const rpcUrl = `http://127.0.0.1:${port}`;
  const client = chainClient(rpcUrl, chainId);
  const world = {
    rpcUrl,
    chainId,
    entryPoint: entryPoint07Address,
    spokePool: route.targets.bridge,
    token: route.targets.token,
    treasury: route.targets.treasury,
    paymaster: SIMULATOR_PAYMASTER,
    delegate: MAV2_7702_DELEGATE_V100,
    bundler: { address: client.account.address, privateKey: BUNDLER_KEY as Hex },
    client,
    stop,
  };
  let errors: Abi;
  try {
    errors = await deploy(world, packages);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ...world,
    mint: async (to, amount) => {
      await confirmed(
        client,
        await client.writeContract({
          address: world.token,
          abi: tokenAbi,
          functionName: 'mint',
          args: [to, amount],
        }),
      );
    },
    balanceOf: (owner) =>
      client.readContract({ address: world.token, abi: tokenAbi, functionName: 'balanceOf', args: [owner] }),
    nonceOf: (sender, key) =>
      client.readContract({
        address: entryPoint07Address,
        abi: entryPoint07Abi,
        functionName: 'getNonce',
        args: [sender, key],
      }),
    submit: (bundle, signed) => submit(client, bundle, signed, errors),
  };
}

type WorldBase = Pick<ChainWorld, 'client' | 'spokePool' | 'token' | 'paymaster' | 'delegate' | 'bundler'>;

/** Every contract of the money path, in place; answers the errors their reverts may carry. */
async function deploy(
  world: WorldBase,
  packages: Awaited<ReturnType<typeof ensureChainPackages>>,
): Promise<Abi> {
  const { client } = world;
  const artifact = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { abi: Abi; bytecode: Hex };
  const deployed = async (abi: Abi, bytecode: Hex, args: readonly unknown[]) => {
    const receipt = await confirmed(client, await client.deployContract({ abi, bytecode, args }));
    return receipt.contractAddress!;
  };
  const codeOf = async (address: Address) => (await client.getCode({ address })) ?? '0x';

  // EntryPoint v0.7: the deployer's input is the salt followed by the creation code.
  const entryPoint = artifact(join(packages.entryPoint, 'artifacts', 'EntryPoint.json'));
  await confirmed(
    client,
    await client.sendTransaction({
      to: CREATE2_DEPLOYER,
      data: `${ENTRY_POINT_SALT}${entryPoint.bytecode.slice(2)}`,
    }),
  );
  if ((await codeOf(entryPoint07Address)) === '0x')
    throw new Error(`EntryPoint v0.7 did not land on its canonical address ${entryPoint07Address}`);

  // The account keeps the EntryPoint as an immutable: its runtime code comes from a real deployment.
  const account = JSON.parse(readFileSync(ACCOUNT_ARTIFACT, 'utf8')) as { abi: Abi; bytecode: Hex };
  const accountAt = await deployed(account.abi, account.bytecode, [entryPoint07Address]);
  await client.setCode({ address: world.delegate, bytecode: await codeOf(accountAt) });

  // The tests' own contracts hold no immutables: their runtime code goes where the route says.
  await client.setCode({ address: world.token, bytecode: packages.contracts.ChainToken!.deployedBytecode });
  await client.setCode({
    address: world.paymaster,
    bytecode: packages.contracts.ChainPaymaster!.deployedBytecode,
  });
  await confirmed(
    client,
    await client.writeContract({
      address: entryPoint07Address,
      abi: entryPoint07Abi,
      functionName: 'depositTo',
      args: [world.paymaster],
      value: 100n * 10n ** 18n,
    }),
  );

  // The SpokePool: an implementation, and its ERC1967Proxy's code at the route's bridge address
  // pointing at it, initialised there as the proxy's constructor would (owner: the bundler).
  const across = (name: string) =>
    artifact(join(packages.across, 'dist', 'evm', 'artifacts', `${name}.sol`, `${name}.json`));
  const spokePool = across('Ethereum_SpokePool');
  const implementation = await deployed(spokePool.abi, spokePool.bytecode, [
    WRAPPED_NATIVE,
    QUOTE_TIME_BUFFER,
    FILL_DEADLINE_BUFFER,
    zeroAddress,
  ]);
  const proxy = across('ERC1967Proxy');
  const proxyAt = await deployed(proxy.abi, proxy.bytecode, [implementation, '0x']);
  await client.setCode({ address: world.spokePool, bytecode: await codeOf(proxyAt) });
  await client.setStorageAt({
    address: world.spokePool,
    index: IMPLEMENTATION_SLOT,
    value: pad(implementation),
  });
  await confirmed(
    client,
    await client.writeContract({
      address: world.spokePool,
      abi: spokePool.abi,
      functionName: 'initialize',
      args: [0, world.bundler.address],
    }),
  );
  return [...spokePool.abi, ...(packages.contracts.ChainToken!.abi as Abi)].filter(
    (item) => item.type === 'error',
  );
}

async function confirmed(client: ChainWorld['client'], hash: Hex) {
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  return receipt;
}

async function submit(
  client: ChainWorld['client'],
  bundle: BridgeBundle,
  signed: { signature: Hex; authorization?: AuthorizationSignature },
  errors: Abi,
): Promise<ChainOutcome> {
  const packed = toPackedUserOperation({
    ...userOperationForViem(bundle.userOp),
    signature: signed.signature,
  });
  const data = encodeFunctionData({
    abi: entryPoint07Abi,
    functionName: 'handleOps',
    args: [[packed], client.account.address],
  });
  const authorizationList: SignedAuthorization[] =
    signed.authorization && bundle.authorization
      ? [
          {
            ...bundle.authorization,
            ...signed.authorization,
            r: signed.authorization.r as Hex,
            s: signed.authorization.s as Hex,
          },
        ]
      : [];
  const request = {
    to: entryPoint07Address,
    data,
    gas: 5_000_000n,
    ...(authorizationList.length > 0 ? { authorizationList } : {}),
  } as const;
  try {
    await client.call({ account: client.account, ...request });
  } catch (error) {
    const reason = failedOp(error);
    if (reason !== undefined) return { status: 'refused', reason };
    // No reason: the EntryPoint called a sender without code (its authorization was not applied),
    // which reverts handleOps itself.
    const code = await client.getCode({ address: bundle.userOp.sender });
    if (code === undefined || code === '0x')
      return { status: 'refused', reason: 'handleOps reverted without a reason: the sender has no code' };
    throw error;
  }
  const transactionHash = await client.sendTransaction(request);
  const receipt = await confirmed(client, transactionHash);
  const logs = receipt.logs as Log[];
  const events = parseEventLogs({ abi: entryPoint07Abi, logs });
  const event = events.find((log) => log.eventName === 'UserOperationEvent');
  if (event?.eventName !== 'UserOperationEvent')
    throw new Error(`handleOps ${transactionHash} emitted no UserOperationEvent`);
  const revert = events.find((log) => log.eventName === 'UserOperationRevertReason');
  return {
    status: 'included',
    success: event.args.success,
    userOpHash: event.args.userOpHash,
    transactionHash,
    ...(revert?.eventName === 'UserOperationRevertReason'
      ? {
          revertReason: revert.args.revertReason,
          revertError: decodeRevert(revert.args.revertReason, errors),
        }
      : {}),
    logs,
  };
}

/** The EntryPoint's reason for refusing an operation (`AA24 signature error`, …); undefined for none. */
function failedOp(error: unknown): string | undefined {
  const raw =
    error instanceof BaseError
      ? error.walk((cause) => typeof (cause as { data?: unknown }).data === 'string')
      : undefined;
  const data = (raw as { data?: Hex } | undefined)?.data;
  if (data === undefined) throw error;
  if (data === '0x') return undefined;
  const decoded = decodeErrorResult({ abi: entryPoint07Abi, data });
  if (decoded.errorName === 'FailedOp' || decoded.errorName === 'FailedOpWithRevert')
    return String(decoded.args[1]);
  throw error;
}

/** A revert's error as `Name(arg, …)`, or its bytes when no known error has its selector. */
function decodeRevert(data: Hex, errors: Abi): string {
  try {
    const { errorName, args } = decodeErrorResult({ abi: errors, data });
    return `${errorName}(${(args ?? []).map(String).join(', ')})`;
  } catch {
    return data;
  }
}
