import { CallbackParseError } from '../errors/callback-errors.js';
import { type BridgeTransfer, bridgeSchemas } from '../schemas/bridge.js';
import { compiled } from '../schemas/common.js';
import { formatIssues, toIssues } from '../schemas/issues.js';
import { type BridgeCallbackKind, CALLBACK_KINDS, TRANSFER_STATES } from '../schemas/states.js';

export { type BridgeCallbackKind, CALLBACK_KINDS } from '../schemas/states.js';

const KINDS: ReadonlySet<string> = new Set(CALLBACK_KINDS);

/** What a callback body turned out to be. */
export type ParsedCallback =
  /** A bridge transfer entering a state that sends a callback. */
  | { kind: BridgeCallbackKind; transfer: BridgeTransfer }
  /**
   * A bridge transfer in a state without a known callback kind: `pending` and `expired` send none,
   * and a state added by the service later is not known yet. Reported, not dispatched as a kind.
   */
  | { kind: 'unexpected_state'; transfer: BridgeTransfer }
  /** Not a bridge transfer: portfolio callbacks share the endpoint. Passed on as it came. */
  | { kind: 'unknown'; body: unknown };

function decode(body: unknown): unknown {
  if (typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer) {
    const text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: false }).decode(body);
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new CallbackParseError({ message: 'The callback body is not JSON', issues: [], cause: error });
    }
  }
  return body;
}

/** The transfer schema of `transfers.get`, compiled (see `compiled`). */
function transferSchema(strict: boolean): ReturnType<typeof bridgeSchemas>['transfer'] {
  return compiled(bridgeSchemas(strict).transfer);
}

const STATES: ReadonlySet<string> = new Set(TRANSFER_STATES);
/** Fields only a bridge transfer carries; portfolio callbacks share the endpoint but not these. */
const BRIDGE_FIELDS = ['transferId', 'routeId', 'providerRef', 'srcTxHash', 'source', 'destination'] as const;

/**
 * Whether a body claims to be a bridge transfer. One that claims it and is broken must be refused
 * (answered 400), not passed on as `unknown`: a 200 would acknowledge a delivery nobody handled.
 */
function looksLikeBridgeTransfer(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  // A state added by the service later still counts when the body has the transfer's own ids.
  if ('transferId' in record && 'routeId' in record && 'status' in record) return true;
  return (
    typeof record.status === 'string' &&
    STATES.has(record.status) &&
    BRIDGE_FIELDS.some((field) => field in record)
  );
}

/**
 * Reads a callback body (the raw text, bytes, or an already parsed object). A bridge transfer is
 * validated with the same schema as `transfers.get`; its kind follows from its status.
 *
 * A body counts as a bridge transfer when it has `transferId`, `routeId` and `status`, or when its
 * `status` is one of the specified transfer states and it carries any of `transferId`, `routeId`,
 * `providerRef`, `srcTxHash`, `source` or `destination`. Ids are 1 to 128 characters of
 * `A-Z a-z 0-9 _ : . -`.
 *
 * @throws CallbackParseError for broken JSON, a bridge transfer with missing or mistyped fields, or
 *   a value whose reads throw (the original error in `cause`).
 * @example
 * const parsed = parseBridgeCallback(await request.text());
 * if (parsed.kind === 'bridge_transfer_delivered') markDelivered(parsed.transfer);
 */
export function parseBridgeCallback(body: unknown, options: { strict?: boolean } = {}): ParsedCallback {
  try {
    return parse(body, options);
  } catch (error) {
    if (error instanceof CallbackParseError) throw error;
    // A Proxy or a throwing getter: what the caller handed over cannot be read.
    throw new CallbackParseError({
      message: 'The callback body could not be read: reading it threw',
      issues: [],
      cause: error,
    });
  }
}

function parse(body: unknown, options: { strict?: boolean }): ParsedCallback {
  const value = decode(body);
  if (!looksLikeBridgeTransfer(value)) return { kind: 'unknown', body: value };
  const result = transferSchema(options.strict ?? false).safeParse(value);
  if (!result.success) {
    const issues = toIssues(result.error);
    throw new CallbackParseError({
      message: `The bridge callback does not fit a transfer: ${formatIssues(issues.slice(0, 3))}`,
      issues,
    });
  }
  const transfer = result.data;
  const kind = `bridge_transfer_${transfer.status}`;
  return KINDS.has(kind)
    ? { kind: kind as BridgeCallbackKind, transfer }
    : { kind: 'unexpected_state', transfer };
}
