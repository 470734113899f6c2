import {
  type Account,
  BaseError,
  type Chain,
  concat,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  type Log,
  parseAbi,
  parseEventLogs,
  type SignedAuthorization,
} from 'viem';
import { entryPoint07Abi, entryPoint07Address, toPackedUserOperation } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { OWNER_NONCE_KEY } from '../../onchain/constants.js';
import type { BridgeBundle } from '../../schemas/bridge.js';
import type { Address } from '../../schemas/common.js';
import { SIMULATOR_PAYMASTER, userOperationForViem } from '../batch.js';
import { HttpFailure } from './envelope.js';

/*
 * The chain mode: the simulator as the bundler on a real JSON-RPC node (anvil, or anvil forking
 * Base). Construct reads the wallet's balance, delegation and nonces there; submit hands the signed
 * operation to the EntryPoint's `handleOps` from the bundler's account, simulated first so that
 * what the chain refuses is refused with the chain's reason, and the receipt says how it ended.
 */

/** `createPartnerSimulator({ chain })`, checked. */
export interface ChainOptions {
  rpcUrl: string;
  bundlerPrivateKey?: string | undefined;
}

/** What construct needs of a wallet, as the chain holds it now. */
export interface WalletOnChain {
  /** The wallet's balance of the token, in base units. */
  balance: bigint;
  /** Whether its code is the EIP-7702 designation of `delegate`: no authorization is needed. */
  delegated: boolean;
  /** Its account nonce: the nonce a new authorization must carry. */
  authorizationNonce: number;
  /** Its EntryPoint sequence under the owner's nonce key. */
  sequence: bigint;
  /** Whether the simulator's paymaster has code there; without it the wallet pays its gas. */
  paymaster: boolean;
  /** The latest block's timestamp, in seconds: a deposit's quote may not be later than it. */
  time: number;
}

/** How an operation handed to `handleOps` ended, from the transaction's receipt. */
export type ChainReceipt = { success: true } | { success: false; reason: string };

/** What a submit did: refused by the EntryPoint (nothing sent), or sent and awaiting its receipt. */
export type ChainSubmit =
  | { status: 'refused'; reason: string }
  | { status: 'sent'; transactionHash: Hex; receipt: Promise<ChainReceipt> };

/** Gas for `handleOps` of one operation: above any limits the simulator's batches name. */
const HANDLE_OPS_GAS = 5_000_000n;
const SEQUENCE_MASK = (1n << 64n) - 1n;

/**
 * Errors a batch's calls revert with, decoded in a failure reason: the standard ones, OpenZeppelin's
 * ERC-20 errors and the tests' token stand-in's. Anything else is shown as its bytes.
 */
const REVERT_ERRORS = parseAbi([
  'error Error(string reason)',
  'error Panic(uint256 code)',
  'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
  'error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
  'error InsufficientBalance(address from, uint256 balance, uint256 needed)',
  'error InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
]);

