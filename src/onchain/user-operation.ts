import { ENTRY_POINT_V07, ENTRY_POINT_V08 } from '../core/contracts.js';
import type { Address, Hex } from '../schemas/common.js';
import { addressWord, isHex, quantity, sameAddress, uintWord } from './hex.js';
import { keccak256Hex, keccak256HexRecurring, keccak256Text } from './keccak.js';

/** The fields of a v0.7+ user operation in the packed form the EntryPoint hashes. */
export interface PackedUserOperation {
  sender: Address;
  nonce: bigint;
  initCode: string;
  callData: string;
  /** `uint128(verificationGasLimit) ‖ uint128(callGasLimit)`, 64 hex chars. */
  accountGasLimits: string;
  preVerificationGas: bigint;
  /** `uint128(maxPriorityFeePerGas) ‖ uint128(maxFeePerGas)`, 64 hex chars. */
  gasFees: string;
  paymasterAndData: string;
  /**
   * The paymaster address, when the operation is sponsored. The zero address is none: the
   * EntryPoint reads it as "no paymaster" and takes the prefund from the wallet.
   */
  paymaster: Address | undefined;
  /** The gas limits and fees, unpacked from whichever form the operation came in. */
  gas: GasFields;
}

/** Gas limits and fees of a user operation. */
export interface GasFields {
  verificationGasLimit: bigint;
  callGasLimit: bigint;
  preVerificationGas: bigint;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** Fields of the RPC form; in a packed operation they would be a second, conflicting reading. */
const RPC_ONLY = [
  'factory',
  'factoryData',
  'callGasLimit',
  'verificationGasLimit',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'paymaster',
  'paymasterVerificationGasLimit',
  'paymasterPostOpGasLimit',
  'paymasterData',
] as const;

export type EntryPointVersion = '0.7' | '0.8';

export function entryPointVersion(entryPoint: string): EntryPointVersion | undefined {
  if (sameAddress(entryPoint, ENTRY_POINT_V07)) return '0.7';
  if (sameAddress(entryPoint, ENTRY_POINT_V08)) return '0.8';
  return undefined;
}

const UINT128_MAX = (1n << 128n) - 1n;
const UINT256_MAX = (1n << 256n) - 1n;

function uint128(value: bigint): string {
  return value.toString(16).padStart(32, '0');
}

/**
 * Reads a user operation in either JSON form (the RPC form with `factory`, `paymaster` and separate
 * gas fields, or the packed form with `initCode`, `accountGasLimits`, `gasFees`,
 * `paymasterAndData`). Any field that is missing, mistyped or out of range is returned as a problem:
 * a field that cannot be read cannot be checked. `sender` is taken as the bundle schema checked it.
 */
export function packUserOperation(
  op: Record<string, unknown> & { sender: Address },
  /** Call data the caller already matched, lowercase, against the canonical encoding: no hex check. */
  knownCallData?: string,
): { op: PackedUserOperation } | { problems: string[] } {
  const problems: string[] = [];
  const read = new FieldReader(op, problems);
  const nonce = read.num('nonce', UINT256_MAX);
  const callData = knownCallData === undefined ? read.bytes('callData', false) : knownCallData.slice(2);
  const preVerificationGas = read.num('preVerificationGas', UINT256_MAX);
  const packed = 'accountGasLimits' in op || 'gasFees' in op || 'initCode' in op || 'paymasterAndData' in op;
  const form = packed ? readPackedForm(op, read, problems) : readRpcForm(read, problems, preVerificationGas);
  const { initCode, accountGasLimits, gasFees, paymasterAndData } = form;
  if (paymasterAndData && paymasterAndData.length < 104)
    problems.push('paymasterAndData is shorter than 52 bytes');
  if (problems.length > 0) return { problems };
  const half = (word: string, second: boolean) =>
    BigInt(`0x${word.slice(second ? 32 : 0, second ? 64 : 32)}`);
  const gas = form.gas ?? {
    verificationGasLimit: half(accountGasLimits, false),
    callGasLimit: half(accountGasLimits, true),
    preVerificationGas,
    paymasterVerificationGasLimit: paymasterAndData ? BigInt(`0x${paymasterAndData.slice(40, 72)}`) : 0n,
    paymasterPostOpGasLimit: paymasterAndData ? BigInt(`0x${paymasterAndData.slice(72, 104)}`) : 0n,
    maxPriorityFeePerGas: half(gasFees, false),
    maxFeePerGas: half(gasFees, true),
  };
  const paymaster = paymasterAndData.slice(0, 40);
  return {
    op: {
      sender: op.sender,
      nonce,
      initCode,
      callData,
      accountGasLimits,
      preVerificationGas,
      gasFees,
      paymasterAndData,
      paymaster: paymaster && !/^0+$/.test(paymaster) ? `0x${paymaster}` : undefined,
      gas,
    },
  };
}

/** The fields that differ between the two forms, as packed for the hash (hex without `0x`). */
interface OperationForm {
  initCode: string;
  accountGasLimits: string;
  gasFees: string;
  paymasterAndData: string;
  /** The gas figures, when the form gives them as numbers already. */
  gas?: GasFields;
}

/** Reads an operation's fields; what it cannot read is added to `problems`. */
class FieldReader {
  constructor(
    private readonly op: Record<string, unknown>,
    readonly problems: string[],
  ) {}

