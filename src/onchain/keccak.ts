import { keccakF } from './keccak-f.js';
import { INPUT_AT, KECCAK_WASM } from './keccak-wasm.js';

/**
 * keccak256 (the original Keccak padding, as Ethereum uses) over hex text. The verifier hashes
 * about 1.5 KB per batch, most of its work: a generated WebAssembly sponge (native 64-bit
 * rotates) does it about 3.5 times faster than the generated JS permutation, which remains for
 * runtimes without WebAssembly.
 */

const RATE = 136;
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;
  HEX_VALUE['0123456789ABCDEF'.charCodeAt(i)] = i;
}
const BYTE_HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const state = new Int32Array(50);
const tail = new Uint8Array(RATE);
/** What the sponge needs of node's Buffer: hex written and read natively, in place. */
interface BufferView {
  write(text: string, offset: number, encoding: 'hex'): number;
  toString(encoding: 'hex', start: number, end: number): string;
}
/** Node decodes hex natively, several times faster than a loop; other runtimes use the loop. */
const NativeBuffer = (
  globalThis as {
    Buffer?: {
      from(hex: string, encoding: 'hex'): Uint8Array;
      from(memory: ArrayBuffer): BufferView;
    };
  }
).Buffer;

function hexToBytes(hex: string): Uint8Array {
  if (NativeBuffer) return NativeBuffer.from(hex, 'hex');
  const bytes = new Uint8Array(hex.length >>> 1);
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = (HEX_VALUE[hex.charCodeAt(2 * i)]! << 4) | HEX_VALUE[hex.charCodeAt(2 * i + 1)]!;
  }
  return bytes;
}

function wordAt(bytes: Uint8Array, index: number): number {
  return bytes[index]! | (bytes[index + 1]! << 8) | (bytes[index + 2]! << 16) | (bytes[index + 3]! << 24);
}

/** keccak256 of no bytes: a user operation without initCode or paymaster hashes it every time. */
const EMPTY = 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';

interface WasmSponge {
  memory: WebAssembly.Memory;
  absorb: (blocks: number) => void;
  bytes: Uint8Array;
  /** The same memory as a node Buffer, where there is one: hex goes in and out without a copy. */
  view: BufferView | undefined;
}

/** Compiled on first use (1.7 KB, synchronous); `null` where WebAssembly is unavailable. */
let sponge: WasmSponge | null | undefined;

function loadSponge(): WasmSponge | null {
  if (sponge !== undefined) return sponge;
  try {
    const binary = Uint8Array.from(atob(KECCAK_WASM), (char) => char.charCodeAt(0));
    const { exports } = new WebAssembly.Instance(new WebAssembly.Module(binary), {});
    const memory = exports.memory as WebAssembly.Memory;
    sponge = {
      memory,
      absorb: exports.absorb as (blocks: number) => void,
      bytes: new Uint8Array(memory.buffer),
      view: NativeBuffer?.from(memory.buffer),
    };
  } catch {
    sponge = null;
  }
  return sponge;
}

/**
 * keccak256 through the WebAssembly sponge: hex is decoded straight into its memory (no
 * intermediate bytes), padded and absorbed, and the digest read back as hex in place.
 */
function keccakWasm(wasm: WasmSponge, input: string | Uint8Array): string {
  const length = typeof input === 'string' ? input.length >>> 1 : input.length;
  const blocks = Math.floor(length / RATE) + 1;
  const end = INPUT_AT + blocks * RATE;
  if (end > wasm.bytes.length) {
    wasm.memory.grow(Math.ceil((end - wasm.bytes.length) / 65_536));
    wasm.bytes = new Uint8Array(wasm.memory.buffer);
    wasm.view = NativeBuffer?.from(wasm.memory.buffer);
  }
  const { bytes, view } = wasm;
  if (typeof input !== 'string') bytes.set(input, INPUT_AT);
  else if (view) view.write(input, INPUT_AT, 'hex');
  else
    for (let i = 0; i < length; i++)
      bytes[INPUT_AT + i] =
        (HEX_VALUE[input.charCodeAt(2 * i)]! << 4) | HEX_VALUE[input.charCodeAt(2 * i + 1)]!;
  bytes.fill(0, INPUT_AT + length, end);
  bytes[INPUT_AT + length] = 0x01;
  bytes[end - 1]! |= 0x80;
  wasm.absorb(blocks);
  if (view) return view.toString('hex', 0, 32);
  let out = '';
  for (let i = 0; i < 32; i++) out += BYTE_HEX[bytes[i]!]!;
  return out;
}

/**
 * keccak256 of the bytes that `hex` spells (no `0x`, even length, already validated), as 64
 * lowercase hex characters without `0x`.
 */
export function keccak256Hex(hex: string): string {
  if (hex.length === 0) return EMPTY;
  const wasm = loadSponge();
  return wasm ? keccakWasm(wasm, hex) : keccak256HexJs(hex);
}

/** The same in plain JS, for runtimes without WebAssembly. */
export function keccak256HexJs(hex: string): string {
  if (hex.length === 0) return EMPTY;
  state.fill(0);
  const bytes = hexToBytes(hex);
  const length = bytes.length;
  let offset = 0;
  for (; length - offset >= RATE; offset += RATE) {
    for (let lane = 0; lane < RATE / 8; lane++) {
      state[2 * lane] = state[2 * lane]! ^ wordAt(bytes, offset + 8 * lane);
      state[2 * lane + 1] = state[2 * lane + 1]! ^ wordAt(bytes, offset + 8 * lane + 4);
    }
    keccakF(state);
  }
  tail.fill(0);
  const rest = length - offset;
  tail.set(bytes.subarray(offset));
  tail[rest]! ^= 0x01;
  tail[RATE - 1]! ^= 0x80;
  for (let lane = 0; lane < RATE / 8; lane++) {
    const at = 8 * lane;
    state[2 * lane] =
      state[2 * lane]! ^ (tail[at]! | (tail[at + 1]! << 8) | (tail[at + 2]! << 16) | (tail[at + 3]! << 24));
    state[2 * lane + 1] =
      state[2 * lane + 1]! ^
      (tail[at + 4]! | (tail[at + 5]! << 8) | (tail[at + 6]! << 16) | (tail[at + 7]! << 24));
  }
  keccakF(state);
  let out = '';
  for (let word = 0; word < 8; word++) {
    const value = state[word]!;
    out +=
      BYTE_HEX[value & 0xff]! +
      BYTE_HEX[(value >>> 8) & 0xff]! +
      BYTE_HEX[(value >>> 16) & 0xff]! +
      BYTE_HEX[(value >>> 24) & 0xff]!;
  }
  return out;
}

const encoder = new TextEncoder();

/** keccak256 of a UTF-8 string, as 64 hex characters: its bytes go in as they are, not through hex. */
export function keccak256Text(text: string): string {
  const bytes = encoder.encode(text);
  if (bytes.length === 0) return EMPTY;
  const wasm = loadSponge();
  if (wasm) return keccakWasm(wasm, bytes);
  let hex = '';
  for (const byte of bytes) hex += BYTE_HEX[byte]!;
  return keccak256HexJs(hex);
}
