// The text of a description: English sentences whose numbers, dates and times follow the locale.
// A chain is named from the SDK's own table by its id, a token by the verifier's table when it
// lists it; what only the route says (an unlisted symbol, a chain's text) is shown with every
// invisible or control character written out, so that it cannot reorder or hide the text around it.
import type { Hex } from '../../schemas/common.js';
import type { SummarySide, VerifiedBridgeBatch } from '../verify/types.js';
import { checksumAddress } from './digest.js';
import {
  type Cut,
  formatAmount,
  formatBpsAsPercent,
  formatInteger,
  formatRelative,
  formatTime,
} from './format.js';
import { CHAIN_NAMES, delegateName } from './names.js';
import type { ReadDescribeOptions } from './options.js';
import type { DescriptionWarning, DescriptionWarningCode } from './types.js';

const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** Text from the service as it may be shown: invisible and control characters as `\u{…}`. */
export function shown(text: string): string {
  return text.replace(HIDDEN, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
}

/** `0x6969…5F49`: enough to recognise an address; `machine` keeps it whole. */
export function shortAddress(value: string): string {
  const full = checksumAddress(value);
  return `${full.slice(0, 6)}…${full.slice(-4)}`;
}

/** `0x1234abcd…89abcdef`: the first and last 4 bytes of a hash, to compare on another screen. */
export function shortHash(hash: Hex): string {
  return `${hash.slice(0, 10)}…${hash.slice(-8)}`;
}

/** A chain by its id: the SDK's name, or the route's text with the id when the SDK has none. */
export function chainName(side: { chain: string; chainId: number }): string {
  return CHAIN_NAMES[side.chainId] ?? `${shown(side.chain)} (chain ${side.chainId})`;
}

/** Everything the sentences need, computed once. */
export interface TextContext {
  verified: VerifiedBridgeBatch;
  options: ReadDescribeOptions;
  erc191Digest: Hex;
}

function money(context: TextContext, side: SummarySide, raw: bigint, cut: Cut): string {
  const { locale, maxFractionDigits } = context.options;
  return `${formatAmount(raw, side.decimals, locale, maxFractionDigits, cut)} ${shown(side.symbol)}`;
}

/** Provider fee in basis points of the amount, rounded up as the verifier rounds `feeBps`. */
function providerFeeBps(verified: VerifiedBridgeBatch): bigint {
  const amount = verified.source.amountRaw;
  if (amount === 0n) return 0n;
  return (verified.providerFee.amountRaw * 10_000n + amount - 1n) / amount;
}

/** `Bridge 25.5 USDC from Base to BNB Chain`. */
export function titleOf(context: TextContext): string {
  const { source, destination } = context.verified;
  return `Bridge ${money(context, source, source.amountRaw, 'paid')} from ${chainName(source)} to ${chainName(destination)}`;
}

/** The lines, in the documented order. */
export function linesOf(context: TextContext): string[] {
  const { verified, options } = context;
  const { source, destination, gasFee, totalDebit } = verified;
  const { locale, timeZone, nowMs } = options;
  const wallet = shortAddress(verified.wallet);
  const lines = [
    `${titleOf(context)}, receive at least ${money(context, destination, destination.amountRaw, 'received')} (route ${shown(verified.routeId)} via ${shown(verified.provider)})`,
    `You send ${money(context, source, source.amountRaw, 'paid')} + ${money(context, source, gasFee.amountRaw, 'paid')} gas fee = ${money(context, source, totalDebit.amountRaw, 'paid')} total from ${wallet} on ${chainName(source)}`,
    `You receive at least ${money(context, destination, destination.amountRaw, 'received')} on ${chainName(destination)}, to the same wallet ${wallet}`,
    `Provider fee ${money(context, source, verified.providerFee.amountRaw, 'paid')} (${formatInteger(providerFeeBps(verified), locale)} bps of the amount; all fees ${formatInteger(verified.feeBps, locale)} bps)`,
    `Quote valid until ${formatTime(verified.quoteExpiresAt, locale, timeZone)} (${formatRelative(verified.quoteExpiresAt, nowMs, locale)})`,
    `If no relayer fills it by ${formatTime(verified.fillDeadline, locale, timeZone)}, the full ${money(context, source, source.amountRaw, 'received')} is refunded to this wallet on ${chainName(source)} in a later settlement (hours after the deadline)`,
  ];
  if (verified.authorization !== null)
    lines.push(
      `First use on ${chainName(source)}: this wallet is delegated to ${shortAddress(verified.delegate)}, ${delegateName(verified.delegate) ?? 'a contract the SDK does not list'}, authorization nonce ${formatInteger(verified.authorization.nonce, locale)}`,
    );
  lines.push(
    verified.paymaster
      ? `Gas sponsored by paymaster ${shortAddress(verified.paymaster)}`
      : `No paymaster: this wallet pays the network gas on ${chainName(source)} itself`,
    `Signs ${shortHash(context.erc191Digest)} for user operation ${shortHash(verified.userOpHash)}`,
  );
  return lines;
}

function warningText(code: DescriptionWarningCode, context: TextContext): string {
  const { verified, options } = context;
  const { source, destination } = verified;
  switch (code) {
    case 'FIRST_DELEGATION':
      return `Signing also delegates this wallet on ${chainName(source)} to ${shortAddress(verified.delegate)} (EIP-7702); it stays delegated after this bridge`;
    case 'UNKNOWN_DELEGATE':
      return `The delegate ${shortAddress(verified.delegate)} is not a published Modular Account delegate: it was allowed by this application's options`;
    case 'UNKNOWN_TOKEN':
      return [source, destination]
        .filter((side) => !side.known)
        .map(
          (side) =>
            `${shown(side.symbol)} on ${chainName(side)} (${shortAddress(side.token)}) is not in the SDK's token table: only the route vouches for its symbol`,
        )
        .join('; ');
    case 'UNKNOWN_CHAIN':
      return `The SDK has no name for chain ${[source, destination]
        .filter((side) => CHAIN_NAMES[side.chainId] === undefined)
        .map((side) => side.chainId)
        .join(' or ')}: its name comes from the route`;
    case 'EXCLUSIVE_RELAYER':
      return `Only relayer ${shortAddress(verified.exclusiveRelayer!)} may fill this deposit during its exclusivity window`;
    case 'NO_PAYMASTER':
      return `No paymaster: the wallet pays the network gas itself, at the fees the operation names`;
    case 'HIGH_FEE':
      return `Fees are ${formatBpsAsPercent(verified.feeBps, options.locale)} of the amount, above ${formatBpsAsPercent(options.highFeeBps, options.locale)}`;
    case 'QUOTE_EXPIRED':
      return `The quote expired ${formatRelative(verified.quoteExpiresAt, options.nowMs, options.locale)}: the service refuses a batch signed now`;
  }
}

/** The warnings: those of the batch (as `machine` lists them), then those of the options and clock. */
export function warningsOf(
  codes: readonly DescriptionWarningCode[],
  context: TextContext,
): DescriptionWarning[] {
  const { verified, options } = context;
  const all = [...codes];
  if (verified.feeBps > options.highFeeBps) all.push('HIGH_FEE');
  if (verified.quoteExpiresAt.getTime() <= options.nowMs) all.push('QUOTE_EXPIRED');
  return all.map((code) => ({ code, text: warningText(code, context) }));
}
