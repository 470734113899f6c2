// Checks of the parts of a batch: the route's tokens against the well-known table, gas fields, the
// ERC-20 calls (approve, fee transfer) and the Across deposit, word for word; the calls as the
// user operation's call data must encode them.
import type { BridgeBundle, BridgeRoute, TokenSide } from '../../schemas/bridge.js';
import type { Address, Hex } from '../../schemas/common.js';
import { INTEGRATOR_SUFFIX, SELECTOR } from '../constants.js';
import { argWord, isExecuteBatchOf, sameAddress, uintWord, wordAddress, wordUint } from '../hex.js';
import { type KnownToken, symbolKey, type TokenIndex } from '../tables.js';
import type { GasFields } from '../user-operation.js';

import {
  CLOCK_SKEW_SEC,
  FILL_MARGIN_SEC,
  GAS_CEILINGS,
  MAX_EXCLUSIVITY_PERIOD_SEC,
  MAX_UINT32,
  QUOTE_TIME_BUFFER_SEC,
  ZERO_WORD,
} from './options.js';

export type Fail = (check: string, message: string, expected?: unknown, actual?: unknown) => void;

/**
 * One side of the route against the well-known table: a listed address must have the listed
 * decimals, and a well-known symbol must be one of the addresses listed for it on that chain.
 * Returns the table's entry; undefined when the table does not list the address (the summary
 * flags it: a well-known symbol with an unlisted address is an issue already).
 */
export function checkToken(
  fail: Fail,
  name: 'source' | 'destination',
  side: TokenSide,
  tokens: TokenIndex,
): KnownToken | undefined {
  const address = side.contractAddress.toLowerCase();
  const known = tokens.byAddress.get(`${side.chainId}:${address}`);
  if (known && known.decimals !== side.decimals) {
    fail(
      'route.tokenDecimals',
      `the ${name} token ${known.symbol} on chain ${side.chainId} has other decimals than the route says`,
      known.decimals,
      side.decimals,
    );
  }
  const symbol = symbolKey(side.symbol);
  const listed = tokens.bySymbol.get(`${side.chainId}:${symbol}`);
  // What arrives is the user's whole value: a well-known asset the table cannot place on the
  // destination chain is whatever token the service names, that its relayer delivers and is
  // repaid for in the real input token.
  if (!known && !listed && name === 'destination' && tokens.symbols.has(symbol)) {
    fail(
      'route.tokenAddress',
      `the destination token is called ${side.symbol}, which the table lists on other chains but not on chain ${side.chainId}: name it in the tokens option`,
      `a ${side.symbol} address the table or the tokens option lists on chain ${side.chainId}`,
      side.contractAddress,
    );
  }
  if (listed && !listed.has(address)) {
    fail(
      'route.tokenAddress',
      `the ${name} token is called ${side.symbol}, but that is not ${side.symbol}'s address on chain ${side.chainId}`,
      [...listed].join(', '),
      side.contractAddress,
    );
  }
  return known;
}

/** The names a side's token goes by: the table's symbol and aliases when it lists it, else the route's. */
export function assetNames(side: TokenSide, known: KnownToken | undefined): string[] {
  const names = known ? [known.symbol, ...(known.also ?? [])] : [side.symbol];
  return names.map(symbolKey);
}

/** Gas limits and fees within `GAS_CEILINGS`, whoever pays: no operation may name an unbounded prefund. */
export function checkGas(fail: Fail, gas: GasFields, sponsored: boolean): void {
  const bounds: [check: string, name: keyof GasFields, ceiling: bigint, what: string][] = [
    ['userOp.gasLimits', 'verificationGasLimit', GAS_CEILINGS.gasLimit, 'the ceiling'],
    ['userOp.gasLimits', 'callGasLimit', GAS_CEILINGS.gasLimit, 'the ceiling'],
    ['userOp.gasLimits', 'paymasterVerificationGasLimit', GAS_CEILINGS.gasLimit, 'the ceiling'],
    ['userOp.gasLimits', 'paymasterPostOpGasLimit', GAS_CEILINGS.gasLimit, 'the ceiling'],
    ['userOp.gasLimits', 'preVerificationGas', GAS_CEILINGS.preVerificationGas, 'the ceiling'],
    ['userOp.gasFees', 'maxFeePerGas', GAS_CEILINGS.maxFeePerGas, 'the ceiling'],
    ['userOp.gasFees', 'maxPriorityFeePerGas', gas.maxFeePerGas, 'maxFeePerGas'],
  ];
  for (const [check, name, ceiling, what] of bounds) {
    if (gas[name] > ceiling) fail(check, `${name} is above ${what}`, `at most ${ceiling}`, gas[name]);
  }
  if (sponsored) return;
  const prefund =
    (gas.verificationGasLimit +
      gas.callGasLimit +
      gas.paymasterVerificationGasLimit +
      gas.paymasterPostOpGasLimit +
      gas.preVerificationGas) *
    gas.maxFeePerGas;
  if (prefund > GAS_CEILINGS.walletPrefund) {
    fail(
      'userOp.prefund',
      'without a paymaster the wallet would prefund more native token than the ceiling (limits × maxFeePerGas)',
      `at most ${GAS_CEILINGS.walletPrefund} wei`,
      `${prefund} wei`,
    );
  }
}

