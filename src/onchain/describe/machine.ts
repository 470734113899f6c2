// The locale-free form of a verified batch, in ERC-7730 field vocabulary, and the warnings that
// follow from the batch alone. Nothing here reads the locale, the time zone or the clock: its
// canonical JSON, and so `summaryDigest`, is the same wherever and whenever it is made.
import type { Address, Hex } from '../../schemas/common.js';
import type { SummarySide, VerifiedBridgeBatch } from '../verify/types.js';
import { checksumAddress, type JsonValue } from './digest.js';
import { CHAIN_NAMES, delegateName } from './names.js';
import {
  BRIDGE_SUMMARY_SCHEMA,
  type BridgeSummaryMachine,
  type DescriptionWarningCode,
  type MachineField,
} from './types.js';

/** The warnings that follow from the batch alone, in the order they are shown. */
export function batchWarnings(verified: VerifiedBridgeBatch): DescriptionWarningCode[] {
  const { source, destination } = verified;
  const codes: DescriptionWarningCode[] = [];
  if (verified.needsAuthorization) {
    codes.push('FIRST_DELEGATION');
    if (delegateName(verified.delegate) === undefined) codes.push('UNKNOWN_DELEGATE');
  }
  if (!source.known || !destination.known) codes.push('UNKNOWN_TOKEN');
  if (CHAIN_NAMES[source.chainId] === undefined || CHAIN_NAMES[destination.chainId] === undefined)
    codes.push('UNKNOWN_CHAIN');
  if (verified.exclusiveRelayer !== null) codes.push('EXCLUSIVE_RELAYER');
  if (verified.paymaster === null) codes.push('NO_PAYMASTER');
  return codes;
}

function tokenAmount(side: SummarySide, raw: bigint): JsonValue {
  return {
    raw: raw.toString(),
    decimals: side.decimals,
    symbol: side.symbol,
    token: checksumAddress(side.token),
    chainId: side.chainId,
    known: side.known,
  };
}

function field(
  id: string,
  label: string,
  format: MachineField['format'],
  value: JsonValue,
  visible: MachineField['visible'] = 'always',
  params?: MachineField['params'],
): MachineField {
  return { id, label, format, value, ...(params ? { params } : {}), visible };
}

const address = (value: Address | Hex): string => checksumAddress(value);

/** The fields of what moves: amounts, fees, chains, the wallet on both sides. */
function moneyFields(verified: VerifiedBridgeBatch): MachineField[] {
  const { source, destination, gasFee } = verified;
  return [
    field('amountIn', 'Send', 'tokenAmount', tokenAmount(source, source.amountRaw)),
    field('gasFee', 'Gas fee', 'tokenAmount', tokenAmount(source, gasFee.amountRaw)),
    field('gasFeeRecipient', 'Gas fee to', 'addressName', address(gasFee.treasury), 'optional'),
    field('totalDebit', 'Total debit', 'tokenAmount', tokenAmount(source, verified.totalDebit.amountRaw)),
    field('fromChain', 'From chain', 'chainId', source.chainId),
    field('sender', 'From wallet', 'addressName', address(verified.wallet)),
    field('amountOut', 'Receive at least', 'tokenAmount', tokenAmount(destination, destination.amountRaw)),
    field('toChain', 'To chain', 'chainId', destination.chainId),
    field('recipient', 'To wallet', 'addressName', address(verified.wallet)),
    field('providerFee', 'Provider fee', 'tokenAmount', tokenAmount(source, verified.providerFee.amountRaw)),
    field('feeBps', 'Fees in all', 'unit', verified.feeBps, 'always', { base: 'bp', decimals: 0 }),
  ];
}

/** The fields of time, refund and the accounts and contracts involved. */
function executionFields(verified: VerifiedBridgeBatch): MachineField[] {
  const { authorization } = verified;
  const fields = [
    field('quoteExpiresAt', 'Quote valid until', 'date', verified.quoteExpiresAt.toISOString()),
    field('fillDeadline', 'Fill deadline', 'date', verified.fillDeadline.toISOString()),
    field('quoteTimestamp', 'Quoted at', 'date', verified.quoteTimestamp.toISOString(), 'optional'),
    field('refundTo', 'Refund if unfilled', 'addressName', address(verified.wallet), 'always', {
      chainId: verified.source.chainId,
    }),
  ];
  if (authorization !== null) {
    fields.push(
      field('delegate', 'Delegate to', 'addressName', address(verified.delegate)),
      field('authorization', 'EIP-7702 authorization', 'raw', {
        chainId: authorization.chainId,
        address: address(authorization.address),
        nonce: authorization.nonce,
      }),
    );
  }
  if (verified.exclusiveRelayer !== null)
    fields.push(
      field('exclusiveRelayer', 'Exclusive relayer', 'addressName', address(verified.exclusiveRelayer)),
    );
  fields.push(
    field('paymaster', 'Paymaster', 'addressName', verified.paymaster ? address(verified.paymaster) : null),
    field('bridge', 'Bridge contract', 'addressName', address(verified.bridge), 'optional'),
    field('depositFunction', 'Deposit function', 'enum', verified.depositFunction, 'optional'),
    field('integratorSuffix', 'Integrator tag', 'raw', verified.integratorSuffix, 'optional'),
    field('entryPoint', 'EntryPoint', 'addressName', address(verified.entryPoint), 'optional', {
      version: verified.entryPointVersion,
    }),
    field('userOpHash', 'User operation hash', 'raw', verified.userOpHash),
    field('bundleDigest', 'Bundle digest', 'raw', verified.digest, 'optional'),
  );
  return fields;
}

/**
 * The machine form of a verified batch: its schema, intent, fields and warnings. Every value is
 * JSON (bigints as decimal strings), so that `canonicalJson` holds it as it is.
 */
export function machineOf(verified: VerifiedBridgeBatch): BridgeSummaryMachine {
  return {
    schema: BRIDGE_SUMMARY_SCHEMA,
    intent: 'Bridge',
    interpolatedIntent: 'Bridge {amountIn} from {fromChain} to {toChain}, receive at least {amountOut}',
    fields: [...moneyFields(verified), ...executionFields(verified)],
    warnings: batchWarnings(verified).map((code) => ({ code })),
  };
}
