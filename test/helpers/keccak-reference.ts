/**
 * keccak256 written straight from the Keccak reference (FIPS 202 §3.2 steps θ ρ π χ ι over BigInt
 * lanes, the original 0x01 padding): slow, and independent of the implementation the SDK uses, so
 * the two agreeing on every length around the block boundaries means something.
 */
const MASK = (1n << 64n) - 1n;
const RATE = 136;

const rotl = (lane: bigint, by: number): bigint =>
  by === 0 ? lane : ((lane << BigInt(by)) | (lane >> BigInt(64 - by))) & MASK;

/** rc(t) of FIPS 202 algorithm 5: the output bit of an 8-bit LFSR. */
function rc(t: number): bigint {
  let r = 1;
  for (let i = 1; i <= t % 255; i++) {
    r <<= 1;
    if (r & 0x100) r ^= 0x171;
  }
  return BigInt(r & 1);
}

const ROUND_CONSTANTS = Array.from({ length: 24 }, (_, round) => {
  let constant = 0n;
  for (let j = 0; j < 7; j++) constant |= rc(j + 7 * round) << BigInt(2 ** j - 1);
  return constant;
});

/** ρ offsets, lane x + 5y, from FIPS 202 algorithm 2. */
const OFFSETS = (() => {
  const offsets = new Array<number>(25).fill(0);
  let [x, y] = [1, 0];
  for (let t = 0; t < 24; t++) {
    offsets[x + 5 * y] = (((t + 1) * (t + 2)) / 2) % 64;
    [x, y] = [y, (2 * x + 3 * y) % 5];
  }
  return offsets;
})();

function permute(a: bigint[]): void {
  for (let round = 0; round < 24; round++) {
    const c = [0, 1, 2, 3, 4].map((x) => a[x]! ^ a[x + 5]! ^ a[x + 10]! ^ a[x + 15]! ^ a[x + 20]!);
    for (let x = 0; x < 5; x++) {
      const d = c[(x + 4) % 5]! ^ rotl(c[(x + 1) % 5]!, 1);
      for (let y = 0; y < 5; y++) a[x + 5 * y]! ^= d;
    }
    const b = new Array<bigint>(25);
    for (let x = 0; x < 5; x++)
      for (let y = 0; y < 5; y++) b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(a[x + 5 * y]!, OFFSETS[x + 5 * y]!);
    for (let x = 0; x < 5; x++)
      for (let y = 0; y < 5; y++)
        a[x + 5 * y] = b[x + 5 * y]! ^ (~b[((x + 1) % 5) + 5 * y]! & MASK & b[((x + 2) % 5) + 5 * y]!);
    a[0]! ^= ROUND_CONSTANTS[round]!;
  }
}

/** keccak256 of `bytes` as 64 lowercase hex characters. */
export function referenceKeccak256(bytes: Uint8Array): string {
  const padded = new Uint8Array((Math.floor(bytes.length / RATE) + 1) * RATE);
  padded.set(bytes);
  padded[bytes.length]! ^= 0x01;
  padded[padded.length - 1]! ^= 0x80;
  const state = new Array<bigint>(25).fill(0n);
  for (let block = 0; block < padded.length; block += RATE) {
    for (let lane = 0; lane < RATE / 8; lane++) {
      let value = 0n;
      for (let i = 7; i >= 0; i--) value = (value << 8n) | BigInt(padded[block + 8 * lane + i]!);
      state[lane]! ^= value;
    }
    permute(state);
  }
  let out = '';
  for (let lane = 0; lane < 4; lane++)
    for (let i = 0; i < 8; i++)
      out += ((state[lane]! >> BigInt(8 * i)) & 0xffn).toString(16).padStart(2, '0');
  return out;
}