/**
 * An ERC-20 call of shape `(address, uint256)` on the source token (approve, fee transfer): exactly
 * its selector and two clean words, the expected party and the exact amount.
 */
export function checkTokenCall(
  fail: Fail,
  call: { target: string; data: string },
  spec: {
    id: 'approve' | 'fee';
    selector: string;
    signature: string;
    token: string;
    party: { check: string; name: string; expected: string; wrong: string };
    amount: { expected: bigint; wrong: string };
  },
): void {
  if (!sameAddress(call.target, spec.token))
    fail(`${spec.id}.target`, `${spec.id} is not on the source token`, spec.token, call.target);
  const body = call.data.slice(2);
  if (body.length !== 136 || !body.startsWith(spec.selector)) {
    fail(`${spec.id}.encoding`, `the call is not a canonically encoded ${spec.signature}`);
    return;
  }
  const party = wordAddress(argWord(body, 0));
  if (party === undefined) fail(`${spec.id}.encoding`, `${spec.party.name} is not a clean address word`);
  else if (!sameAddress(party, spec.party.expected))
    fail(spec.party.check, spec.party.wrong, spec.party.expected, party);
  if (argWord(body, 1) !== uintWord(spec.amount.expected)) {
    fail(`${spec.id}.amount`, spec.amount.wrong, spec.amount.expected, wordUint(argWord(body, 1)));
  }
}

export interface DepositFacts {
  fn: 'deposit' | 'depositV3';
  suffix: Hex | null;
  exclusiveRelayer: Address | null;
  quoteTimestamp: bigint;
  fillDeadline: bigint;
}

/** What the deposit is checked against. */
interface DepositContext {
  fail: Fail;
  route: BridgeRoute;
  wallet: string;
  amountInRaw: bigint;
  amountOutRaw: bigint;
  nowSec: bigint;
  /** The latest time the deposit can be submitted. */
  expiresAtSec: bigint;
  allowSuffix: boolean;
}

/** The deposit's arguments by index, each a 64-digit hex word. */
type Words = (index: number) => string;

/** The Across deposit: bytes32 `deposit` and address `depositV3` share one body layout. */
export function checkDeposit(
  call: { target: string; data: string },
  context: DepositContext,
): DepositFacts | undefined {
  const { fail, route } = context;
  if (!sameAddress(call.target, route.targets.bridge))
    fail('deposit.target', "the deposit is not on the route's bridge", route.targets.bridge, call.target);
  const body = call.data.slice(2);
  const selector = body.slice(0, 8);
  const fn =
    selector === SELECTOR.deposit ? 'deposit' : selector === SELECTOR.depositV3 ? 'depositV3' : undefined;
  if (!fn) {
    fail(
      'deposit.selector',
      'the second call is not an Across deposit or depositV3',
      `0x${SELECTOR.deposit} or 0x${SELECTOR.depositV3}`,
      `0x${selector}`,
    );
    return undefined;
  }
  const canonicalLength = 8 + 13 * 64;
  if (body.length < canonicalLength) {
    fail('deposit.encoding', 'the deposit call data is shorter than its arguments');
    return undefined;
  }
  const extra = body.slice(canonicalLength);
  let suffix: Hex | null = null;
  if (extra) {
    if (context.allowSuffix && INTEGRATOR_SUFFIX.test(extra)) suffix = `0x${extra}`;
    else
      fail(
        'deposit.encoding',
        context.allowSuffix
          ? 'bytes after the deposit are not an integrator tag'
          : 'bytes after the deposit arguments',
        '',
        `0x${extra}`,
      );
  }
  const word = (index: number) => argWord(body, index);
  const relayer = checkDepositArguments(word, context);
  const { quoteTimestamp, fillDeadline } = checkDepositTiming(word, context);
  return {
    fn,
    suffix,
    exclusiveRelayer: relayer && word(7) !== ZERO_WORD ? relayer : null,
    quoteTimestamp,
    fillDeadline,
  };
}

