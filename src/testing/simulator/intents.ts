import { hashMessage, recoverAddress } from 'viem';
import { recoverAuthorizationAddress } from 'viem/utils';
import { fromRawAmount } from '../../core/amounts.js';
import { submittedSignatureProblems } from '../../onchain/canonical.js';
import { DEFAULT_DELEGATES, OWNER_NONCE_KEY } from '../../onchain/constants.js';
import { sameAddress } from '../../onchain/hex.js';
import type { BridgeRoute, BridgeTransfer } from '../../schemas/bridge.js';
import type { Address, Hex } from '../../schemas/common.js';
import { buildBridgeBundle } from '../batch.js';
import type { SimChain, WalletOnChain } from './chain.js';
import type { SimClock, SimRandom } from './common.js';
import { HttpFailure, validation } from './envelope.js';
import { jsonObject, rawNumber } from './json.js';
import type { RouteState, SimRoutes } from './routes.js';
import type { IntentRecord, SimTransfers, TransferRecord } from './transfers.js';
import type { SimUsers, UserRecord } from './users.js';

/*
 * The two calls that make a transfer: construct (balance checks, a quote, a real bridge batch, a
 * pending transfer and its intent) and submit (the intent's signatures checked against the user's
 * wallet, then the transfer set going, or failed at once when the chain would refuse a signature).
 */
export class SimIntents {
  constructor(
    private readonly clock: SimClock,
    private readonly random: SimRandom,
    private readonly users: SimUsers,
    private readonly routes: SimRoutes,
    private readonly transfers: SimTransfers,
    /** In chain mode, the chain the simulator is the bundler on: balances and nonces are its. */
    private readonly chain?: SimChain,
  ) {}

  /** `POST /bridge/construct/transaction/batch`. */
  async construct(organisationId: string, body: string) {
    const parsed = jsonObject(body);
    const errors: string[] = [];
    if (typeof parsed.userId !== 'string' || !parsed.userId) errors.push('userId must be a non-empty string');
    if (typeof parsed.routeId !== 'string' || !parsed.routeId)
      errors.push('routeId must be a non-empty string');
    const max = parsed.maxAmount === true;
    if (max && parsed.amount !== undefined) errors.push('give either amount or maxAmount, not both');
    if (!max && !(typeof parsed.amount === 'number' && parsed.amount > 0))
      errors.push('amount must be a positive number');
    if (errors.length > 0) throw validation(errors);
    const user = this.users.ofPartner(organisationId, parsed.userId as string);
    if (!user.wallet) throw new HttpFailure(400, 'WALLET_NOT_LINKED', 'the user has no linked wallet');
    const state = this.routes.usable(parsed.routeId as string);
    if (state.providerFeeBps > state.feeCeilingBps) {
      throw new HttpFailure(
        503,
        'SERVICE_UNAVAILABLE',
        "the bridge fee is above the route's ceiling; retry shortly",
      );
    }
    if (state.signWindowSec > 0 && this.routes.quoteTtlSec < state.signWindowSec)
      throw new HttpFailure(503, 'SERVICE_UNAVAILABLE', 'quote expires too soon to sign; retry shortly');
    const { from } = state.route;
    const delegate = DEFAULT_DELEGATES[0]!;
    const onChain = this.chain && (await this.onChain(user.wallet.address, state, delegate));
    // What the chain holds: operations submitted before took their share when they were included.
    const balance = onChain ? onChain.balance : this.held(user, from);
    const amountInRaw = this.amountIn(
      state,
      balance,
      max ? 'max' : (rawNumber(body, 'amount') ?? String(parsed.amount)),
    );
    const quote = this.routes.quote(state, amountInRaw);
    // A SpokePool refuses a quote timestamp later than its block's (a fork's clock may lag).
    const nowSec = Math.min(Math.floor(this.clock.now() / 1000), onChain?.time ?? Number.POSITIVE_INFINITY);
    const delegated = onChain ? onChain.delegated : user.delegated.has(from.chainId);
    const bundle = buildBridgeBundle({
      route: state.route,
      wallet: user.wallet.address,
      amountInRaw,
      amountOutRaw: BigInt(quote.amountOutRaw),
      gasFeeRaw: state.gasFeeRaw,
      quoteTimestamp: nowSec,
      fillDeadline: nowSec + 3 * 3600 + 900,
      authorizationNonce: delegated
        ? null
        : (onChain?.authorizationNonce ?? user.authNonces.get(from.chainId) ?? 0),
      delegate,
      depositFunction: state.depositFunction,
      // The sender's current EntryPoint nonce under the owner's key: the same until one of its
      // operations executes.
      nonceKey: OWNER_NONCE_KEY,
      sequence: onChain?.sequence ?? user.opNonces.get(`${from.chainId}:${OWNER_NONCE_KEY}`) ?? 0n,
      // A chain without the simulator's paymaster (a fork of Base): the wallet pays its own gas.
      ...(onChain && !onChain.paymaster ? { paymaster: null } : {}),
    });
    const transferId = this.random.id('brt');
    const intentId = this.random.id('int');
    const stamp = new Date(this.clock.now()).toISOString();
    const transfer: BridgeTransfer = {
      transferId,
      userId: user.userId,
      routeId: state.route.routeId,
      status: 'pending',
      provider: state.route.provider,
      providerRef: '',
      source: side(state.route.from, quote.amountIn, quote.amountInRaw),
      destination: side(state.route.to, quote.amountOut, quote.amountOutRaw),
      providerFee: quote.providerFee,
      providerFeeRaw: quote.providerFeeRaw,
      gasFee: quote.gasFee,
      gasFeeRaw: quote.gasFeeRaw,
      gasFeeToken: quote.gasFeeToken,
      srcTxHash: '',
      dstTxHash: null,
      refundTxHash: null,
      failureReason: null,
      createdAt: stamp,
      updatedAt: stamp,
    };
    this.transfers.add(transfer, organisationId, {
      intentId,
      userId: user.userId,
      bundle,
      quote,
      expiresAt: Date.parse(quote.expiresAt),
      spent: false,
    });
    return { transferId, intentId, bundle, quote };
  }

