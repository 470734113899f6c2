type Viem = typeof import('viem');
type ViemUtils = typeof import('viem/utils');

let viem: Promise<Viem> | undefined;
let utils: Promise<ViemUtils> | undefined;

/**
 * viem is the heaviest dependency; only verifying and signing need it, so it is loaded on first
 * use and the main entry stays cheap to import for partners that only read routes or callbacks.
 */
export function loadViem(): Promise<Viem> {
  viem ??= import('viem');
  return viem;
}

export function loadViemUtils(): Promise<ViemUtils> {
  utils ??= import('viem/utils');
  return utils;
}