  num(name: string, max: bigint): bigint {
    const value = quantity(this.op[name]);
    if (value === undefined || value > max) {
      this.problems.push(`${name} is not a quantity of at most ${max === UINT128_MAX ? 128 : 256} bits`);
      return 0n;
    }
    return value;
  }

  bytes(name: string, optional: boolean): string {
    const value = this.op[name];
    if (value === undefined || value === null) {
      if (!optional) this.problems.push(`${name} is missing`);
      return '';
    }
    if (!isHex(value) || value.length % 2 !== 0) {
      this.problems.push(`${name} is not even-length hex`);
      return '';
    }
    return value.slice(2).toLowerCase();
  }

  word(name: string): string {
    const value = this.bytes(name, false);
    if (value && value.length !== 64) this.problems.push(`${name} is not 32 bytes`);
    return value;
  }
}

/** The packed form: `initCode`, `accountGasLimits`, `gasFees`, `paymasterAndData`, and no RPC field. */
function readPackedForm(op: Record<string, unknown>, read: FieldReader, problems: string[]): OperationForm {
  const mixed = RPC_ONLY.filter((name) => op[name] !== undefined && op[name] !== null);
  if (mixed.length > 0) problems.push(`mixes the packed form with RPC fields (${mixed.join(', ')})`);
  return {
    initCode: read.bytes('initCode', false),
    accountGasLimits: read.word('accountGasLimits'),
    gasFees: read.word('gasFees'),
    paymasterAndData: read.bytes('paymasterAndData', false),
  };
}

/** The RPC form: gas figures as numbers already, packed for the hash and kept as they are. */
function readRpcForm(read: FieldReader, problems: string[], preVerificationGas: bigint): OperationForm {
  const factory = read.bytes('factory', true);
  const factoryData = read.bytes('factoryData', true);
  if (!factory && factoryData) problems.push('factoryData is given without a factory');
  const verificationGasLimit = read.num('verificationGasLimit', UINT128_MAX);
  const callGasLimit = read.num('callGasLimit', UINT128_MAX);
  const maxPriorityFeePerGas = read.num('maxPriorityFeePerGas', UINT128_MAX);
  const maxFeePerGas = read.num('maxFeePerGas', UINT128_MAX);
  const paymaster = read.bytes('paymaster', true);
  if (paymaster && paymaster.length !== 40) problems.push('paymaster is not an address');
  const paymasterVerificationGasLimit = paymaster
    ? read.num('paymasterVerificationGasLimit', UINT128_MAX)
    : 0n;
  const paymasterPostOpGasLimit = paymaster ? read.num('paymasterPostOpGasLimit', UINT128_MAX) : 0n;
  return {
    initCode: factory + factoryData,
    accountGasLimits: uint128(verificationGasLimit) + uint128(callGasLimit),
    gasFees: uint128(maxPriorityFeePerGas) + uint128(maxFeePerGas),
    paymasterAndData: paymaster
      ? paymaster +
        uint128(paymasterVerificationGasLimit) +
        uint128(paymasterPostOpGasLimit) +
        read.bytes('paymasterData', true)
      : '',
    gas: {
      verificationGasLimit,
      callGasLimit,
      preVerificationGas,
      paymasterVerificationGasLimit,
      paymasterPostOpGasLimit,
      maxFeePerGas,
      maxPriorityFeePerGas,
    },
  };
}

const EIP7702_MARKER = /^7702(0{36})?$/;

/**
 * The bare EIP-7702 marker (short, or padded to 20 bytes) with nothing after it: on EntryPoint
 * v0.8 it stands for the wallet's delegate in the hash and makes no call.
 */
export function isEip7702Marker(initCode: string): boolean {
  return initCode === '7702' || initCode === `7702${'0'.repeat(36)}`;
}
/**
 * The hash of a v0.8 initCode whose EIP-7702 marker stands for the delegate. The bare marker (the
 * only one the verifier accepts) hashes the delegate alone, the same for every batch of a wallet
 * kind: remembered per delegate. Data after the marker is hashed afresh.
 */
function delegateInitCodeHash(delegate: string, rest: string): string {
  const address = delegate.slice(2).toLowerCase();
  return rest ? keccak256Hex(address + rest) : keccak256HexRecurring(address);
}

/** The EIP-712 type hash and domain prefix of v0.8, hashed on first use: importing hashes nothing. */
let eip712: { typeHash: string; domainPrefix: string } | undefined;

function eip712Constants(): { typeHash: string; domainPrefix: string } {
  eip712 ??= {
    typeHash: keccak256Text(
      'PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)',
    ),
    domainPrefix:
      keccak256Text('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)') +
      keccak256Text('ERC4337') +
      keccak256Text('1'),
  };
  return eip712;
}

/**
 * The user-operation hash the EntryPoint computes: v0.7 keccak of the packed fields with entry point
 * and chain; v0.8 the EIP-712 digest, where an EIP-7702 initCode marker stands for the delegate.
 * Each field is hashed once, straight from its hex, with no ABI encoder in between.
 */
export function userOperationHash(
  op: PackedUserOperation,
  context: {
    entryPoint: string;
    chainId: number;
    version: EntryPointVersion;
    delegate: string;
    /** keccak256 of `op.callData`, when the caller has it already: the largest field, hashed once. */
    callDataHash?: string;
  },
): Hex {
  const initCodeHash =
    context.version === '0.8' && EIP7702_MARKER.test(op.initCode.slice(0, 40))
      ? delegateInitCodeHash(context.delegate, op.initCode.slice(40))
      : keccak256Hex(op.initCode);
  // Joined, not hashed part by part: V8 joins strings lazily, and one hex write costs less than many.
  const fields =
    addressWord(op.sender) +
    uintWord(op.nonce) +
    initCodeHash +
    (context.callDataHash ?? keccak256Hex(op.callData)) +
    op.accountGasLimits +
    uintWord(op.preVerificationGas) +
    op.gasFees +
    keccak256Hex(op.paymasterAndData);
  const chainId = uintWord(BigInt(context.chainId));
  if (context.version === '0.7') {
    return `0x${keccak256Hex(keccak256Hex(fields) + addressWord(context.entryPoint) + chainId)}`;
  }
  const { typeHash, domainPrefix } = eip712Constants();
  // The same few chains and entry points every time: remembered under the exact domain hashed.
  const domainSeparator = keccak256HexRecurring(domainPrefix + chainId + addressWord(context.entryPoint));
  return `0x${keccak256Hex(`1901${domainSeparator}${keccak256Hex(typeHash + fields)}`)}`;
}