  /** `POST /bridge/transaction/batch/send`. */
  async send(organisationId: string, body: string) {
    const parsed = jsonObject(body);
    const errors: string[] = [];
    for (const field of ['userId', 'intentId', 'signature']) {
      if (typeof parsed[field] !== 'string' || !parsed[field])
        errors.push(`${field} must be a non-empty string`);
    }
    if (errors.length > 0) throw validation(errors);
    const user = this.users.ofPartner(organisationId, parsed.userId as string);
    const intent = this.transfers.intents.get(parsed.intentId as string);
    if (!intent || intent.userId !== user.userId)
      throw new HttpFailure(400, 'INTENT_NOT_FOUND', 'no such intent');
    const record = this.transfers.transfers.get(intent.transferId)!;
    this.transfers.expireIfDue(record);
    if (intent.spent) throw new HttpFailure(400, 'INTENT_NOT_FOUND', 'the intent was already submitted');
    if (this.clock.now() >= intent.expiresAt)
      throw new HttpFailure(400, 'INTENT_NOT_FOUND', 'the intent expired');
    // Taken before any await, so that two concurrent submits of one intent cannot both pass.
    intent.spent = true;
    let refused: string[];
    try {
      refused = await checkSignatures(
        intent,
        user.wallet!.address,
        parsed.signature as string,
        parsed.authorization,
      );
    } catch (error) {
      intent.spent = false;
      throw error;
    }
    const taken = { userOpHash: intent.bundle.userOpHash, transferId: record.transfer.transferId };
    if (this.chain) {
      // The chain decides the rest: the signatures' form, the nonce, whether the calls run.
      await this.submitOnChain(this.chain, record, intent, parsed.signature as Hex, parsed.authorization);
      return taken;
    }
    if (refused.length > 0) {
      // The service takes what recovers to the wallet; the chain refuses it: nothing moves, the
      // authorization is not applied, and the intent stays spent.
      this.transfers.enter(record, 'submitted', {});
      this.transfers.enter(record, 'failed', { failureReason: refused.join('; ') });
      return taken;
    }
    const chainId = intent.bundle.chainId;
    const nonce = BigInt(intent.bundle.userOp.nonce as string);
    const slot = `${chainId}:${nonce >> 64n}`;
    const used = nonceProblem(nonce, user.opNonces.get(slot) ?? 0n);
    if (used) {
      // The EntryPoint refuses an operation whose nonce is not the sender's current one: it never
      // executes, and neither does its authorization.
      this.transfers.enter(record, 'submitted', {});
      this.transfers.enter(record, 'failed', { failureReason: used });
      return taken;
    }
    // Validated: the EntryPoint includes the operation whatever its calls do, so from here the
    // nonce is spent and a first delegation applied even when the calls revert.
    const reverted = this.revertReason(user, record.transfer);
    user.opNonces.set(slot, (user.opNonces.get(slot) ?? 0n) + 1n);
    if (intent.bundle.authorization) {
      user.delegated.add(chainId);
      user.authNonces.set(chainId, (user.authNonces.get(chainId) ?? 0) + 1);
    }
    this.transfers.enter(record, 'submitted', {});
    if (reverted) this.transfers.enter(record, 'failed', { failureReason: reverted });
    else this.transfers.scheduleProgress(record);
    return taken;
  }

