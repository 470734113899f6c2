import { DEFAULTS } from '../core/defaults.js';
import type { Address } from '../schemas/common.js';

export {
  ENTRY_POINT_V07,
  ENTRY_POINT_V08,
  MAV2_7702_DELEGATE_V100,
  MAV2_7702_DELEGATE_V110,
} from '../core/contracts.js';

/** The EntryPoints `verifyBridgeBatch` accepts unless told otherwise: v0.7 and v0.8 (`DEFAULTS.verifier.entryPoints`). */
export const DEFAULT_ENTRY_POINTS: readonly Address[] = DEFAULTS.verifier.entryPoints;
/**
 * The EIP-7702 delegates `verifyBridgeBatch` accepts unless told otherwise: both published MAv2
 * 7702 versions (`DEFAULTS.verifier.delegates`).
 */
export const DEFAULT_DELEGATES: readonly Address[] = DEFAULTS.verifier.delegates;

/**
 * The EntryPoint nonce key (the nonce's upper 192 bits) under which MAv2 runs the owner's own
 * validation: MAv2 selects a validation through the key (`entityId << 8 | global`), and the
 * wallet's fallback signer is entity 0, global. Under any other key no validation of the owner is
 * installed, so the account refuses the operation (AA23). `nonce = 1 << 64 | sequence`.
 */
export const OWNER_NONCE_KEY = 1n;

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
