type Viem = typeof import('viem');
type ViemUtils = typeof import('viem/utils');

let viem: Promise<Viem> | undefined;
let utils: Promise<ViemUtils> | undefined;

/**
 * viem is the heaviest dependency and only signing needs it (the verifier hashes with its own
 * keccak and reads ABI words itself), so it is loaded on first use: importing the main entry to
 * read routes, verify batches or receive callbacks never pays for it.
 */
export function loadViem(): Promise<Viem> {
  viem ??= import('viem');
  return viem;
}

export function loadViemUtils(): Promise<ViemUtils> {
  utils ??= import('viem/utils');
  return utils;
}
