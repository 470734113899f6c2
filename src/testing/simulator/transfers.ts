import type { BridgeBundle, BridgeQuote, BridgeTransfer, TransferStatus } from '../../schemas/bridge.js';
import { CALLBACK_STATES, TRANSITIONS } from '../../schemas/states.js';
import type { SimCallbacks } from './callbacks.js';
import type { ChainReceipt } from './chain.js';
import type { SimClock, SimRandom } from './common.js';
import { HttpFailure, validation } from './envelope.js';
import type { SimUsers } from './users.js';

/*
 * Transfers and their state machine: which state may follow which, what entering a state does
 * (hashes, balances, the callback), expiry of unsubmitted intents, automatic progress on timers,
 * and the partner's reads of its transfers.
 */

export interface IntentRecord {
  intentId: string;
  transferId: string;
  userId: string;
  bundle: BridgeBundle;
  quote: BridgeQuote;
  expiresAt: number;
  spent: boolean;
}

export interface TransferRecord {
  transfer: BridgeTransfer;
  organisationId: string;
  seq: number;
  intentId: string;
}

/** Timers of `autoAdvance`, as `SimulatorOptions` takes them. */
export type AutoAdvance = boolean | { sourceConfirmedMs?: number; deliveredMs?: number } | undefined;

export class SimTransfers {
  readonly transfers = new Map<string, TransferRecord>();
  readonly intents = new Map<string, IntentRecord>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  /** Receipts awaited in chain mode; `close` stops them from moving anything. */
  readonly #followed = new Set<{ stopped: boolean }>();
  #seq = 0;

  constructor(
    private readonly clock: SimClock,
    private readonly random: SimRandom,
    private readonly users: SimUsers,
    private readonly callbacks: SimCallbacks,
    private readonly autoAdvance: AutoAdvance,
  ) {}

  /** The sequence number the next transfer gets: it orders listings and salts the batch's nonce. */
  get nextSeq(): number {
    return this.#seq;
  }

  /** Records a pending transfer and the intent that may submit it. */
  add(transfer: BridgeTransfer, organisationId: string, intent: Omit<IntentRecord, 'transferId'>): void {
    const { transferId } = transfer;
    this.transfers.set(transferId, { transfer, organisationId, seq: this.#seq++, intentId: intent.intentId });
    this.intents.set(intent.intentId, { ...intent, transferId });
  }

  /**
   * What a user's submitted transfers take from one token on one chain: included on chain, so
   * gone from the wallet there, but not yet confirmed, when the balance here moves.
   */
  inFlight(userId: string, chainId: number, token: string): bigint {
    let taken = 0n;
    for (const { transfer } of this.transfers.values()) {
      const { source } = transfer;
      if (transfer.userId !== userId || transfer.status !== 'submitted' || source.chainId !== chainId)
        continue;
      if (source.tokenAddress.toLowerCase() === token.toLowerCase())
        taken += BigInt(source.amountRaw) + BigInt(transfer.gasFeeRaw);
    }
    return taken;
  }

  /** The states the service could move a transfer to from where it is now. */
  next(record: TransferRecord): readonly string[] {
    return TRANSITIONS[record.transfer.status] ?? [];
  }

  /** A pending transfer whose intent ran out unsubmitted becomes `expired` when next looked at. */
  expireIfDue(record: TransferRecord): void {
    if (record.transfer.status !== 'pending') return;
    const intent = [...this.intents.values()].find(
      (entry) => entry.transferId === record.transfer.transferId,
    );
    if (intent && !intent.spent && this.clock.now() >= intent.expiresAt) this.enter(record, 'expired', {});
  }

  enter(
    record: TransferRecord,
    status: TransferStatus,
    details: { failureReason?: string | undefined; srcTxHash?: string },
  ): void {
    const transfer = record.transfer;
    transfer.status = status;
    transfer.updatedAt = new Date(this.clock.now()).toISOString();
    const hash = () => `0x${this.random.bytes(32).toString('hex')}`;
    // In chain mode the hash is the handleOps transaction's (none when the chain refused it).
    if (status === 'submitted') transfer.srcTxHash = details.srcTxHash ?? hash();
    if (status === 'source_confirmed') {
      transfer.providerRef = String(1_000_000 + record.seq);
      this.users.adjust(
        transfer,
        transfer.source,
        -(BigInt(transfer.source.amountRaw) + BigInt(transfer.gasFeeRaw)),
      );
    }
    if (status === 'delivered')
      this.users.adjust(transfer, transfer.destination, BigInt(transfer.destination.amountRaw));
    if (status === 'delivered') transfer.dstTxHash = hash();
    if (status === 'refunded') {
      transfer.refundTxHash = hash();
      this.users.adjust(transfer, transfer.source, BigInt(transfer.source.amountRaw));
    }
    if (status === 'failed') transfer.failureReason = details.failureReason ?? 'the operation reverted';
    if (CALLBACK_STATES.has(status)) this.callbacks.send(structuredClone(transfer));
  }

  /** With `autoAdvance`, a submitted transfer moves on by itself unless a test moved it first. */
  scheduleProgress(record: TransferRecord): void {
    const auto = this.autoAdvance;
    if (!auto) return;
    const timing = auto === true ? {} : auto;
    this.#step(record, timing.sourceConfirmedMs ?? 1_000, 'submitted', 'source_confirmed', () =>
      this.#deliver(record),
    );
  }

  /**
   * Chain mode: the transfer moves as its handleOps receipt says, `source_confirmed` or `failed`
   * naming why; the destination side stays simulated, delivered after `deliveredMs` unless
   * `autoAdvance` is `false` (then a test delivers it with `advance`).
   */
  follow(record: TransferRecord, receipt: Promise<ChainReceipt>): void {
    const watch = { stopped: false };
    this.#followed.add(watch);
    void receipt.then(
      (outcome) => {
        this.#followed.delete(watch);
        // A test may have moved it already (advance), and a closed simulator moves nothing.
        if (watch.stopped || record.transfer.status !== 'submitted') return;
        if (!outcome.success) return this.enter(record, 'failed', { failureReason: outcome.reason });
        this.enter(record, 'source_confirmed', {});
        if (this.autoAdvance !== false) this.#deliver(record);
      },
      () => this.#followed.delete(watch),
    );
  }

  #deliver(record: TransferRecord): void {
    const auto = this.autoAdvance;
    const ms = typeof auto === 'object' ? auto.deliveredMs : undefined;
    this.#step(record, ms ?? 2_000, 'source_confirmed', 'delivered');
  }