export class SimChain {
  /** The node's origin: what messages name (a provider's URL may hold an API key in its path). */
  readonly where: string;
  readonly #rpcUrl: string;
  readonly #reader: ReturnType<typeof createPublicClient>;
  readonly #key: Hex | undefined;
  #ready: Promise<{ chain: Chain; account: Account | Address }> | undefined;
  /** Submits one at a time: each is simulated on the state the one before it left. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: ChainOptions) {
    this.#rpcUrl = options.rpcUrl;
    this.where = new URL(options.rpcUrl).origin;
    this.#key = options.bundlerPrivateKey as Hex | undefined;
    this.#reader = createPublicClient({
      transport: http(options.rpcUrl, { retryCount: 1 }),
      pollingInterval: 100,
    });
  }

  /** The chain id and the bundler's account, read once (the first unlocked account by default). */
  #setup() {
    this.#ready ??= this.#read('eth_chainId and eth_accounts', async () => {
      const id = await this.#reader.getChainId();
      const chain = defineChain({
        id,
        name: `chain ${id}`,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [this.#rpcUrl] } },
      });
      if (this.#key) return { chain, account: privateKeyToAccount(this.#key) };
      const [first] = await createWalletClient({ transport: http(this.#rpcUrl) }).getAddresses();
      if (!first)
        throw new HttpFailure(
          503,
          'SERVICE_UNAVAILABLE',
          `the chain at ${this.where} has no unlocked account to send handleOps from: give chain.bundlerPrivateKey`,
        );
      return { chain, account: first };
    }).catch((error: unknown) => {
      // A node that was down is asked again on the next call.
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async chainId(): Promise<number> {
    return (await this.#setup()).chain.id;
  }

  /** The wallet's state that decides what construct builds (its batches go to EntryPoint v0.7). */
  async wallet(wallet: Address, token: Address, delegate: Address): Promise<WalletOnChain> {
    const reader = this.#reader;
    const entryPoint = entryPoint07Address;
    const [code, entryPointCode, paymasterCode] = await this.#read('eth_getCode', () =>
      Promise.all([
        reader.getCode({ address: wallet }),
        reader.getCode({ address: entryPoint }),
        reader.getCode({ address: SIMULATOR_PAYMASTER }),
      ]),
    );
    if (!entryPointCode || entryPointCode === '0x')
      throw new HttpFailure(
        503,
        'SERVICE_UNAVAILABLE',
        `the chain at ${this.where} has no EntryPoint at ${entryPoint}`,
      );
    const [balance, nonce, count, block] = await this.#read(
      'balanceOf, getNonce and eth_getTransactionCount',
      () =>
        Promise.all([
          reader.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] }),
          reader.readContract({
            address: entryPoint,
            abi: entryPoint07Abi,
            functionName: 'getNonce',
            args: [wallet, OWNER_NONCE_KEY],
          }),
          reader.getTransactionCount({ address: wallet }),
          reader.getBlock({ blockTag: 'latest' }),
        ]),
    );
    return {
      balance,
      delegated: (code ?? '0x').toLowerCase() === concat(['0xef0100', delegate]).toLowerCase(),
      authorizationNonce: count,
      sequence: nonce & SEQUENCE_MASK,
      paymaster: paymasterCode !== undefined && paymasterCode !== '0x',
      time: Number(block.timestamp),
    };
  }

  /**
   * Hands one signed operation to `handleOps`: simulated first (a refusal is the EntryPoint's
   * `FailedOp` reason, and nothing is sent), then sent from the bundler, as a type-4 transaction
   * carrying the authorization when the bundle has one.
   */
  submit(bundle: BridgeBundle, signature: Hex, authorization?: { r: Hex; s: Hex; yParity: number }) {
    const run = this.#queue.then(() => this.#submit(bundle, signature, authorization));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #submit(
    bundle: BridgeBundle,
    signature: Hex,
    authorization: { r: Hex; s: Hex; yParity: number } | undefined,
  ): Promise<ChainSubmit> {
    const { chain, account } = await this.#setup();
    const packed = toPackedUserOperation({ ...userOperationForViem(bundle.userOp), signature });
    const beneficiary = typeof account === 'string' ? account : account.address;
    const authorizationList: SignedAuthorization[] =
      authorization && bundle.authorization ? [{ ...bundle.authorization, ...authorization }] : [];
    const request = {
      to: bundle.entryPoint,
      data: encodeFunctionData({
        abi: entryPoint07Abi,
        functionName: 'handleOps',
        args: [[packed], beneficiary],
      }),
      gas: HANDLE_OPS_GAS,
      ...(authorizationList.length > 0 ? { authorizationList } : {}),
    };
    try {
      await this.#reader.call({ account, ...request });
    } catch (error) {
      const refused = await this.#refusal(error, bundle.userOp.sender as Address);
      if (refused !== undefined) return { status: 'refused', reason: refused };
      throw this.#unavailable('eth_call', error);
    }
    const writer = createWalletClient({ chain, account, transport: http(this.#rpcUrl, { retryCount: 0 }) });
    let transactionHash: Hex;
    try {
      transactionHash = await writer.sendTransaction({ ...request, chain, account });
    } catch (error) {
      // The node would not take the transaction (the bundler cannot pay its gas, say).
      return {
        status: 'refused',
        reason: `the node refused the handleOps transaction: ${this.#said(error)}`,
      };
    }
    return { status: 'sent', transactionHash, receipt: this.#receipt(transactionHash, bundle.userOpHash) };
  }

  /** How the operation ended, from its transaction's receipt; never rejects. */
  async #receipt(hash: Hex, userOpHash: Hex): Promise<ChainReceipt> {
    let logs: Log[];
    try {
      const receipt = await this.#reader.waitForTransactionReceipt({ hash, timeout: 120_000 });
      if (receipt.status !== 'success')
        return { success: false, reason: `the handleOps transaction ${hash} reverted` };
      logs = receipt.logs as Log[];
    } catch (error) {
      return { success: false, reason: `the receipt of ${hash} could not be read: ${this.#said(error)}` };
    }
    const events = parseEventLogs({ abi: entryPoint07Abi, logs }).filter(
      // Events without arguments (BeforeExecution) have none to compare.
      (log) => (log.args as { userOpHash?: Hex } | undefined)?.userOpHash === userOpHash,
    );
    const event = events.find((log) => log.eventName === 'UserOperationEvent');
    if (event?.eventName !== 'UserOperationEvent')
      return { success: false, reason: `handleOps ${hash} emitted no UserOperationEvent for ${userOpHash}` };
    if (event.args.success) return { success: true };
    const revert = events.find((log) => log.eventName === 'UserOperationRevertReason');
    const why =
      revert?.eventName === 'UserOperationRevertReason'
        ? decodeRevert(revert.args.revertReason)
        : 'no reason given';
    return {
      success: false,
      reason: `the calls reverted on chain: ${why}; the operation was included in ${hash} and its nonce spent`,
    };
  }

  /**
   * The EntryPoint's reason for refusing an operation (`AA24 signature error`, …), from a reverted
   * simulation; undefined when the error is not a revert (the node did not answer).
   */
  async #refusal(error: unknown, sender: Address): Promise<string | undefined> {
    const carrier =
      error instanceof BaseError
        ? error.walk((cause) => typeof (cause as { data?: unknown }).data === 'string')
        : undefined;
    const data = (carrier as { data?: Hex } | undefined)?.data;
    if (data === undefined) return undefined;
    if (data !== '0x') {
      try {
        const decoded = decodeErrorResult({ abi: entryPoint07Abi, data });
        if (decoded.errorName === 'FailedOp' || decoded.errorName === 'FailedOpWithRevert')
          return `the EntryPoint refused the operation: ${String(decoded.args[1])}`;
        return `handleOps reverted: ${decoded.errorName}`;
      } catch {
        return `handleOps reverted: ${decodeRevert(data)}`;
      }
    }
    // No reason: the EntryPoint called a sender without code (its authorization was not applied).
    const code = await this.#reader.getCode({ address: sender }).catch(() => undefined);
    return code === undefined || code === '0x'
      ? 'handleOps reverted without a reason: the sender has no code (its EIP-7702 authorization was not applied)'
      : 'handleOps reverted without a reason';
  }

  /** Runs reads, turning a node that does not answer into a 503 that names the node, never its URL. */
  async #read<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof HttpFailure) throw error;
      throw this.#unavailable(what, error);
    }
  }

  #unavailable(what: string, error: unknown): HttpFailure {
    return new HttpFailure(
      503,
      'SERVICE_UNAVAILABLE',
      `the chain at ${this.where} did not answer ${what}: ${this.#said(error)}`,
    );
  }

  /** An error's first line (viem's short message: no request body, no URL), the URL masked anyway. */
  #said(error: unknown): string {
    const text =
      error instanceof BaseError
        ? error.shortMessage
        : error instanceof Error
          ? error.message
          : String(error);
    return (text.split('\n')[0] ?? '').split(this.#rpcUrl).join(this.where).slice(0, 300);
  }
}

/** A revert's error as `Name(arg, …)`, or its bytes when no known error has its selector. */
function decodeRevert(data: Hex): string {
  try {
    const { errorName, args } = decodeErrorResult({ abi: REVERT_ERRORS, data });
    return `${errorName}(${(args ?? []).map(String).join(', ')})`;
  } catch {
    return data;
  }
}