/** The deposit's parties, tokens, amounts and destination; returns the exclusive relayer's word read. */
function checkDepositArguments(word: Words, context: DepositContext): Address | undefined {
  const { fail, route, wallet } = context;
  const address = (index: number, check: string, name: string, expected: string) => {
    const value = wordAddress(word(index));
    if (value === undefined) fail('deposit.encoding', `${name} is not a clean address word`);
    else if (!sameAddress(value, expected))
      fail(check, `${name} is not the expected address`, expected, value);
  };
  address(0, 'deposit.depositor', 'depositor', wallet);
  address(1, 'deposit.recipient', 'recipient', wallet);
  address(2, 'deposit.inputToken', 'inputToken', route.from.contractAddress);
  address(3, 'deposit.outputToken', 'outputToken', route.to.contractAddress);
  if (word(4) !== uintWord(context.amountInRaw))
    fail(
      'deposit.inputAmount',
      'the deposit is not the quoted input amount',
      context.amountInRaw,
      wordUint(word(4)),
    );
  if (word(5) !== uintWord(context.amountOutRaw))
    fail(
      'deposit.outputAmount',
      'the deposit is not the quoted output amount',
      context.amountOutRaw,
      wordUint(word(5)),
    );
  if (wordUint(word(6)) !== BigInt(route.to.chainId)) {
    fail(
      'deposit.destinationChain',
      'the deposit goes to another chain',
      route.to.chainId,
      wordUint(word(6)),
    );
  }
  const relayer = wordAddress(word(7));
  if (relayer === undefined) fail('deposit.encoding', 'exclusiveRelayer is not a clean address word');
  return relayer;
}

/**
 * The deposit's times and message: a quote timestamp the SpokePool takes now, a fill deadline that
 * leaves a relayer time to fill after the latest the deposit can land, exclusivity that ends well
 * before it, and no message.
 */
function checkDepositTiming(
  word: Words,
  context: DepositContext,
): { quoteTimestamp: bigint; fillDeadline: bigint } {
  const { fail } = context;
  const uint32 = (index: number, name: string) => {
    const value = wordUint(word(index));
    if (value > MAX_UINT32) fail('deposit.encoding', `${name} is not a uint32`);
    return value;
  };
  const quoteTimestamp = uint32(8, 'quoteTimestamp');
  const fillDeadline = uint32(9, 'fillDeadline');
  const exclusivity = uint32(10, 'exclusivityParameter');
  if (word(11) !== uintWord(0x180n) || word(12) !== ZERO_WORD) {
    fail('deposit.message', 'the deposit carries a message (or a non-canonical one)');
  }
  if (exclusivity !== 0n && word(7) === ZERO_WORD) {
    fail('deposit.exclusivity', 'exclusivity is set without an exclusive relayer: the deposit would revert');
  }
  if (fillDeadline <= context.nowSec)
    fail('deposit.fillDeadline', 'the fill deadline has passed', `after ${context.nowSec}`, fillDeadline);
  // The SpokePool takes no deposit before its quote timestamp: one in the future holds the signed
  // operation back until then, however long the quote claims to last.
  const pricedBy =
    // biome-ignore lint/complexity/useMathMinMax: bigint operands; Math.min takes numbers only.
    context.nowSec + CLOCK_SKEW_SEC < context.expiresAtSec
      ? context.nowSec + CLOCK_SKEW_SEC
      : context.expiresAtSec;
  if (quoteTimestamp > pricedBy) {
    fail(
      'deposit.quoteTimestamp',
      `the quote timestamp is in the future (more than ${CLOCK_SKEW_SEC} s, or after the quote expires): the deposit could not land before`,
      `at most ${pricedBy}`,
      quoteTimestamp,
    );
  }
  // The quote's expiry binds only an honest service: the SpokePool takes the deposit until the
  // quote timestamp is an hour old, so the fill window is counted from the latest it can land.
  const latestDeposit =
    // biome-ignore lint/complexity/useMathMinMax: bigint operands; Math.max takes numbers only.
    quoteTimestamp + QUOTE_TIME_BUFFER_SEC > context.expiresAtSec
      ? quoteTimestamp + QUOTE_TIME_BUFFER_SEC
      : context.expiresAtSec;
  // A deposit nobody may fill still costs the gas fee, and the funds wait hours for a refund.
  const fillFrom = latestDeposit + FILL_MARGIN_SEC;
  if (fillDeadline < fillFrom) {
    fail(
      'deposit.fillDeadline',
      `the fill deadline leaves less than ${FILL_MARGIN_SEC} s to fill after the latest the deposit can land (the quote's expiry, or its timestamp plus ${QUOTE_TIME_BUFFER_SEC} s)`,
      `at least ${fillFrom}`,
      fillDeadline,
    );
  }
  if (exclusivity !== 0n && word(7) !== ZERO_WORD) {
    // Across reads a small parameter as an offset from the deposit time, a large one as a timestamp.
    const exclusiveUntil =
      exclusivity <= MAX_EXCLUSIVITY_PERIOD_SEC ? latestDeposit + exclusivity : exclusivity;
    if (exclusiveUntil + FILL_MARGIN_SEC > fillDeadline) {
      fail(
        'deposit.exclusivity',
        `only the exclusive relayer may fill until less than ${FILL_MARGIN_SEC} s before the fill deadline`,
        `until at most ${fillDeadline - FILL_MARGIN_SEC}`,
        exclusiveUntil,
      );
    }
  }
  return { quoteTimestamp, fillDeadline };
}

