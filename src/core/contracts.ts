// The contracts the verifier's defaults name. They live below `onchain/` so that `DEFAULTS` can
// state them; `onchain/constants.ts` publishes them under these names.
import type { Address } from '../schemas/common.js';

/** ERC-4337 EntryPoint v0.7: the user-operation hash is keccak over the packed fields. */
export const ENTRY_POINT_V07: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
/** ERC-4337 EntryPoint v0.8: the user-operation hash is EIP-712 typed data. */
export const ENTRY_POINT_V08: Address = '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108';
/** Alchemy Modular Account v2 in EIP-7702 mode, v1.0.0 (the default delegate of Alchemy's SDKs). */
export const MAV2_7702_DELEGATE_V100: Address = '0x69007702764179f14F51cdce752f4f775d74E139';
/** Alchemy Modular Account v2 in EIP-7702 mode, v1.1.0. */
export const MAV2_7702_DELEGATE_V110: Address = '0x77021100bD87b7008E5E1989d0eB38555d0d0000';