  /** After `ms`, moves the transfer from `from` to `to`, unless a test moved it first. */
  #step(record: TransferRecord, ms: number, from: string, to: TransferStatus, then?: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (record.transfer.status !== from) return;
      this.enter(record, to, {});
      then?.();
    }, ms);
    timer.unref?.();
    this.#timers.add(timer);
  }

  /** Stops timers of automatic progress, and the receipts awaited in chain mode. */
  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const watch of this.#followed) watch.stopped = true;
    this.#followed.clear();
  }

  /** `GET /bridge/transfers/:id`: one transfer of the partner's user, as of now. */
  get(organisationId: string, userId: string, transferId: string): BridgeTransfer {
    const record = this.transfers.get(transferId);
    if (!record || record.transfer.userId !== userId || record.organisationId !== organisationId) {
      throw new HttpFailure(404, 'NOT_FOUND', 'no such transfer');
    }
    this.expireIfDue(record);
    return record.transfer;
  }

  /** `GET /bridge/transfers`: a user's transfers, newest first, a page at a time. */
  list(organisationId: string, query: URLSearchParams) {
    const userId = query.get('userId');
    const errors: string[] = [];
    if (!userId) errors.push('userId is required');
    const status = query.get('status');
    const limitText = query.get('limit');
    const limit = limitText === null ? 20 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      errors.push('limit must be an integer from 1 to 100');
    if (errors.length > 0) throw validation(errors);
    this.users.ofPartner(organisationId, userId!);
    const cursor = query.get('cursor');
    let after = Number.POSITIVE_INFINITY;
    if (cursor !== null) {
      const decoded = Number(Buffer.from(cursor, 'base64url').toString('utf8'));
      if (!Number.isInteger(decoded)) throw validation(['cursor is not valid']);
      after = decoded;
    }
    const mine = [...this.transfers.values()]
      .filter((record) => record.transfer.userId === userId && record.organisationId === organisationId)
      .map((record) => {
        this.expireIfDue(record);
        return record;
      })
      .filter((record) => (status ? record.transfer.status === status : true) && record.seq < after)
      .sort((a, b) => b.seq - a.seq);
    const page = mine.slice(0, limit);
    const nextCursor =
      mine.length > limit ? Buffer.from(String(page.at(-1)!.seq)).toString('base64url') : null;
    return { data: page.map((record) => record.transfer), nextCursor };
  }
}
