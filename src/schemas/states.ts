/**
 * The transfer state machine, written once: the specification's state table ("States and
 * transitions"), one row per state in the order a transfer can pass them. The state list, the
 * final states, the order used by "never backwards" decisions, the callback kinds and the
 * simulator's transitions are all derived from it.
 *
 * - `rank`: where the state sits on the way to a final one; states on one rank are alternatives.
 * - `final`: the transfer never changes after it.
 * - `callback`: entering it sends the callback kind `bridge_transfer_<state>`.
 * - `next`: the states the simulator moves it to. The specification leaves transitions open; these
 *   follow the meanings of the states, and are checked against the state names.
 */
const TRANSFER_STATE_TABLE = [
  { state: 'pending', rank: 0, final: false, callback: false, next: ['submitted', 'expired'] },
  { state: 'submitted', rank: 1, final: false, callback: true, next: ['source_confirmed', 'failed'] },
  { state: 'source_confirmed', rank: 2, final: false, callback: true, next: ['delivered', 'refund_pending'] },
  { state: 'delivered', rank: 4, final: true, callback: true, next: [] },
  { state: 'refund_pending', rank: 3, final: false, callback: true, next: ['refunded'] },
  { state: 'refunded', rank: 4, final: true, callback: true, next: [] },
  { state: 'failed', rank: 4, final: true, callback: true, next: [] },
  { state: 'expired', rank: 4, final: true, callback: false, next: [] },
] as const satisfies readonly StateRow[];

interface StateRow {
  state: string;
  rank: number;
  final: boolean;
  callback: boolean;
  next: readonly string[];
}

type Table = typeof TRANSFER_STATE_TABLE;
type StateNames<Rows extends readonly StateRow[]> = { readonly [I in keyof Rows]: Rows[I]['state'] };
type CallbackKinds<Rows extends readonly unknown[]> = Rows extends readonly [infer Row, ...infer Rest]
  ? Row extends { state: infer State extends string; callback: true }
    ? [`bridge_transfer_${State}`, ...CallbackKinds<Rest>]
    : CallbackKinds<Rest>
  : [];

/** A transfer state the specification names. */
export type KnownTransferStatus = Table[number]['state'];
/** A transfer state; a state added by the service later arrives as its string. */
export type TransferStatus = KnownTransferStatus | (string & {});
/** A callback kind: `bridge_transfer_<status>` for each state that sends a callback. */
export type BridgeCallbackKind = CallbackKinds<Table>[number];

// A next state that is not in the table fails to compile here.
TRANSFER_STATE_TABLE satisfies readonly { next: readonly KnownTransferStatus[] }[];

/** Every transfer state the specification names, in the order a transfer can pass them. */
export const TRANSFER_STATES = TRANSFER_STATE_TABLE.map((row) => row.state) as unknown as StateNames<Table>;

/** States after which a transfer never changes. */
export const FINAL_STATES: ReadonlySet<string> = new Set(
  TRANSFER_STATE_TABLE.filter((row) => row.final).map((row) => row.state),
);

/** The callback kinds of the specification, one per state that sends a callback. */
export const CALLBACK_KINDS = TRANSFER_STATE_TABLE.filter((row) => row.callback).map(
  (row) => `bridge_transfer_${row.state}`,
) as unknown as Readonly<CallbackKinds<Table>>;

/** The states whose entry sends a callback (`bridge_transfer_<state>`). */
export const CALLBACK_STATES: ReadonlySet<string> = new Set(
  TRANSFER_STATE_TABLE.filter((row) => row.callback).map((row) => row.state),
);

/** The states the simulator may move a transfer to from each state; final states have none. */
export const TRANSITIONS: Readonly<Record<string, readonly KnownTransferStatus[]>> = Object.fromEntries(
  TRANSFER_STATE_TABLE.map((row) => [row.state, row.next]),
);

const RANKS: ReadonlyMap<string, number> = new Map(TRANSFER_STATE_TABLE.map((row) => [row.state, row.rank]));

/**
 * The order of a state for "never backwards" decisions; unknown states rank as undefined.
 *
 * @example
 * stateRank('source_confirmed') < stateRank('delivered'); // true
 */
export function stateRank(status: TransferStatus): number | undefined {
  return RANKS.get(status);
}