  /** The amount a construct asks for (`max`: what the balance allows), checked against the balance. */
  private amountIn(state: RouteState, balance: bigint, amount: string): bigint {
    if (amount !== 'max') {
      const amountInRaw = this.routes.amountRaw(state, amount);
      if (balance < amountInRaw + state.gasFeeRaw)
        throw insufficient(state, amountInRaw + state.gasFeeRaw, balance);
      return amountInRaw;
    }
    const spendable = balance - state.gasFeeRaw;
    const limits = this.routes.limits(state);
    if (spendable < BigInt(limits.minAmountRaw)) {
      if (spendable <= 0n) throw insufficient(state, BigInt(limits.minAmountRaw) + state.gasFeeRaw, balance);
      throw new HttpFailure(
        400,
        'BAD_REQUEST',
        `the largest amount is below the minimum of ${limits.minAmount}`,
      );
    }
    return spendable > BigInt(limits.maxAmountRaw) ? BigInt(limits.maxAmountRaw) : spendable;
  }

  /** The wallet as the chain holds it; a route that starts on another chain cannot be built there. */
  private async onChain(wallet: Address, state: RouteState, delegate: Address): Promise<WalletOnChain> {
    const chain = this.chain!;
    const { from } = state.route;
    const chainId = await chain.chainId();
    if (from.chainId !== chainId)
      throw new HttpFailure(
        400,
        'BAD_REQUEST',
        `route ${state.route.routeId} starts on chain ${from.chainId}; the simulator is the bundler on chain ${chainId} (${chain.where}) only`,
      );
    return chain.wallet(wallet, from.contractAddress, delegate);
  }

  /**
   * Chain mode: `handleOps` on the chain. Refused there (`FailedOp`): failed with the chain's
   * reason, nothing sent. Sent: submitted with the transaction's hash, then moved by its receipt.
   * A node that does not answer before anything is sent leaves the intent unspent (503).
   */
  private async submitOnChain(
    chain: SimChain,
    record: TransferRecord,
    intent: IntentRecord,
    signature: Hex,
    authorization: unknown,
  ): Promise<void> {
    let outcome: Awaited<ReturnType<SimChain['submit']>>;
    try {
      // checkSignatures made sure of the authorization's shape when the bundle asks for one.
      outcome = await chain.submit(
        intent.bundle,
        signature,
        authorization as { r: Hex; s: Hex; yParity: number },
      );
    } catch (error) {
      intent.spent = false;
      throw error;
    }
    if (outcome.status === 'refused') {
      this.transfers.enter(record, 'submitted', { srcTxHash: '' });
      this.transfers.enter(record, 'failed', { failureReason: outcome.reason });
      return;
    }
    this.transfers.enter(record, 'submitted', { srcTxHash: outcome.transactionHash });
    this.transfers.follow(record, outcome.receipt);
  }

  /**
   * Why the batch's calls would revert on chain, undefined when they run: the wallet cannot pay
   * the amount and gas fee (the deposit's transferFrom or the fee transfer fails, and the batch
   * with it).
   */
  private revertReason(user: UserRecord, transfer: BridgeTransfer): string | undefined {
    const { source } = transfer;
    const needed = BigInt(source.amountRaw) + BigInt(transfer.gasFeeRaw);
    const chainSide = { chainId: source.chainId, contractAddress: source.tokenAddress };
    const held = this.held(user, chainSide);
    if (held >= needed) return undefined;
    const amount = (raw: bigint) => `${fromRawAmount(raw, source.decimals)} ${source.token}`;
    const before = held < this.users.balance(user, source.chainId, source.tokenAddress);
    return `the calls reverted: the wallet cannot pay ${amount(needed)} (amount and gas fee), it holds ${amount(held)}${before ? ' after the operations submitted before it' : ''}; the operation was included and its nonce spent`;
  }

