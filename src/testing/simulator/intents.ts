import { hashMessage, recoverAddress } from 'viem';
import { recoverAuthorizationAddress } from 'viem/utils';
import { fromRawAmount } from '../../core/amounts.js';
import { submittedSignatureProblems } from '../../onchain/canonical.js';
import { DEFAULT_DELEGATES, OWNER_NONCE_KEY } from '../../onchain/constants.js';
import { sameAddress } from '../../onchain/hex.js';
import type { BridgeRoute, BridgeTransfer } from '../../schemas/bridge.js';
import type { Address, Hex } from '../../schemas/common.js';
import { buildBridgeBundle } from '../batch.js';
import type { SimClock, SimRandom } from './common.js';
import { HttpFailure, validation } from './envelope.js';
import { jsonObject, rawNumber } from './json.js';
import type { RouteState, SimRoutes } from './routes.js';
import type { IntentRecord, SimTransfers } from './transfers.js';
import type { SimUsers } from './users.js';

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
  ) {}

  /** `POST /bridge/construct/transaction/batch`. */
  construct(organisationId: string, body: string) {
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
    const balance = this.users.balance(user, from.chainId, from.contractAddress);
    let amountInRaw: bigint;
    if (max) {
      const spendable = balance - state.gasFeeRaw;
      const limits = this.routes.limits(state);
      if (spendable < BigInt(limits.minAmountRaw)) {
        if (spendable <= 0n)
          throw insufficient(state, BigInt(limits.minAmountRaw) + state.gasFeeRaw, balance);
        throw new HttpFailure(
          400,
          'BAD_REQUEST',
          `the largest amount is below the minimum of ${limits.minAmount}`,
        );
      }
      amountInRaw = spendable > BigInt(limits.maxAmountRaw) ? BigInt(limits.maxAmountRaw) : spendable;
    } else {
      amountInRaw = this.routes.amountRaw(state, rawNumber(body, 'amount') ?? String(parsed.amount));
      if (balance < amountInRaw + state.gasFeeRaw)
        throw insufficient(state, amountInRaw + state.gasFeeRaw, balance);
    }
    const quote = this.routes.quote(state, amountInRaw);
    const nowSec = Math.floor(this.clock.now() / 1000);
    const delegated = user.delegated.has(from.chainId);
    const bundle = buildBridgeBundle({
      route: state.route,
      wallet: user.wallet.address,
      amountInRaw,
      amountOutRaw: BigInt(quote.amountOutRaw),
      gasFeeRaw: state.gasFeeRaw,
      quoteTimestamp: nowSec,
      fillDeadline: nowSec + 3 * 3600 + 900,
      authorizationNonce: delegated ? null : (user.authNonces.get(from.chainId) ?? 0),
      delegate: DEFAULT_DELEGATES[0]!,
      // The sender's current EntryPoint nonce under the owner's key: the same until one of its
      // operations executes.
      nonceKey: OWNER_NONCE_KEY,
      sequence: user.opNonces.get(`${from.chainId}:${OWNER_NONCE_KEY}`) ?? 0n,
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
    user.opNonces.set(slot, (user.opNonces.get(slot) ?? 0n) + 1n);
    if (intent.bundle.authorization) {
      user.delegated.add(chainId);
      user.authNonces.set(chainId, (user.authNonces.get(chainId) ?? 0) + 1);
    }
    this.transfers.enter(record, 'submitted', {});
    this.transfers.scheduleProgress(record);
    return taken;
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
