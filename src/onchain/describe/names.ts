// Names a person recognises, for the chains of `ACROSS_SPOKE_POOLS` and the published delegates.
// They come from the SDK's own tables, never from the service: a route's `chain` text is not
// checked by anything, so a description names a chain by its id.
import { MAV2_7702_DELEGATE_V100, MAV2_7702_DELEGATE_V110 } from '../../core/contracts.js';

/** Chain id → display name, for every chain the SpokePool table lists. */
export const CHAIN_NAMES: Readonly<Record<number, string>> = Object.freeze({
  1: 'Ethereum',
  10: 'Optimism',
  56: 'BNB Chain',
  130: 'Unichain',
  137: 'Polygon',
  143: 'Monad',
  232: 'Lens',
  288: 'Boba',
  324: 'zkSync',
  480: 'World Chain',
  919: 'Mode Sepolia',
  999: 'HyperEVM',
  1135: 'Lisk',
  1301: 'Unichain Sepolia',
  1868: 'Soneium',
  4202: 'Lisk Sepolia',
  4217: 'Tempo',
  4326: 'MegaETH',
  8453: 'Base',
  9745: 'Plasma',
  34443: 'Mode',
  37111: 'Lens Sepolia',
  42161: 'Arbitrum One',
  43114: 'Avalanche',
  57073: 'Ink',
  59144: 'Linea',
  80002: 'Polygon Amoy',
  81457: 'Blast',
  84532: 'Base Sepolia',
  129399: 'Tatara',
  421614: 'Arbitrum Sepolia',
  534352: 'Scroll',
  808813: 'BOB Sepolia',
  7777777: 'Zora',
  11155111: 'Sepolia',
  11155420: 'Optimism Sepolia',
  168587773: 'Blast Sepolia',
});

/** Lowercase delegate address → what it is. */
const DELEGATE_NAMES: ReadonlyMap<string, string> = new Map([
  [MAV2_7702_DELEGATE_V100.toLowerCase(), 'Alchemy Modular Account v2 (EIP-7702, v1.0.0)'],
  [MAV2_7702_DELEGATE_V110.toLowerCase(), 'Alchemy Modular Account v2 (EIP-7702, v1.1.0)'],
]);

/** The published name of a delegate, or undefined for one a partner allowed itself. */
export function delegateName(address: string): string | undefined {
  return DELEGATE_NAMES.get(address.toLowerCase());
}