  /**
   * What the wallet holds of a token on chain: its balance less what its submitted operations took
   * when they were included (the balance here moves only when they are confirmed).
   */
  private held(user: UserRecord, token: { chainId: number; contractAddress: string }): bigint {
    const balance = this.users.balance(user, token.chainId, token.contractAddress);
    return balance - this.transfers.inFlight(user.userId, token.chainId, token.contractAddress);
  }
}

/**
 * Refuses (400) signatures that do not recover to the wallet; of those that do, returns why the
 * chain would still refuse them (high s, v 0/1), empty when it takes them.
 */
async function checkSignatures(
  intent: IntentRecord,
  wallet: Address,
  signature: string,
  authorization: unknown,
): Promise<string[]> {
  if (!/^0xff00[0-9a-fA-F]{130}$/.test(signature))
    throw validation(['signature must be 0xff00 followed by 65 bytes']);
  const signer = await recoverAddress({
    hash: hashMessage({ raw: intent.bundle.userOpHash }),
    signature: `0x${signature.slice(6)}`,
  }).catch(() => undefined);
  if (!sameAddress(signer, wallet)) throw validation(["signature does not recover to the user's wallet"]);
  const wanted = intent.bundle.authorization;
  if (!wanted) {
    if (authorization !== undefined)
      throw validation(['authorization must be omitted: the wallet is already delegated']);
    return submittedSignatureProblems(signature);
  }
  const auth = authorization as { r?: unknown; s?: unknown; yParity?: unknown } | undefined;
  const word = /^0x[0-9a-fA-F]{64}$/;
  if (
    !auth ||
    typeof auth.r !== 'string' ||
    !word.test(auth.r) ||
    typeof auth.s !== 'string' ||
    !word.test(auth.s) ||
    (auth.yParity !== 0 && auth.yParity !== 1)
  ) {
    throw validation(['authorization {r, s, yParity} is required: the wallet is not yet delegated']);
  }
  const delegatedBy = await recoverAuthorizationAddress({
    authorization: { address: wanted.address, chainId: wanted.chainId, nonce: wanted.nonce },
    signature: { r: auth.r as Hex, s: auth.s as Hex, yParity: auth.yParity },
  }).catch(() => undefined);
  if (!sameAddress(delegatedBy, wallet))
    throw validation(["authorization does not recover to the user's wallet"]);
  return submittedSignatureProblems(signature, { r: auth.r, s: auth.s, yParity: auth.yParity });
}

/** Why the EntryPoint (v0.7, `key << 64 | sequence`) would refuse this nonce; undefined when it takes it. */
function nonceProblem(nonce: bigint, current: bigint): string | undefined {
  const key = nonce >> 64n;
  const sequence = nonce & ((1n << 64n) - 1n);
  if (sequence === current) return undefined;
  return sequence < current
    ? `AA25 invalid account nonce: nonce ${nonce} (key ${key}, sequence ${sequence}) is already used`
    : `AA25 invalid account nonce: nonce ${nonce} (key ${key}, sequence ${sequence}) is ahead of the current ${current}`;
}

function insufficient(state: RouteState, required: bigint, available: bigint): HttpFailure {
  const { from } = state.route;
  return new HttpFailure(
    400,
    'INSUFFICIENT_BALANCE',
    `the wallet holds ${fromRawAmount(available, from.decimals)} ${from.symbol} and needs ${fromRawAmount(required, from.decimals)} (amount + gas fee)`,
    {
      token: { address: from.contractAddress, symbol: from.symbol, decimals: from.decimals },
      required: String(required),
      available: String(available),
      shortfall: String(required - available),
    },
  );
}

function side(route: BridgeRoute['from'], amount: string, amountRaw: string) {
  return {
    chain: route.chain,
    chainId: route.chainId,
    token: route.symbol,
    tokenAddress: route.contractAddress,
    decimals: route.decimals,
    amount,
    amountRaw,
  };
}