/** A call of the batch as read: its value a number, its data lowercase. */
export interface ReadCall {
  target: string;
  value: bigint;
  data: string;
}

/** The route's tokens as the well-known table knows them, and one asset on both sides. */
export function checkRouteTokens(
  route: BridgeRoute,
  tokens: TokenIndex,
  fail: Fail,
): { sourceToken: KnownToken | undefined; destinationToken: KnownToken | undefined } {
  const sourceToken = checkToken(fail, 'source', route.from, tokens);
  const destinationToken = checkToken(fail, 'destination', route.to, tokens);
  // The quote is checked one for one (output = amount less fee): across two assets that prices
  // 1 WETH at 1 USDC, and Across repays the relayer in the input token whatever it delivered.
  const sourceNames = assetNames(route.from, sourceToken);
  const destinationNames = assetNames(route.to, destinationToken);
  if (!sourceNames.some((name) => destinationNames.includes(name))) {
    fail(
      'route.asset',
      'the route delivers another token than it takes, but the quote is checked one for one',
      sourceNames.join(' or '),
      destinationNames.join(' or '),
    );
  }
  return { sourceToken, destinationToken };
}

/**
 * User operation, its call data: exactly `executeBatch` of the listed calls, word for word. Returns
 * the calls as read and, when it matches, the call data (lowercase), known then to be clean hex.
 */
export function readCalls(
  bundle: BridgeBundle,
  fail: Fail,
): { calls: ReadCall[]; callData: string | undefined } {
  const calls: ReadCall[] = [];
  bundle.calls.forEach((call, index) => {
    // Hex already (the schema checked it): read, not checked again.
    const value = call.value === '0x' ? 0n : BigInt(call.value);
    if (value !== 0n) fail('calls.value', `call ${index + 1} sends native value`, '0', call.value);
    if (call.data.length % 2 !== 0) fail('calls.data', `call ${index + 1} data is not whole bytes`);
    calls.push({ target: call.target, value, data: call.data.toLowerCase() });
  });
  const callData =
    typeof bundle.userOp.callData === 'string' ? bundle.userOp.callData.toLowerCase() : undefined;
  if (callData !== undefined && isExecuteBatchOf(callData, calls)) return { calls, callData };
  const hooks = callData?.slice(2, 10) === SELECTOR.executeUserOp;
  fail(
    'userOp.callData',
    hooks
      ? 'the call data goes through executeUserOp (execution hooks), not executeBatch'
      : 'the operation does not execute exactly the listed calls',
  );
  return { calls, callData: undefined };
}
