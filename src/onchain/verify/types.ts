// What verifyBridgeBatch takes and returns: its parameters, options, summary and verified batch.
import type { AmountInput } from '../../core/amounts.js';
import type { BridgeConstructResult, BridgeRoute, BundleAuthorization } from '../../schemas/bridge.js';
import type { Address, Hex } from '../../schemas/common.js';
import type { KnownToken } from '../tables.js';

/** What `verifyBridgeBatch` checks: the batch, against the route and the wallet and amount you meant. */
export interface VerifyBridgeBatchParams {
  /** The route as the partner read it from `bridge.routes()`, not one echoed by the construct result. */
  route: BridgeRoute;
  /** What `bridge.construct()` returned. */
  construct: BridgeConstructResult;
  /** The user's wallet: the signer's address. It must be the sender, depositor and recipient. */
  wallet: string;
  /** The amount asked for; omit for a `maxAmount: true` construct. */
  amount?: AmountInput | undefined;
  /**
   * The current time (a `Date` or milliseconds since 1970), for expiry checks. A number below
   * 1e12 is refused: it is seconds, and read as milliseconds it would switch every time check off.
   * @default new Date()
   */
  now?: Date | number | undefined;
}

/** How strict `verifyBridgeBatch` is; the defaults are the safe choice. */
export interface VerifyBridgeBatchOptions {
  /**
   * EntryPoints the batch may use: v0.7 and v0.8 unless told otherwise.
   * @default DEFAULTS.verifier.entryPoints
   */
  entryPoints?: readonly string[];
  /**
   * EIP-7702 delegates the wallet may be (or become) delegated to: both published MAv2 7702
   * delegates unless told otherwise.
   * @default DEFAULTS.verifier.delegates
   */
  delegates?: readonly string[];
  /**
   * Accept an Across integrator tag (`0x1dc0de` + 2 bytes) after the deposit's arguments, as real
   * Across deposits carry it: the SpokePool ignores it. Any other trailing bytes stay an issue.
   * @default DEFAULTS.verifier.allowIntegratorSuffix
   */
  allowIntegratorSuffix?: boolean;
  /**
   * The quote must stay valid this much longer than `now`, to leave time to sign and submit
   * (15 s unless told otherwise).
   * @default DEFAULTS.verifier.expiryMarginMs
   */
  expiryMarginMs?: number;
  /**
   * Require a paymaster: the batch is sponsored, and without one the wallet's own native balance
   * pays for gas at whatever fee the operation names.
   * @default DEFAULTS.verifier.requirePaymaster
   */
  requirePaymaster?: boolean;
  /**
   * Across SpokePools by chain id, for chains the built-in table (`ACROSS_SPOKE_POOLS`) lacks or
   * where the partner knows better: a chain named here gets exactly these addresses; the others
   * keep the table's. `targets.bridge` must be a SpokePool of the source chain, and the destination
   * must be a chain with a SpokePool (another chain than the source).
   * @example { bridges: { 8453: '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64', 31337: ['0x…'] } }
   */
  bridges?: Readonly<Record<number, string | readonly string[]>>;
  /**
   * Tokens to add to the well-known table (`WELL_KNOWN_TOKENS`); an entry for an address the
   * table lists replaces it. A route must agree with the table on a known address's decimals and
   * on which addresses a well-known symbol may have on its chain.
   * @example { tokens: [{ chainId: 8453, address: '0x…', symbol: 'EURC', decimals: 6 }] }
   */
  tokens?: readonly KnownToken[];
  /**
   * The partner's own fee policy: provider fee plus gas fee, in basis points of the amount, above
   * which the batch is refused. It comes on top of the built-in ceilings (gas fee below the amount,
   * provider fee below a quarter of it), which hold with or without it.
   * @example { maxFeeBps: 150 } // refuse anything costing more than 1.5 %
   */
  maxFeeBps?: number;
}

/** One side of a verified bridge: the chain, the token and the amount in its own decimals. */
export interface SummarySide {
  chain: string;
  chainId: number;
  /** The well-known table's symbol when it lists the token, otherwise the route's. */
  symbol: string;
  /**
   * False when the table (with `tokens`) does not list the token's address on this chain and its
   * symbol is not a well-known one there: then only the route vouches for it.
   */
  known: boolean;
  token: Address;
  decimals: number;
  amount: string;
  amountRaw: bigint;
}

/** What the verified batch will do, in terms a person can check. */
export interface BridgeBatchSummary {
  wallet: Address;
  routeId: string;
  provider: string;
  /** Deposited on the source chain (taken from the wallet). */
  source: SummarySide;
  /** Delivered to the same wallet on the destination chain. */
  destination: SummarySide;
  providerFee: { amount: string; amountRaw: bigint };
  /** Paid to `treasury` in the source token, on top of the amount. */
  gasFee: { amount: string; amountRaw: bigint; symbol: string; treasury: Address };
  /** Everything the wallet spends of the source token: amount plus gas fee. */
  totalDebit: { amount: string; amountRaw: bigint };
  /** Provider fee plus gas fee in basis points of the amount, rounded up; `maxFeeBps` bounds it. */
  feeBps: number;
  bridge: Address;
  depositFunction: 'deposit' | 'depositV3';
  integratorSuffix: Hex | null;
  exclusiveRelayer: Address | null;
  quoteTimestamp: Date;
  /** After this the deposit can no longer be filled and is refunded in a later settlement. */
  fillDeadline: Date;
  quoteExpiresAt: Date;
  entryPoint: Address;
  entryPointVersion: '0.7' | '0.8';
  delegate: Address;
  /** True when the wallet signs an EIP-7702 authorization too (not yet delegated on this chain). */
  needsAuthorization: boolean;
  paymaster: Address | null;
  userOpHash: Hex;
}

/**
 * What `verifyBridgeBatch` returns: the summary, frozen, with what it bound. `signBridgeBatch`
 * signs only such a batch (or, by name, an unverified bundle), and refuses it when the bundle
 * verified has changed since.
 */
export interface VerifiedBridgeBatch extends Readonly<BridgeBatchSummary> {
  /** keccak256 of the verified bundle's canonical JSON (calls, user operation, authorization). */
  readonly digest: Hex;
  /** The EIP-7702 authorization the signer will sign, as verified; `null` when already delegated. */
  readonly authorization: Readonly<BundleAuthorization> | null;
}
