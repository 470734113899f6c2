import type { Address } from '../schemas/common.js';

/** ERC-4337 EntryPoint v0.7: the user-operation hash is keccak over the packed fields. */
export const ENTRY_POINT_V07: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
/** ERC-4337 EntryPoint v0.8: the user-operation hash is EIP-712 typed data. */
export const ENTRY_POINT_V08: Address = '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108';
/** Alchemy Modular Account v2 in EIP-7702 mode, v1.0.0 (the default delegate of Alchemy's SDKs). */
export const MAV2_7702_DELEGATE_V100: Address = '0x69007702764179f14F51cdce752f4f775d74E139';
/** Alchemy Modular Account v2 in EIP-7702 mode, v1.1.0. */
export const MAV2_7702_DELEGATE_V110: Address = '0x77021100bD87b7008E5E1989d0eB38555d0d0000';

/** The EntryPoints `verifyBridgeBatch` accepts unless told otherwise: v0.7 and v0.8. */
export const DEFAULT_ENTRY_POINTS: readonly Address[] = [ENTRY_POINT_V07, ENTRY_POINT_V08];
/** The EIP-7702 delegates `verifyBridgeBatch` accepts unless told otherwise: both published MAv2 7702 versions. */
export const DEFAULT_DELEGATES: readonly Address[] = [MAV2_7702_DELEGATE_V100, MAV2_7702_DELEGATE_V110];

/** Function selectors, without `0x`. */
export const SELECTOR = {
  approve: '095ea7b3',
  transfer: 'a9059cbb',
  /** Across SpokePool `deposit(bytes32 depositor, bytes32 recipient, …)`, the current entry point. */
  deposit: 'ad5425c6',
  /** Across SpokePool `depositV3(address depositor, address recipient, …)`, kept for compatibility. */
  depositV3: '7b939232',
  /** Modular Account `executeBatch((address,uint256,bytes)[])`. */
  executeBatch: '34fcd5be',
  /** Modular Account `executeUserOp`, which would put execution hooks in front of the calls. */
  executeUserOp: '8dd7712f',
} as const;

/** Marker of an Across integrator tag appended after a deposit's arguments: `1dc0de` + 2-byte id. */
export const INTEGRATOR_SUFFIX = /^1dc0de[0-9a-f]{4}$/;
