import { getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { BridgeTransfer } from '../../schemas/bridge.js';
import type { Address, Hex } from '../../schemas/common.js';
import type { SimRandom } from './common.js';
import { HttpFailure } from './envelope.js';

/*
 * The users of organisations: their wallets (real keys, so tests can sign), their balances per
 * chain and token, and the EIP-7702 state that decides whether a batch needs an authorization.
 */

/** A wallet the simulator made (its key known), or one linked by address (a KMS's: `privateKey` null). */
export type SimWallet = { address: Address; privateKey: Hex | null };

export interface UserRecord {
  userId: string;
  organisationId: string;
  wallet: SimWallet | null;
  /** `${chainId}:${token lowercase}` → base units. */
  balances: Map<string, bigint>;
  /** chainId → EIP-7702 nonce; a chain in `delegated` needs no authorization. */
  authNonces: Map<number, number>;
  delegated: Set<number>;
  /**
   * `${chainId}:${key}` → the EntryPoint sequence of that nonce key: how many operations of this
   * wallet executed with it there. An operation executes only with exactly this sequence, so of two
   * signed with one nonce at most one does.
   */
  opNonces: Map<string, bigint>;
}

const balanceKey = (chainId: number, token: string) => `${chainId}:${token.toLowerCase()}`;

export class SimUsers {
  readonly users = new Map<string, UserRecord>();

  constructor(private readonly random: SimRandom) {}

  create(
    organisationId: string,
    withWallet: boolean | Address | undefined,
  ): { userId: string; wallet: SimWallet | null } {
    const userId = this.random.id('usr');
    let wallet: SimWallet | null = null;
    if (typeof withWallet === 'string') {
      wallet = { address: getAddress(withWallet), privateKey: null };
    } else if (withWallet !== false) {
      // A secp256k1 key is any 32 bytes below the group order; a draw above it (odds about 2^-128)
      // would fail in privateKeyToAccount rather than pass unnoticed.
      const privateKey = `0x${this.random.bytes(32).toString('hex')}` as const;
      wallet = { address: privateKeyToAccount(privateKey).address, privateKey };
    }
    this.users.set(userId, {
      userId,
      organisationId,
      wallet,
      balances: new Map(),
      authNonces: new Map(),
      delegated: new Set(),
      opNonces: new Map(),
    });
    return { userId, wallet };
  }

  fund(user: UserRecord, chainId: number, token: string, raw: bigint): void {
    user.balances.set(balanceKey(chainId, token), raw);
  }

  balance(user: UserRecord, chainId: number, token: string): bigint {
    return user.balances.get(balanceKey(chainId, token)) ?? 0n;
  }

  /** Moves a transfer's user's balance of one side's token by `delta` base units. */
  adjust(transfer: BridgeTransfer, side: BridgeTransfer['source'], delta: bigint): void {
    const user = this.users.get(transfer.userId);
    if (!user) return;
    const key = balanceKey(side.chainId, side.tokenAddress);
    user.balances.set(key, (user.balances.get(key) ?? 0n) + delta);
  }

  /** A user of the calling organisation; any other is answered as if it did not exist. */
  ofPartner(organisationId: string, userId: string): UserRecord {
    const user = this.users.get(userId);
    if (!user || user.organisationId !== organisationId)
      throw new HttpFailure(404, 'USER_NOT_FOUND', 'no such user');
    return user;
  }
}
