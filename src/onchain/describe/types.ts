// What `describeBridgeBatch` returns: text for a person, a locale-free form for a program, and the
// digests that tie both to the bytes a signer receives.
import type { Hex } from '../../schemas/common.js';
import type { JsonValue } from './digest.js';

/** The version of `machine`: a field's meaning never changes under one version. */
export const BRIDGE_SUMMARY_SCHEMA = 'partner-s2s/bridge-summary@1';

/**
 * Why an approver should look twice:
 * - `FIRST_DELEGATION`: signing also delegates the wallet (EIP-7702) on the source chain;
 * - `UNKNOWN_DELEGATE`: to code that is not one of the published delegates (a partner allowed it);
 * - `UNKNOWN_TOKEN`: a token the SDK's table does not list: only the route vouches for its symbol;
 * - `UNKNOWN_CHAIN`: a chain the SDK has no name for;
 * - `EXCLUSIVE_RELAYER`: one relayer alone may fill the deposit at first;
 * - `NO_PAYMASTER`: the wallet pays the network fee itself;
 * - `HIGH_FEE`: fees above `highFeeBps` of the amount;
 * - `QUOTE_EXPIRED`: the quote has expired as of `now` (text only, never in `machine`).
 */
export type DescriptionWarningCode =
  | 'FIRST_DELEGATION'
  | 'UNKNOWN_DELEGATE'
  | 'UNKNOWN_TOKEN'
  | 'UNKNOWN_CHAIN'
  | 'EXCLUSIVE_RELAYER'
  | 'NO_PAYMASTER'
  | 'HIGH_FEE'
  | 'QUOTE_EXPIRED';

/** One warning: a stable code to act on, and a sentence to show. */
export interface DescriptionWarning {
  code: DescriptionWarningCode;
  text: string;
}

/**
 * One fact in ERC-7730 field vocabulary: `format` is one of its field formats, `value` is
 * locale-free (amounts in base units as decimal strings, times as ISO 8601 UTC, addresses in full
 * EIP-55 form), `visible` says whether a device must show it (`always`) or may (`optional`).
 */
export interface MachineField {
  id: string;
  label: string;
  format: 'tokenAmount' | 'chainId' | 'addressName' | 'date' | 'unit' | 'raw' | 'enum';
  value: JsonValue;
  params?: { [key: string]: JsonValue };
  visible: 'always' | 'optional';
}

/**
 * The locale-free description: the same object, byte for byte in its canonical JSON, whatever the
 * locale, time zone, clock or Node line. `summaryDigest` is the keccak256 of that JSON.
 */
export interface BridgeSummaryMachine {
  schema: typeof BRIDGE_SUMMARY_SCHEMA;
  intent: 'Bridge';
  interpolatedIntent: string;
  fields: MachineField[];
  /** The warnings that follow from the batch alone (not `QUOTE_EXPIRED`, which depends on `now`). */
  warnings: { code: DescriptionWarningCode }[];
}

/** What ties the description to the bytes that are signed. */
export interface BridgeBatchBinding {
  /** The user-operation hash the wallet signs (personal_sign over these 32 raw bytes). */
  userOpHash: Hex;
  /**
   * keccak256("\x19Ethereum Signed Message:\n32" ‖ userOpHash): the digest a KMS digest signing or
   * a raw MPC signing receives, equal to viem's `hashMessage({ raw: userOpHash })`.
   */
  erc191Digest: Hex;
  /** The EIP-7702 signing hash of the authorization (viem's `hashAuthorization`); null when none is signed. */
  authorizationHash: Hex | null;
  /** The verified batch's `digest`. */
  bundleDigest: Hex;
  /** keccak256 of the RFC 8785 canonical JSON of `machine`. */
  summaryDigest: Hex;
}

/** A verified batch as an approver reads it and a signer checks it. */
export interface BridgeBatchView {
  /** One line, e.g. `Bridge 25.5 USDC from Base to BNB Chain`. */
  title: string;
  /**
   * One fact a line, in this order: the intent; what is sent (amount + gas fee = total, from which
   * wallet, on which chain); what is received at least, where, to the same wallet; the provider
   * fee; the quote's validity; the refund path; the delegation (only when an authorization is
   * signed); the paymaster; the digest signed.
   */
  lines: string[];
  warnings: DescriptionWarning[];
  machine: BridgeSummaryMachine;
  binding: BridgeBatchBinding;
}
